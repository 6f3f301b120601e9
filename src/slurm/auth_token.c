/* SPDX-License-Identifier: Apache-2.0 */
/* auth_token.c - token text and secret files: the base64url + JSON decoder
 * of a JWT's header and claims (no verification), the user a token names
 * (`sun`, else `username`), the token file syntax
 * (raw token or SLURM_JWT=<token>), and reading token and key files with
 * their permission rules.
 *
 * Notes:
 * - Claims are read without verifying the signature (sluice_token_inspect,
 *   expiry): the client may not hold the key.  The decoder is our own
 *   base64url + jansson code, not libjwt's, so that it can be fuzzed in
 *   isolation.
 * - Secrets never reach a log line or an error text: messages name the
 *   file or the claim, never the value.  Buffers holding secrets are wiped
 *   before they are freed (wipe_free()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sluice/auth.h>
#include <sluice/log.h>

#include "auth.h"

#define MAX_TOKEN_FILE (64 * 1024)

/* ---- base64url and claim decoding ------------------------------------ */

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-' || c == '+')
        return 62;
    if (c == '_' || c == '/')
        return 63;
    return -1;
}

sluice_err auth_b64url_decode(const char *in, size_t len, char **out, size_t *out_len)
{
    char *dst;
    size_t i, n = 0;
    unsigned acc = 0;
    int bits = 0;

    while (len > 0 && in[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return SLUICE_EINVAL;
    dst = malloc(len * 3 / 4 + 2);
    if (dst == NULL)
        return SLUICE_ENOMEM;
    for (i = 0; i < len; i++) {
        int v = b64val((unsigned char)in[i]);
        if (v < 0) {
            free(dst);
            return SLUICE_EINVAL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            dst[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    dst[n] = '\0';
    *out = dst;
    *out_len = n;
    return SLUICE_OK;
}

static int is_token_char(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '=';
}

/* A compact JWS: three base64url parts, the first two non-empty. */
int auth_token_shaped(const char *s, size_t len)
{
    size_t i, dots = 0, first = 0, second = 0;

    if (len == 0)
        return 0;
    for (i = 0; i < len; i++) {
        if (!is_token_char((unsigned char)s[i]))
            return 0;
        if (s[i] == '.') {
            dots++;
            if (dots == 1)
                first = i;
            else if (dots == 2)
                second = i;
        }
    }
    return dots == 2 && first > 0 && second > first + 1;
}

static sluice_err
decode_part(const char *p, size_t n, const char *what, json_t **out, sluice_error_t *err)
{
    char *raw = NULL;
    size_t raw_len = 0;
    json_error_t jerr;
    json_t *j;
    sluice_err rc;

    if ((rc = auth_b64url_decode(p, n, &raw, &raw_len)) != SLUICE_OK)
        return sluice_errorf(err, rc, "token: %s is not valid base64url", what);
    j = json_loadb(raw, raw_len, JSON_REJECT_DUPLICATES, &jerr);
    free(raw);
    if (j == NULL || !json_is_object(j)) {
        json_decref(j);
        return sluice_errorf(err, SLUICE_EINVAL, "token: %s is not a JSON object", what);
    }
    *out = j;
    return SLUICE_OK;
}

sluice_err
auth_decode(const char *token, json_t **header_out, json_t **claims_out, sluice_error_t *err)
{
    const char *d1, *d2;
    json_t *h = NULL;
    json_t *c = NULL;
    sluice_err rc;

    if (token == NULL || !auth_token_shaped(token, strlen(token)))
        return sluice_errorf(err, SLUICE_EINVAL,
                             "token: not a JWT (want three base64url parts separated by '.')");
    d1 = strchr(token, '.');
    d2 = strchr(d1 + 1, '.');
    if ((rc = decode_part(token, (size_t)(d1 - token), "header", &h, err)) != SLUICE_OK)
        goto out;
    if ((rc = decode_part(d1 + 1, (size_t)(d2 - d1 - 1), "claims", &c, err)) != SLUICE_OK)
        goto out;
    if (header_out != NULL) {
        *header_out = h;
        h = NULL;
    }
    if (claims_out != NULL) {
        *claims_out = c;
        c = NULL;
    }
out:
    json_decref(h);
    json_decref(c);
    return rc;
}

int auth_claim_int(const json_t *claims, const char *name, int64_t *out)
{
    json_t *v = json_object_get(claims, name);

    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 1;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d > -9.2e18 && d < 9.2e18) {
            *out = (int64_t)d;
            return 1;
        }
    }
    return 0;
}

/* A user name as a claim may carry it: printable, no spaces, short. */
static bool plausible_user(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > SLUICE_TOKEN_USER_MAX - 1)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == 0x7f || c == ':' || c == '/')
            return false;
    }
    return true;
}

