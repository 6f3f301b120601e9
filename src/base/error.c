/* SPDX-License-Identifier: Apache-2.0 */
/* error.c - error code names, descriptions, sysexits, and sluice_errorf().
 *
 * Notes:
 * - Every table is generated from SLUICE_ERR_MAP so that a new code cannot
 *   be added in one place and forgotten in another.
 * - sluice_errorf() always returns its code: `return sluice_errorf(...)`.
 */
#include <stdio.h>
#include <string.h>

#include <sluice/error.h>

static const struct {
    const char *name;
    int sysexit;
    const char *desc;
} err_table[] = {
#define ROW(name, sysexit, desc) {#name, sysexit, desc},
    SLUICE_ERR_MAP(ROW)
#undef ROW
};

static int code_valid(sluice_err code)
{
    return (int)code >= 0 && (int)code < (int)SLUICE_ERR_COUNT_;
}

const char *sluice_err_name(sluice_err code)
{
    return code_valid(code) ? err_table[code].name : "UNKNOWN";
}

const char *sluice_strerror(sluice_err code)
{
    return code_valid(code) ? err_table[code].desc : "unknown error";
}

int sluice_err_sysexit(sluice_err code)
{
    /* EX_SOFTWARE (70) for a code outside the map: that is our bug. */
    return code_valid(code) ? err_table[code].sysexit : 70;
}

void sluice_error_clear(sluice_error_t *err)
{
    if (err == NULL)
        return;
    err->code = SLUICE_OK;
    err->http_status = 0;
    err->text[0] = '\0';
}

sluice_err sluice_verrorf(sluice_error_t *err, sluice_err code, const char *fmt, va_list ap)
{
    int n;

    if (err == NULL)
        return code;
    err->code = code;
    n = vsnprintf(err->text, sizeof(err->text), fmt, ap);
    if (n < 0) {
        snprintf(err->text, sizeof(err->text), "%s", sluice_strerror(code));
    } else if ((size_t)n >= sizeof(err->text)) {
        memcpy(err->text + sizeof(err->text) - 4, "...", 4);
    }
    return code;
}

sluice_err sluice_errorf(sluice_error_t *err, sluice_err code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sluice_verrorf(err, code, fmt, ap);
    va_end(ap);
    return code;
}

sluice_err sluice_error_prefix(sluice_error_t *err, const char *fmt, ...)
{
    char prefix[256];
    char old[sizeof(err->text)];
    va_list ap;

    if (err == NULL)
        return SLUICE_OK;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->text, sizeof(old));
    old[sizeof(old) - 1] = '\0';
    if (old[0] == '\0')
        snprintf(err->text, sizeof(err->text), "%s", prefix);
    else if (snprintf(err->text, sizeof(err->text), "%s: %s", prefix, old) >=
             (int)sizeof(err->text))
        memcpy(err->text + sizeof(err->text) - 4, "...", 4);
    return err->code;
}
