/* SPDX-License-Identifier: Apache-2.0 */
/* shquote.c - POSIX shell single quoting.
 *
 * Notes:
 * - The output is always one shell word, whatever the input bytes are
 *   (UTF-8, control characters, quotes).  Byte-exact: bash gives the
 *   command the same bytes back.
 */
#include <string.h>

#include "shquote.h"

sluice_err shquote_append(buf_t *b, const char *s)
{
    sluice_err rc;
    const char *q;

    if ((rc = buf_puts(b, "'")) != SLUICE_OK)
        return rc;
    while ((q = strchr(s, '\'')) != NULL) {
        if ((rc = buf_append(b, s, (size_t)(q - s))) != SLUICE_OK ||
            (rc = buf_puts(b, "'\\''")) != SLUICE_OK)
            return rc;
        s = q + 1;
    }
    if ((rc = buf_puts(b, s)) != SLUICE_OK)
        return rc;
    return buf_puts(b, "'");
}
