/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_webhook_url.c - libFuzzer target for the webhook URL rule and the
 * prefix allow-list (site/webhook_url.c).
 *
 * The input is "<url>\n<prefix>" (no newline: the URL is its own prefix).
 * Invariants checked on every input: no out-of-bounds access (ASan); an
 * accepted URL's path is already what RFC 3986 makes of it: once every
 * %XX is decoded, removing dot segments (also "..;x") changes nothing
 * and no '/' or '\' appears that was not a literal '/', so a receiver
 * reads the path the prefix rule read; when an accepted URL matches an
 * accepted prefix, the prefix's decoded path segments are the first
 * segments of the URL's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "site/webhook_url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hexv(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The path of an accepted URL (after "scheme://authority"). */
static const char *path_of(const char *url)
{
    const char *a = strstr(url, "://") + 3;

    return a + strcspn(a, "/");
}

/* Check one accepted URL's path: decoded, each segment (up to ';') is not
 * "." or "..", and holds no '/' or '\' (that would be a new segment). */
static void check_path(const char *path)
{
    const char *p = path;

    while (*p != '\0') {
        char seg[WEBHOOK_URL_MAX + 1];
        size_t n = 0;

        if (*p == '/')
            p++;
        while (*p != '\0' && *p != '/') {
            char c = *p;
            if (c == '%') {
                int hi = hexv(p[1]), lo = hexv(p[2]);
                if (hi < 0 || lo < 0)
                    abort(); /* a broken escape was accepted */
                c = (char)(hi * 16 + lo);
                p += 2;
            }
            if (c == '/' || c == '\\' || c == '\0')
                abort();
            seg[n++] = c;
            p++;
        }
        seg[n] = '\0';
        seg[strcspn(seg, ";")] = '\0';
        if (seg[0] != '\0' && strspn(seg, ".") == strlen(seg))
            abort(); /* ".", "..", "...": a dot segment was accepted */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *prefix;
    char *list[1];
    bool url_ok, prefix_ok;

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    prefix = strchr(text, '\n');
    if (prefix != NULL)
        *prefix++ = '\0';
    else
        prefix = text;
    url_ok = webhook_url_problem(text, (size & 1) != 0) == NULL;
    prefix_ok = webhook_url_problem(prefix, false) == NULL;
    if (url_ok)
        check_path(path_of(text));
    list[0] = prefix;
    if (webhook_url_prefix_match(text, prefix) != webhook_url_allowed(text, list, 1))
        abort();
    if (url_ok && prefix_ok && webhook_url_prefix_match(text, prefix)) {
        size_t n = strlen(prefix);
        /* The URL goes on from the prefix at a segment boundary. */
        if (strncmp(text, prefix, n) != 0 ||
            !(prefix[n - 1] == '/' || text[n] == '\0' || text[n] == '/'))
            abort();
    }
    free(text);
    return 0;
}
