/* SPDX-License-Identifier: Apache-2.0 */
/* urlsafe.c - a URL without its password, for logs, errors and `config
 * show`.
 *
 * Notes:
 * - Only the shape scheme://[user[:password]@]host... and a query
 *   `?a=b&password=c` are understood; that is what libpq's URLs allow.  The
 *   user info ends at the last '@' before the first '/' after the host
 *   starts, so a password with '@' or ':' in it is still removed whole.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "urlsafe.h"

#define REDACTED "REDACTED"

/* The user info of `url`: [*start, *end) between "://" and the '@', or 0
 * when there is none. */
static int userinfo(const char *url, const char **start, const char **end)
{
    const char *p = strstr(url, "://"), *host_end, *at = NULL;

    if (p == NULL)
        return 0;
    p += 3;
    host_end = p + strcspn(p, "/?#");
    for (const char *q = p; q < host_end; q++)
        if (*q == '@')
            at = q;
    if (at == NULL)
        return 0;
    *start = p;
    *end = at;
    return 1;
}

/* The value of the first `password=` query parameter: [*start, *end). */
static int query_password(const char *url, const char **start, const char **end)
{
    const char *q = strchr(url, '?');

    while (q != NULL) {
        q++;
        if (strncmp(q, "password=", 9) == 0) {
            *start = q + 9;
            *end = *start + strcspn(*start, "&#");
            return 1;
        }
        q = strchr(q, '&');
    }
    return 0;
}

int urlsafe_is_postgres(const char *url)
{
    return url != NULL &&
           (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0);
}

int urlsafe_has_password(const char *url)
{
    const char *a, *b;

    if (url == NULL)
        return 0;
    if (userinfo(url, &a, &b) && memchr(a, ':', (size_t)(b - a)) != NULL)
        return 1;
    return query_password(url, &a, &b);
}

/* Append k bytes of src to out (n used of size, one kept for the NUL), cut
 * to what fits; the new length. */
static size_t put(char *out, size_t size, size_t n, const char *src, size_t k)
{
    if (k > size - 1 - n)
        k = size - 1 - n;
    memcpy(out + n, src, k);
    return n + k;
}

char *urlsafe_redact(const char *url, char *out, size_t size)
{
    const char *a, *b;
    size_t n = 0;

    if (size == 0)
        return out;
    out[0] = '\0';
    if (url == NULL) {
        snprintf(out, size, "(none)");
        return out;
    }
    /* Copy piece by piece: the part before the password, then the rest. */
    for (const char *p = url; *p != '\0' && n + 1 < size;) {
        if (userinfo(url, &a, &b) && p == a) {
            const char *colon = memchr(a, ':', (size_t)(b - a));
            if (colon != NULL) {
                n = put(out, size, n, a, (size_t)(colon - a));
                p = b;
                continue;
            }
        }
        if (query_password(url, &a, &b) && p == a) {
            n = put(out, size, n, REDACTED, strlen(REDACTED));
            p = b;
            continue;
        }
        out[n++] = *p++;
    }
    out[n] = '\0';
    return out;
}

int urlsafe_host_is_loopback(const char *h, size_t n)
{
    char tmp[64];
    struct in_addr a4;
    struct in6_addr a6;

    if (h == NULL)
        return 0;
    if (n == 9 && strncasecmp(h, "localhost", 9) == 0)
        return 1;
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n == 0 || n >= sizeof(tmp) || memchr(h, '\0', n) != NULL)
        return 0;
    memcpy(tmp, h, n);
    tmp[n] = '\0';
    if (inet_pton(AF_INET, tmp, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, tmp, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

int urlsafe_hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}
