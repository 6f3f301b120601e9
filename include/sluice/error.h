/* SPDX-License-Identifier: Apache-2.0 */
/* error.h - sluice's error codes and the caller-owned error struct.
 *
 * Every fallible function returns a sluice_err (SLUICE_OK is 0) and takes a
 * `sluice_error_t *err` as its last parameter.  `err` may be NULL.  On
 * failure the struct receives the code, the HTTP status when one was
 * involved, and a human sentence that names the offending field and the
 * reason.  Error text never contains a secret (token, key, secret value).
 */
#ifndef SLUICE_ERROR_H
#define SLUICE_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#include <sluice/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* XX(name, sysexit, description).  The sysexits(3) value is what the CLI
 * exits with when an error of that code ends a command. */
#define SLUICE_ERR_MAP(XX)                                                                         \
    XX(OK, 0, "success")                                                                           \
    XX(EINVAL, 65, "invalid input")                                                                \
    XX(ENOMEM, 71, "out of memory")                                                                \
    XX(ECONFIG, 78, "invalid configuration")                                                       \
    XX(EIO, 74, "input/output error")                                                              \
    XX(ETRANSPORT, 69, "transport failure")                                                        \
    XX(EHTTP, 69, "unexpected HTTP status")                                                        \
    XX(EAUTH, 77, "authentication failed")                                                         \
    XX(ESLURM, 69, "Slurm reported an error")                                                      \
    XX(EPROTO, 76, "malformed response")                                                           \
    XX(ENOTFOUND, 69, "not found")                                                                 \
    XX(ESTATE, 65, "not allowed in the current state")                                             \
    XX(ESTORE, 74, "store failure")                                                                \
    XX(ETIMEDOUT, 69, "timed out")                                                                 \
    XX(EUNSUPPORTED, 69, "unsupported by the server")                                              \
    XX(EPERM, 77, "permission denied")                                                             \
    XX(ECONFLICT, 65, "conflicts with existing state")                                             \
    XX(ETOOBIG, 65, "size limit exceeded")

typedef enum {
#define SLUICE_ERR_ENUM(name, sysexit, desc) SLUICE_##name,
    SLUICE_ERR_MAP(SLUICE_ERR_ENUM)
#undef SLUICE_ERR_ENUM
        SLUICE_ERR_COUNT_
} sluice_err;

/* Caller-owned; no heap memory inside, so it needs no cleanup. */
typedef struct {
    sluice_err code;
    long http_status; /* 0 when no HTTP exchange was involved */
    char text[512];
} sluice_error_t;

#define SLUICE_ERROR_INIT                                                                          \
    {                                                                                              \
        SLUICE_OK, 0,                                                                              \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

/* "EINVAL" style name of a code; "UNKNOWN" for values outside the map. */
SLUICE_API const char *sluice_err_name(sluice_err code);

/* Short description of a code ("invalid input"). */
SLUICE_API const char *sluice_strerror(sluice_err code);

/* The sysexits(3) value the CLI uses for a code (0 for SLUICE_OK). */
SLUICE_API int sluice_err_sysexit(sluice_err code);

/* Reset an error struct to SLUICE_OK with empty text.  NULL-safe. */
SLUICE_API void sluice_error_clear(sluice_error_t *err);

/* Fill `err` (if not NULL) and return `code`, so that callers can write
 * `return sluice_errorf(err, SLUICE_EINVAL, "pools[%zu].nodes: ...", i);`.
 * Text longer than the buffer is truncated with a trailing "...". */
SLUICE_API sluice_err sluice_errorf(sluice_error_t *err, sluice_err code, const char *fmt, ...)
    SLUICE_PRINTF(3, 4);

SLUICE_API sluice_err sluice_verrorf(sluice_error_t *err,
                                     sluice_err code,
                                     const char *fmt,
                                     va_list ap) SLUICE_PRINTF(3, 0);

/* Prefix the existing text of `err` with "<prefix>: ", keeping its code.
 * Returns err->code (SLUICE_OK when err is NULL). */
SLUICE_API sluice_err sluice_error_prefix(sluice_error_t *err, const char *fmt, ...)
    SLUICE_PRINTF(2, 3);

/* ---- every field error of a request --------------------------------- */

/* A collector of field errors, for the checks that go on after a bad field
 * (a launch request: the 422 `errors[]` of the API, one line each in the
 * CLI).  Caller-owned: start it with SLUICE_ERRLIST_INIT, pass it to the
 * functions that take one, read items[0..n), and release it with
 * sluice_errlist_clear() (the items array is heap memory).  At most
 * SLUICE_ERRLIST_MAX errors are kept; `dropped` counts the ones past that.
 * Reasons follow the sluice_error_t rule: no secret value, ever. */
#define SLUICE_ERRLIST_MAX 64
#define SLUICE_FIELD_PATH_MAX 320

typedef struct {
    /* The JSON path ("pools[1].nodes"); "" for the request as a whole. */
    char path[SLUICE_FIELD_PATH_MAX];
    char reason[448];
} sluice_field_error_t;

typedef struct {
    sluice_field_error_t *items; /* owned; n used, cap allocated */
    size_t n, cap;
    size_t dropped; /* errors past SLUICE_ERRLIST_MAX, not kept */
} sluice_errlist_t;

#define SLUICE_ERRLIST_INIT                                                                        \
    {                                                                                              \
        NULL, 0, 0, 0                                                                              \
    }

/* Append one error (path NULL: ""); both cut to their buffers.  Returns
 * SLUICE_OK (also when the error was dropped past the maximum) or
 * SLUICE_ENOMEM.  `l` NULL: nothing, SLUICE_OK. */
SLUICE_API sluice_err sluice_errlist_add(sluice_errlist_t *l,
                                         const char *path,
                                         const char *fmt,
                                         ...) SLUICE_PRINTF(3, 4);

/* Append "<path>: <reason>" split from an error text such as a
 * sluice_error_t's: the path is the text before the first ": " when it has
 * no space in it, else "" and the whole text is the reason. */
SLUICE_API sluice_err sluice_errlist_add_text(sluice_errlist_t *l, const char *text);

/* Free the items and reset `l` to SLUICE_ERRLIST_INIT.  NULL-safe. */
SLUICE_API void sluice_errlist_clear(sluice_errlist_t *l);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_ERROR_H */
