/* SPDX-License-Identifier: Apache-2.0 */
/* urlsafe.h - a URL as it may be shown: without its password (internal). */
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

#endif /* SLUICE_BASE_URLSAFE_H */
