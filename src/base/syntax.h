/* SPDX-License-Identifier: Apache-2.0 */
/* syntax.h - the one parser of the Slurm value syntaxes sluice accepts.
 *
 * The site file (src/site/) and launch requests (src/request/) both take
 * Slurm time limits, memory sizes, durations, signal specs, environment
 * variable names and paths.  They parse them here, so that a value means
 * the same thing wherever it is written.
 *
 * Every parser takes the name of the field being parsed and, on failure,
 * returns SLUICE_EINVAL (SLUICE_ENOMEM when out of memory) with err->text
 * "<field>: <reason>", e.g. "time_limit: must be at least 1 minute".  The
 * reason never quotes the value.  `err` may be NULL.  Out-parameters are
 * set only on success.
 *
 * Slurm time limits (syntax_slurm_time):
 *   forms   M, M:S, H:M:S, D-H, D-H:M, D-H:M:S (each part 1 to 9 digits)
 *   rule    Slurm's own (time_str2mins in src/common/parse_time.c): the
 *           parts are not range-checked, they add up.  "1:75" is 1 minute
 *           75 seconds (135 s), "2-25" is 2 days 25 hours (73 hours).  The
 *           total rounds up to whole minutes, so "1:60" is 2 minutes.
 *   refused where Slurm would misread or means "no limit": an empty part
 *           ("1-" is one day to Slurm, "1:" and ":5"), a sign ("-5" is
 *           minus five days to Slurm), "-1", UNLIMITED and INFINITE (no
 *           limit; sluice always sets a finite one), a total of 0 (also
 *           no limit to Slurm), more than the caller's maximum, spaces.
 */
#ifndef SLUICE_BASE_SYNTAX_H
#define SLUICE_BASE_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/error.h>

/* The largest finite time limit Slurm can hold (NO_VAL - 1, in minutes). */
#define SYNTAX_TIME_MAX_MINUTES 4294967293U

/* The largest memory size accepted: 64 TiB, in MiB. */
#define SYNTAX_MEM_MAX_MIB (UINT64_C(64) * 1024 * 1024)

/* A Slurm time limit (see above) -> *minutes, 1..max_minutes. */
sluice_err syntax_slurm_time(
    uint32_t *minutes, const char *s, uint32_t max_minutes, const char *field, sluice_error_t *err);

/* A memory size: 1 to 12 digits with an optional K, M, G or T suffix
 * (either case; no suffix = MiB, as Slurm's --mem).  K rounds up to whole
 * MiB.  *mib is 1..SYNTAX_MEM_MAX_MIB. */
sluice_err syntax_mem_size(uint64_t *mib, const char *s, const char *field, sluice_error_t *err);

/* A duration in seconds: "90", or a number with s, m, h or d ("30s",
 * "5m", "2h", "1d").  *seconds >= 0; the caller checks its own range. */
sluice_err syntax_duration(long *seconds, const char *s, const char *field, sluice_error_t *err);

/* Slurm's --signal value: <name|number>[@<seconds 0..65535>].  Names may
 * carry the SIG prefix; numbers are 1-64.  *out is "<NAME>@<seconds>"
 * (60 s by default), a new string the caller frees with free(). */
sluice_err syntax_signal(char **out, const char *s, const char *field, sluice_error_t *err);

/* An environment variable name: [A-Za-z_][A-Za-z0-9_]*, 1 to 128 bytes.
 * syntax_envname_reason() gives the reason without a field (NULL when the
 * name is good) for callers that phrase their own message. */
const char *syntax_envname_reason(const char *s);
sluice_err syntax_envname(const char *s, const char *field, sluice_error_t *err);

/* An absolute path: no ".." component, no control byte, at most 4096
 * bytes.  "//" and "/./" collapse and a trailing "/" goes.  *out is a new
 * string the caller frees with free(). */
sluice_err syntax_path_normalize(char **out, const char *s, const char *field, sluice_error_t *err);

/* An absolute path of `len` bytes that is already normalised and safe
 * inside PATH and inside a quoted shell word: no ':', quote, '$', '`', '\\'
 * or control byte, no '.', '..' or empty component, no trailing '/'
 * (except "/" itself). */
bool syntax_path_plain(const char *s, size_t len);

/* A PATH value: syntax_path_plain() directories joined by ':', none
 * empty, at most 4096 bytes. */
bool syntax_path_list(const char *s);

#endif /* SLUICE_BASE_SYNTAX_H */
