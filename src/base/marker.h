/* SPDX-License-Identifier: Apache-2.0 */
/* marker.h - the exactly-once marker: how sluice names its own Slurm jobs,
 * the launch_id rule, SHA-256 hex and HMAC-SHA256 hex (internal).
 *
 * A launch's jobs carry two marks by which the supervisor finds them again
 * after a crash, and tells them from anybody else's:
 *   job name  "<prefix>-<site[:32]>-<sha8(launch_id)>.<attempt>"
 *   comment   "sluice:<launch_id>:<attempt>"
 * The render stores both at accept time; the launcher rebuilds them for
 * every attempt and compares what Slurm reports with them.  Both take them
 * from here, so the two can never drift apart.
 *
 * Notes:
 * - sha8 is the first 4 bytes of SHA-256 in lower-case hex; it also names
 *   a launch's staging directory.
 * - A launch_id is 1 to 128 characters from [A-Za-z0-9._-]: the request
 *   parser, the store and the HTTP API all check it with
 *   marker_launch_id_ok(), which also takes a tenant's key (below).
 * - Everything here is pure and thread-safe.
 */
#ifndef SLUICE_MARKER_H
#define SLUICE_MARKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/error.h>

#define MARKER_SHA256_LEN 32
#define MARKER_SHA256_HEX_SIZE 65 /* 64 hex digits + NUL */
#define MARKER_SHA8_SIZE 9        /* 8 hex digits + NUL */

/* The job name's parts when the caller gives none. */
#define MARKER_DEFAULT_PREFIX "sluice"
#define MARKER_DEFAULT_SITE "default"

#define MARKER_LAUNCH_ID_MAX 128
/* What a bad launch_id is told, after "<field>: ". */
#define MARKER_LAUNCH_ID_RULE "expected 1 to 128 characters from [A-Za-z0-9._-], not . or .."

/* SHA-256 of data[0..len) into md.  False (md all zero) when OpenSSL
 * fails, which it does not for SHA-256 short of running out of memory. */
bool marker_sha256(const void *data, size_t len, unsigned char md[MARKER_SHA256_LEN]);

/* Lower-case hex SHA-256 of the string `text` into hex (64 digits + NUL).
 * False (hex "") when marker_sha256() fails. */
bool marker_sha256_hex(const char *text, char hex[MARKER_SHA256_HEX_SIZE]);

/* HMAC-SHA256 (RFC 2104, FIPS 198-1) of data[0..len) under key[0..key_len)
 * in lower-case hex into hex (64 digits + NUL): the webhook signature
 * (docs/api.md, "Webhooks").  False (hex "") for a NULL key or data or
 * when OpenSSL fails.  The key is never copied or logged; the caller wipes
 * its own copy. */
bool marker_hmac_sha256_hex(const void *key,
                            size_t key_len,
                            const void *data,
                            size_t len,
                            char hex[MARKER_SHA256_HEX_SIZE]);

/* The first 8 hex digits of sha256(text) into hex ("00000000" in the
 * failure case of marker_sha256()). */
void marker_sha8(const char *text, char hex[MARKER_SHA8_SIZE]);

/* The marker's job name "<prefix>-<site[:32]>-<sha8(launch_id)>.<attempt>"
 * into buf (size bytes; buf may be NULL when size is 0).  A NULL or empty
 * prefix is MARKER_DEFAULT_PREFIX, a NULL site MARKER_DEFAULT_SITE and a
 * NULL launch_id "".  Returns the length of the whole name (snprintf
 * semantics: truncated when it is >= size). */
int marker_job_name(char *buf,
                    size_t size,
                    const char *prefix,
                    const char *site,
                    const char *launch_id,
                    uint32_t attempt);

/* The marker's comment "sluice:<launch_id>:<attempt>" into buf, as
 * marker_job_name() (a NULL launch_id is ""). */
int marker_comment(char *buf, size_t size, const char *launch_id, uint32_t attempt);

/* The job name and comment as new strings (caller frees with free());
 * NULL when out of memory. */
char *
marker_job_name_dup(const char *prefix, const char *site, const char *launch_id, uint32_t attempt);
char *marker_comment_dup(const char *launch_id, uint32_t attempt);

/* The longest tenant name (site/config_tenants.c). */
#define MARKER_TENANT_MAX 32

/* Launch keys.  A launch is stored, marked and staged under its key: the
 * caller's launch_id for the default tenant, "<tenant>~<launch_id>" for a
 * tenant of the site's `tenants:` ('~' is in no launch_id, so the two never
 * meet, and two tenants may use the same launch_id).  A key is at most
 * MARKER_LAUNCH_ID_MAX characters in all. */

/* True when id[0..len) is a valid key: a launch_id (1 to
 * MARKER_LAUNCH_ID_MAX characters from [A-Za-z0-9._-], not "." or "..") or
 * "<tenant>~<launch_id>" with a tenant name of [a-z0-9][a-z0-9-]{0,31}.
 * id need not be NUL-terminated.  The parser and the store check with it. */
bool marker_launch_id_ok(const char *id, size_t len);
/* True when t[0..len) is a tenant's name: [a-z0-9][a-z0-9-]{0,31} (the
 * rule of the site file's `tenants:`, the store's filter and the keys). */
bool marker_tenant_name_ok(const char *t, size_t len);
/* True when id[0..len) is a launch_id without a tenant: what an API caller
 * may send (the server qualifies it with the caller's tenant). */
bool marker_bare_id_ok(const char *id, size_t len);
/* The tenant part of `key` into out[cap] ("" for the default tenant);
 * returns its length. */
size_t marker_key_tenant(const char *key, char *out, size_t cap);
/* The launch_id part of `key` (borrowed from it). */
const char *marker_key_id(const char *key);
/* The key of `id` for `tenant` (NULL, "" or "default": the id itself), as
 * snprintf does. */
int marker_key_make(char *buf, size_t size, const char *tenant, const char *id);

/* SLUICE_OK for a valid NUL-terminated launch_id; else SLUICE_EINVAL with
 * "<field>: " MARKER_LAUNCH_ID_RULE (field names the input, such as
 * "launch_id" or "depends_on.launch_id"). */
sluice_err marker_check_launch_id(const char *field, const char *id, sluice_error_t *err);

#endif /* SLUICE_MARKER_H */
