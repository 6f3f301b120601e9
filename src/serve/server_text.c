/* SPDX-License-Identifier: Apache-2.0 */
/* server_text.c - the text checks of `sluice serve`: what a client sends in
 * a path, a query or a body must be UTF-8 without control bytes, and %XX is
 * decoded here (never %00).
 *
 * Notes:
 * - A copy of a body made to find a bad byte is wiped before it is freed:
 *   a launch request may hold secret values.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/wipe.h"
#include "base/urlsafe.h"
#include "server_text.h"
#include "server_util.h"

size_t text_utf8_prefix(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        unsigned char b = p[i];
        size_t n, k;
        uint32_t cp;

        if (b < 0x80) {
            i++;
            continue;
        }
        if (b >= 0xc2 && b <= 0xdf)
            n = 1, cp = b & 0x1fu;
        else if (b >= 0xe0 && b <= 0xef)
            n = 2, cp = b & 0x0fu;
        else if (b >= 0xf0 && b <= 0xf4)
            n = 3, cp = b & 0x07u;
        else
            return i;
        if (len - i <= n)
            return i;
        for (k = 1; k <= n; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return i;
            cp = (cp << 6) | (p[i + k] & 0x3fu);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return i;
        i += n + 1;
    }
    return len;
}

int text_clean(const char *s, size_t len, const char **why)
{
    size_t i;

    if (text_utf8_prefix(s, len) != len) {
        *why = "is not valid UTF-8";
        return 0;
    }
    for (i = 0; i < len; i++) {
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
            *why = "holds a control character";
            return 0;
        }
        if (s[i] == '%' && i + 2 < len && s[i + 1] == '0' && s[i + 2] == '0') {
            *why = "holds a NUL byte";
            return 0;
        }
        if (s[i] == '%' && i + 2 < len && s[i + 1] == '2' && (s[i + 2] == 'F' || s[i + 2] == 'f')) {
            *why = "holds an encoded slash";
            return 0;
        }
    }
    return 1;
}

const char *text_escape(const char *s, char *out, size_t size)
{
    size_t len = strlen(s), i = 0, o = 0, ok;

    if (size == 0)
        return out;
    while (i < len) {
        unsigned char b = (unsigned char)s[i];
        ok = b >= 0x80 ? text_utf8_prefix(s + i, len - i) : 0;
        if (b >= 0x80 && ok > 0) {
            /* a whole UTF-8 sequence: its length from its lead byte */
            size_t n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
            if (o + n >= size)
                break;
            memcpy(out + o, s + i, n);
            o += n, i += n;
        } else if (b < 0x20 || b == 0x7f || b == '\\' || b >= 0x80) {
            if (o + 4 >= size)
                break;
            snprintf(out + o, 5, "\\x%02x", b);
            o += 4, i++;
        } else {
            if (o + 1 >= size)
                break;
            out[o++] = (char)b, i++;
        }
    }
    out[o] = '\0';
    return out;
}

static size_t unescape(char *val, int path)
{
    char *r = val, *w = val;

    while (*r) {
        int hi, lo;
        if (r[0] == '%' && (hi = urlsafe_hex_digit(r[1])) >= 0 &&
            (lo = urlsafe_hex_digit(r[2])) >= 0 && (hi | lo) != 0 &&
            !(path && hi * 16 + lo == '/')) {
            *w++ = (char)(hi * 16 + lo);
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - val);
}

size_t text_unescape(char *val)
{
    return unescape(val, 0);
}

size_t text_unescape_path(char *val)
{
    return unescape(val, 1);
}

/* The JSON path of the first string (value or key) holding U+FFFD, the
 * mark left where a byte was not UTF-8; "" when none. */
static int find_mark(json_t *j, char *path, size_t size)
{
    static const char mark[] = "\xef\xbf\xbd";
    size_t used = strlen(path), i;
    const char *k;
    json_t *v;

    if (json_is_string(j))
        return strstr(json_string_value(j), mark) != NULL;
    if (json_is_array(j)) {
        json_array_foreach(j, i, v)
        {
            snprintf(path + used, size - used, "[%zu]", i);
            if (find_mark(v, path, size))
                return 1;
        }
    } else if (json_is_object(j)) {
        json_object_foreach(j, k, v)
        {
            snprintf(path + used, size - used, "%s%s", used ? "." : "", k);
            if (strstr(k, mark) != NULL || find_mark(v, path, size))
                return 1;
        }
    }
    path[used] = '\0';
    return 0;
}

/* Parses a copy of the body with every bad byte replaced by U+FFFD and
 * looks for the first mark. */
void text_utf8_field(const char *body, size_t len, char *field, size_t size)
{
    char *copy = malloc(len * 3 + 1);
    size_t i = 0, o = 0;
    json_t *j;

    snprintf(field, size, "body");
    if (copy == NULL)
        return;
    while (i < len) {
        size_t ok = text_utf8_prefix(body + i, len - i);
        memcpy(copy + o, body + i, ok);
        o += ok;
        i += ok;
        if (i < len) {
            memcpy(copy + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    if ((j = json_loadb(copy, o, 0, NULL)) != NULL) {
        field[0] = '\0';
        if (!find_mark(j, field, size) || field[0] == '\0')
            snprintf(field, size, "body");
        json_decref(j);
    }
    wipe(copy, o);
    free(copy);
}
