/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_syntax.c - libFuzzer target for the Slurm value syntax
 * (base/syntax.c): time limits, memory sizes, durations, signals,
 * environment names and paths.
 *
 * Every parser reads every input.  Invariants: no out-of-bounds access or
 * leak (ASan, UBSan: no signed overflow); a parsed value is inside its
 * documented range; the output pointer is left alone on failure; a
 * normalised path and a canonical signal parse again to themselves; a
 * normalised path is one the plain-path rule accepts unless it holds a
 * character that rule refuses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/syntax.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *s = malloc(size + 1), *out = NULL, *again = NULL;
    uint32_t minutes = 7, max;
    uint64_t mib = 7;
    long secs = -7;

    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    /* The first byte picks the time limit's cap: a small one or Slurm's. */
    max = size > 0 && (data[0] & 1) ? SYNTAX_TIME_MAX_MINUTES : 525600u;
    if (syntax_slurm_time(&minutes, s, max, "time", &err) == SLUICE_OK) {
        if (minutes < 1 || minutes > max)
            abort();
    } else if (minutes != 7) {
        abort();
    }
    if (syntax_mem_size(&mib, s, "mem", &err) == SLUICE_OK) {
        if (mib < 1 || mib > SYNTAX_MEM_MAX_MIB)
            abort();
    } else if (mib != 7) {
        abort();
    }
    if (syntax_duration(&secs, s, "d", &err) == SLUICE_OK) {
        if (secs < 0)
            abort();
    } else if (secs != -7) {
        abort();
    }
    if (syntax_signal(&out, s, "signal", &err) == SLUICE_OK) {
        if (out == NULL || syntax_signal(&again, out, "signal", &err) != SLUICE_OK ||
            strcmp(out, again) != 0)
            abort();
        free(again);
        again = NULL;
        free(out);
        out = NULL;
    } else if (out != NULL) {
        abort();
    }
    if ((syntax_envname_reason(s) == NULL) != (syntax_envname(s, "env", &err) == SLUICE_OK))
        abort();
    if (syntax_path_normalize(&out, s, "path", &err) == SLUICE_OK) {
        if (out == NULL || out[0] != '/' ||
            syntax_path_normalize(&again, out, "path", &err) != SLUICE_OK || strcmp(out, again))
            abort();
        if (strpbrk(out, ":'\"$`\\") == NULL && !syntax_path_plain(out, strlen(out)))
            abort();
        free(again);
        free(out);
    } else if (out != NULL) {
        abort();
    }
    (void)syntax_path_list(s);
    (void)syntax_path_plain(s, strlen(s));
    free(s);
    return 0;
}
