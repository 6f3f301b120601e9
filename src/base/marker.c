/* SPDX-License-Identifier: Apache-2.0 */
/* marker.c - the exactly-once marker (job name + comment), the launch_id
 * rule, SHA-256 hex and HMAC-SHA256 hex: the one implementation of each
 * (marker.h), and the only file that includes OpenSSL.
 */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "marker.h"

static const char hex_digits[] = "0123456789abcdef";

/* SHA-256 fetched from OpenSSL's default provider once per process: with
 * EVP_sha256() every digest looks the implementation up again (about half
 * the cost of hashing a request).  Never freed: it lives as long as the
 * process.  NULL when the fetch failed: EVP_sha256() then, as before. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
    pthread_once(&sha256_once, sha256_fetch);
    return sha256_md != NULL ? sha256_md : EVP_sha256();
}

bool marker_sha256(const void *data, size_t len, unsigned char md[MARKER_SHA256_LEN])
{
    unsigned char full[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (EVP_Digest(data, len, full, &n, sha256(), NULL) != 1 || n != MARKER_SHA256_LEN) {
        memset(md, 0, MARKER_SHA256_LEN);
        return false;
    }
    memcpy(md, full, MARKER_SHA256_LEN);
    return true;
}

/* Lower-case hex of md[0..n) into out (2n digits + NUL). */
static void to_hex(const unsigned char *md, size_t n, char *out)
{
    size_t i;

    for (i = 0; i < n; i++) {
        out[2 * i] = hex_digits[md[i] >> 4];
        out[2 * i + 1] = hex_digits[md[i] & 15];
    }
    out[2 * n] = '\0';
}

bool marker_sha256_hex(const char *text, char hex[MARKER_SHA256_HEX_SIZE])
{
    unsigned char md[MARKER_SHA256_LEN];

    if (!marker_sha256(text, strlen(text), md)) {
        hex[0] = '\0';
        return false;
    }
    to_hex(md, sizeof(md), hex);
    return true;
}

bool marker_hmac_sha256_hex(
    const void *key, size_t key_len, const void *data, size_t len, char hex[MARKER_SHA256_HEX_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    hex[0] = '\0';
    if (key == NULL || data == NULL || key_len > (size_t)INT_MAX)
        return false;
    /* HMAC() accepts a NULL key only with length 0; give it a real pointer. */
    if (HMAC(EVP_sha256(), key_len > 0 ? key : "", (int)key_len, data, len, md, &n) == NULL ||
        n != MARKER_SHA256_LEN)
        return false;
    to_hex(md, MARKER_SHA256_LEN, hex);
    return true;
}

void marker_sha8(const char *text, char hex[MARKER_SHA8_SIZE])
{
    unsigned char md[MARKER_SHA256_LEN];

    (void)marker_sha256(text, strlen(text), md); /* zeros on failure */
    to_hex(md, 4, hex);
}

int marker_job_name(char *buf,
                    size_t size,
                    const char *prefix,
                    const char *site,
                    const char *launch_id,
                    uint32_t attempt)
{
    char h[MARKER_SHA8_SIZE];

    marker_sha8(launch_id != NULL ? launch_id : "", h);
    return snprintf(buf, size, "%s-%.32s-%s.%" PRIu32,
                    prefix != NULL && prefix[0] != '\0' ? prefix : MARKER_DEFAULT_PREFIX,
                    site != NULL ? site : MARKER_DEFAULT_SITE, h, attempt);
}

int marker_comment(char *buf, size_t size, const char *launch_id, uint32_t attempt)
{
    return snprintf(buf, size, "sluice:%s:%" PRIu32, launch_id != NULL ? launch_id : "", attempt);
}

char *
marker_job_name_dup(const char *prefix, const char *site, const char *launch_id, uint32_t attempt)
{
    int n = marker_job_name(NULL, 0, prefix, site, launch_id, attempt);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;

    if (s != NULL)
        marker_job_name(s, (size_t)n + 1, prefix, site, launch_id, attempt);
    return s;
}

char *marker_comment_dup(const char *launch_id, uint32_t attempt)
{
    int n = marker_comment(NULL, 0, launch_id, attempt);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;

    if (s != NULL)
        marker_comment(s, (size_t)n + 1, launch_id, attempt);
    return s;
}

/* [A-Za-z0-9._-]{1,}, not "." or ".." (the length is the caller's). */
static bool bare_ok(const char *id, size_t len)
{
    size_t i;

    if (id == NULL || len == 0)
        return false;
    for (i = 0; i < len; i++) {
        char ch = id[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-'))
            return false;
    }
    /* "." and ".." would name the artifacts directory itself or the store
     * directory above it (<store>/artifacts/<launch_id>). */
    return !(id[0] == '.' && (len == 1 || (len == 2 && id[1] == '.')));
}

bool marker_tenant_name_ok(const char *t, size_t len)
{
    size_t i;

    if (len == 0 || len > MARKER_TENANT_MAX ||
        !((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= '0' && t[0] <= '9')))
        return false;
    for (i = 1; i < len; i++)
        if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9') || t[i] == '-'))
            return false;
    return true;
}

bool marker_bare_id_ok(const char *id, size_t len)
{
    return len <= MARKER_LAUNCH_ID_MAX && bare_ok(id, len);
}

bool marker_launch_id_ok(const char *id, size_t len)
{
    const char *tilde;

    if (id == NULL || len == 0 || len > MARKER_LAUNCH_ID_MAX)
        return false;
    tilde = memchr(id, '~', len);
    if (tilde == NULL)
        return bare_ok(id, len);
    return marker_tenant_name_ok(id, (size_t)(tilde - id)) &&
           bare_ok(tilde + 1, len - (size_t)(tilde - id) - 1);
}

size_t marker_key_tenant(const char *key, char *out, size_t cap)
{
    const char *tilde = key != NULL ? strchr(key, '~') : NULL;
    size_t n = tilde != NULL ? (size_t)(tilde - key) : 0;

    if (cap == 0)
        return n;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, key, n);
    out[n] = '\0';
    return n;
}

const char *marker_key_id(const char *key)
{
    const char *tilde = key != NULL ? strchr(key, '~') : NULL;

    return tilde != NULL ? tilde + 1 : key;
}

int marker_key_make(char *buf, size_t size, const char *tenant, const char *id)
{
    if (tenant == NULL || tenant[0] == '\0' || strcmp(tenant, "default") == 0)
        return snprintf(buf, size, "%s", id);
    return snprintf(buf, size, "%s~%s", tenant, id);
}

sluice_err marker_check_launch_id(const char *field, const char *id, sluice_error_t *err)
{
    if (id == NULL || !marker_launch_id_ok(id, strnlen(id, MARKER_LAUNCH_ID_MAX + 1)))
        return sluice_errorf(err, SLUICE_EINVAL, "%s: " MARKER_LAUNCH_ID_RULE,
                             field != NULL ? field : "launch_id");
    return SLUICE_OK;
}