sluice_err sluice_token_user(
    const char *token, char *user, size_t cap, const char **claim_out, sluice_error_t *err)
{
    static const char *const claims[] = {"sun", "username"};
    json_t *c = NULL;
    sluice_err rc;

    if (user == NULL || cap == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "token: no output");
    user[0] = '\0';
    if ((rc = auth_decode(token, NULL, &c, err)) != SLUICE_OK)
        return rc;
    for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
        const json_t *v = json_object_get(c, claims[i]);
        if (v == NULL)
            continue;
        if (!json_is_string(v) || !plausible_user(json_string_value(v)) ||
            strlen(json_string_value(v)) >= cap) {
            json_decref(c);
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "token: the `%s` claim is not a user name (a non-empty string "
                                 "without spaces, at most %d bytes)",
                                 claims[i], SLUICE_TOKEN_USER_MAX - 1);
        }
        snprintf(user, cap, "%s", json_string_value(v));
        if (claim_out != NULL)
            *claim_out = claims[i];
        json_decref(c);
        return SLUICE_OK;
    }
    json_decref(c);
    return sluice_errorf(err, SLUICE_ENOTFOUND,
                         "token: names no user (no `sun` or `username` claim)");
}

sluice_err sluice_token_inspect(const char *token, json_t **out, sluice_error_t *err)
{
    json_t *h = NULL;
    json_t *c = NULL;
    json_t *o = NULL;
    sluice_err rc;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "token: no output");
    if ((rc = auth_decode(token, &h, &c, err)) != SLUICE_OK)
        return rc;
    o = json_pack("{s:o s:o}", "header", h, "claims", c);
    if (o == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "token: out of memory");
    *out = o;
    return SLUICE_OK;
}

/* ---- token file text ------------------------------------------------- */

