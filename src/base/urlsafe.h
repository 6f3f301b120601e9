/* SPDX-License-Identifier: Apache-2.0 */
/* urlsafe.h - a URL as it may be shown: without its password; and what a
 * loopback host is (internal). */
#ifndef SLUICE_BASE_URLSAFE_H
#define SLUICE_BASE_URLSAFE_H

#include <stddef.h>

/* Write `url` into out[size] (always terminated, truncated when longer)
 * with every password removed: the `:password` of the user info
 * (scheme://user:password@host -> scheme://user@host) and the value of a
 * `password=` query parameter (-> `password=REDACTED`).  NULL prints as
 * "(none)".  Returns out. */
char *urlsafe_redact(const char *url, char *out, size_t size);

/* 1 when `url` starts postgresql:// or postgres:// (the store's
 * PostgreSQL backend), else 0. */
int urlsafe_is_postgres(const char *url);

/* 1 when `url` carries a password (in its user info or a `password=` query
 * parameter), else 0. */
int urlsafe_has_password(const char *url);

/* 1 when the URL host h[0..n) is a loopback host, else 0: "localhost"
 * (any case), an IPv4 address in 127.0.0.0/8 written as a dotted quad, or
 * the IPv6 loopback address, with or without its brackets ("[::1]").  The
 * text is not resolved: "127.0.0.1.nip.io" is a name, so not loopback.
 * The one rule of plain http:// for the site file (site/config_check.c),
 * the HTTP client (transport/http.c) and webhook URLs (site/webhook_url.c). */
int urlsafe_host_is_loopback(const char *h, size_t n);

/* The value of one hex digit of a percent escape (0-15), or -1. */
int urlsafe_hex_digit(char ch);

#endif /* SLUICE_BASE_URLSAFE_H */
