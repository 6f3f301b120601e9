/* SPDX-License-Identifier: Apache-2.0 */
/* webhook_url.c - the webhook target URL rule and the request URL
 * allow-list (webhook_url.h).
 *
 * Notes:
 * - The checks are on the text: no name is resolved here.  A request URL
 *   reaches a receiver only when it starts with a prefix the site lists
 *   (an arbitrary URL from a request would let a caller make the service
 *   post to any address it can reach: docs/security.md, "Webhooks").
 * - Redirects are never followed (transport/http.c), so a receiver cannot
 *   send a delivery on to another address.
 */
#include <string.h>

#include "base/urlsafe.h"

#include "webhook_url.h"

static bool host_char_ok(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '-' || ch == '_';
}

/* The authority [host or [v6]][:port] in a[0..n); the host's extent into
 * *h, *hn.  Returns a problem or NULL. */
static const char *check_authority(const char *a, size_t n, const char **h, size_t *hn)
{
    size_t i = 0, port_digits = 0;
    long port = 0;

    if (n == 0)
        return "no host";
    if (memchr(a, '@', n) != NULL)
        return "a user or password in the URL is not allowed (the URL is not secret: it shows in "
               "logs and in GET /v1/launches/{id})";
    if (a[0] == '[') {
        const char *rb = memchr(a, ']', n);
        if (rb == NULL)
            return "an IPv6 host needs its closing ']'";
        i = (size_t)(rb - a) + 1;
        if (i == 2)
            return "no host";
    } else {
        while (i < n && a[i] != ':') {
            if (!host_char_ok(a[i]))
                return "the host has a character outside [A-Za-z0-9._-]";
            i++;
        }
        if (i == 0)
            return "no host";
    }
    *h = a;
    *hn = i;
    if (i == n)
        return NULL;
    if (a[i] != ':')
        return "unexpected text after the host";
    for (i++; i < n; i++) {
        if (a[i] < '0' || a[i] > '9' || ++port_digits > 5)
            return "the port is not a number from 1 to 65535";
        port = port * 10 + (a[i] - '0');
    }
    if (port_digits == 0 || port < 1 || port > 65535)
        return "the port is not a number from 1 to 65535";
    return NULL;
}

/* True when the segment s[0..n) is only dots, each '.' or "%2e"/"%2E"
 * (".", "..", "%2e%2e", ".%2E", "..."), up to an optional ";params"
 * ("..;/" is ".." to Tomcat and to proxies that strip path parameters). */
static bool is_dot_segment(const char *s, size_t n)
{
    size_t i = 0, dots = 0;

    while (i < n && s[i] != ';') {
        if (s[i] == '.') {
            i++;
        } else if (s[i] == '%' && i + 2 < n && s[i + 1] == '2' &&
                   (s[i + 2] == 'e' || s[i + 2] == 'E')) {
            i += 3;
        } else {
            return false;
        }
        dots++;
    }
    return dots > 0;
}

/* The path's problem, or NULL.  The prefix rule compares text, so a path
 * must mean what it says: no segment a receiver or a proxy would resolve
 * against its parent (a dot segment in any encoding), no second spelling
 * of '/' (a backslash, %2F, %5C), no broken or NUL escape, no escaped '%'
 * (%252e%252e is ".." to a receiver that decodes twice). */
static const char *check_path(const char *path)
{
    const char *seg = path, *p;
    int hi, lo, v;

    for (p = path;; p++) {
        if (*p == '/' || *p == '\0') {
            if (p > path && is_dot_segment(seg, (size_t)(p - seg)))
                return "a '.' or '..' path segment (also as %2e, or with ';...') is not allowed: "
                       "the URL would leave the prefix it was checked against";
            if (*p == '\0')
                return NULL;
            seg = p + 1;
        } else if (*p == '\\') {
            return "a backslash in the path is not allowed (some receivers read it as '/')";
        } else if (*p == '%') {
            if ((hi = urlsafe_hex_digit(p[1])) < 0 || (lo = urlsafe_hex_digit(p[2])) < 0)
                return "a '%' in the path is not followed by two hex digits";
            v = hi * 16 + lo;
            if (v == '/' || v == '\\')
                return "an encoded '/' or '\\' (%2F, %5C) in the path is not allowed: the URL "
                       "would leave the prefix it was checked against";
            if (v == '%')
                return "an encoded '%' (%25) in the path is not allowed (a receiver that decodes "
                       "twice would read another path)";
            if (v == 0)
                return "an encoded NUL (%00) in the path is not allowed";
            p += 2;
        }
    }
}

const char *webhook_url_problem(const char *url, bool allow_insecure_http)
{
    const char *a, *path, *h = NULL, *p;
    size_t len, hn = 0;
    bool https;

    if (url == NULL || url[0] == '\0')
        return "empty URL";
    len = strlen(url);
    if (len > WEBHOOK_URL_MAX)
        return "longer than 2048 bytes";
    for (p = url; *p != '\0'; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return "a space, control byte or non-ASCII byte (percent-encode it)";
    if (strncmp(url, "https://", 8) == 0) {
        https = true;
        a = url + 8;
    } else if (strncmp(url, "http://", 7) == 0) {
        https = false;
        a = url + 7;
    } else {
        return "expected an https:// URL (or http:// to a loopback host)";
    }
    if (strpbrk(a, "?#") != NULL)
        return "a query string or fragment is not allowed";
    path = a + strcspn(a, "/");
    if ((p = check_authority(a, (size_t)(path - a), &h, &hn)) != NULL)
        return p;
    if (strstr(path, "//") != NULL)
        return "an empty path segment ('//') is not allowed";
    if ((p = check_path(path)) != NULL)
        return p;
    if (!https && !allow_insecure_http && !urlsafe_host_is_loopback(h, hn))
        return "plain http:// only to a loopback host (localhost, 127.0.0.0/8, [::1]); use "
               "https:// or set webhooks.allow_insecure_http";
    return NULL;
}

bool webhook_url_prefix_match(const char *url, const char *prefix)
{
    size_t n;

    if (url == NULL || prefix == NULL || (n = strlen(prefix)) == 0)
        return false;
    if (strncmp(url, prefix, n) != 0)
        return false;
    return prefix[n - 1] == '/' || url[n] == '\0' || url[n] == '/';
}

bool webhook_url_allowed(const char *url, char *const *prefixes, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (webhook_url_prefix_match(url, prefixes[i]))
            return true;
    return false;
}