sluice_err sluice_token_parse(const char *text, size_t len, char **out, sluice_error_t *err)
{
    size_t i = 0;
    char *tok;

    if (text == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "token: no input");
    while (i < len) {
        size_t end = i, s, e;
        while (end < len && text[end] != '\n')
            end++;
        s = i;
        e = end;
        while (s < e && (text[s] == ' ' || text[s] == '\t' || text[s] == '\r'))
            s++;
        while (e > s && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r'))
            e--;
        if (e - s >= 7 && memcmp(text + s, "export ", 7) == 0) {
            s += 7;
            while (s < e && text[s] == ' ')
                s++;
        }
        if (e - s >= 10 && memcmp(text + s, "SLURM_JWT=", 10) == 0) {
            s += 10;
            if (e - s >= 2 && (text[s] == '"' || text[s] == '\'') && text[e - 1] == text[s]) {
                s++;
                e--;
            }
        }
        if (e > s && text[s] != '#' && auth_token_shaped(text + s, e - s)) {
            tok = malloc(e - s + 1);
            if (tok == NULL)
                return sluice_errorf(err, SLUICE_ENOMEM, "token: out of memory");
            memcpy(tok, text + s, e - s);
            tok[e - s] = '\0';
            *out = tok;
            return SLUICE_OK;
        }
        i = end + 1;
    }
    return sluice_errorf(err, SLUICE_EINVAL,
                         "token: no JWT found (want the raw token or a line SLURM_JWT=<token>)");
}

/* ---- files and permissions ------------------------------------------- */

static sluice_err
check_perms(const char *path, const struct stat *st, int is_key, int strict, sluice_error_t *err)
{
    uid_t me = geteuid();
    const char *what = is_key ? "key file" : "token file";

    if (!S_ISREG(st->st_mode))
        return sluice_errorf(err, SLUICE_EPERM, "%s %s: not a regular file", what, path);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return sluice_errorf(err, SLUICE_EPERM, "%s %s: writable by group or others (mode %04o)",
                             what, path, (unsigned)(st->st_mode & 07777));
    if (st->st_uid != me && st->st_uid != 0)
        return sluice_errorf(err, SLUICE_EPERM,
                             "%s %s: owned by uid %ld, neither this user (uid %ld) nor root", what,
                             path, (long)st->st_uid, (long)me);
    if (is_key && (st->st_mode & S_IROTH))
        return sluice_errorf(err, SLUICE_EPERM,
                             "key file %s: readable by others (mode %04o); "
                             "whoever reads it can act as any user",
                             path, (unsigned)(st->st_mode & 07777));
    if (st->st_mode & (S_IRGRP | S_IROTH)) {
        if (strict)
            return sluice_errorf(err, SLUICE_EPERM,
                                 "%s %s: readable by group or others (mode %04o) and "
                                 "strict_permissions is set",
                                 what, path, (unsigned)(st->st_mode & 07777));
        sluice_log(SLUICE_LOG_WARNING, "%s %s: readable by group or others (mode %04o)", what, path,
                   (unsigned)(st->st_mode & 07777));
    }
    return SLUICE_OK;
}

static sluice_err read_secret_file(const char *path,
                                   int is_key,
                                   int strict,
                                   char **out,
                                   size_t *len_out,
                                   struct stat *st_out,
                                   sluice_error_t *err)
{
    struct stat st;
    char *data = NULL;
    size_t len = 0;
    sluice_err rc = SLUICE_OK;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return sluice_errorf(err, errno == EACCES ? SLUICE_EPERM : SLUICE_EIO, "%s %s: %s",
                             is_key ? "key file" : "token file", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    if ((rc = check_perms(path, &st, is_key, strict, err)) != SLUICE_OK)
        goto out;
    if (st.st_size > MAX_TOKEN_FILE) {
        rc = sluice_errorf(err, SLUICE_ETOOBIG, "%s: larger than %d bytes", path, MAX_TOKEN_FILE);
        goto out;
    }
    data = malloc(MAX_TOKEN_FILE + 1);
    if (data == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, data + len, MAX_TOKEN_FILE - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = sluice_errorf(err, SLUICE_EIO, "%s: %s", path, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len >= MAX_TOKEN_FILE) {
            rc = sluice_errorf(err, SLUICE_ETOOBIG, "%s: larger than %d bytes", path,
                               MAX_TOKEN_FILE);
            goto out;
        }
    }
    if (len == 0) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "%s: empty", path);
        goto out;
    }
    data[len] = '\0';
    *out = data;
    data = NULL;
    *len_out = len;
    if (st_out != NULL)
        *st_out = st;
out:
    if (data != NULL)
        wipe_free(data, MAX_TOKEN_FILE + 1);
    close(fd);
    return rc;
}

sluice_err auth_load_token_file(
    const char *path, int strict, char **out, struct stat *st_out, sluice_error_t *err)
{
    char *data = NULL;
    size_t len = 0;
    sluice_err rc;

    if ((rc = read_secret_file(path, 0, strict, &data, &len, st_out, err)) != SLUICE_OK)
        return rc;
    rc = sluice_token_parse(data, len, out, err);
    if (rc != SLUICE_OK)
        sluice_error_prefix(err, "token file %s", path);
    wipe_free(data, len);
    return rc;
}

sluice_err
sluice_token_load(const char *path, int strict_permissions, char **out, sluice_error_t *err)
{
    if (path == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "token file: no path");
    return auth_load_token_file(path, strict_permissions, out, NULL, err);
}

sluice_err sluice_key_load(const char *path,
                           int strict_permissions,
                           unsigned char **out,
                           size_t *len_out,
                           sluice_error_t *err)
{
    char *data = NULL;
    size_t len = 0;
    sluice_err rc;

    if (path == NULL || out == NULL || len_out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "key file: no path");
    if ((rc = read_secret_file(path, 1, strict_permissions, &data, &len, NULL, err)) != SLUICE_OK)
        return rc;
    *out = (unsigned char *)data;
    *len_out = len;
    return SLUICE_OK;
}
