/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_constraint.c - libFuzzer target for the constraint evaluator of
 * `sluice check` (slurm/constraint.c).
 *
 * The input is "<constraint>\n<features>" (no newline: features empty).
 * Invariants checked on every input: no out-of-bounds access (ASan); the
 * answer is -1, 0 or 1; -1 does not depend on the features (it is about
 * the syntax); a satisfied constraint stays satisfied when the node has
 * one more feature.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/client.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    char *features, *more;
    size_t flen;
    int r, r_none, r_more;

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    features = strchr(text, '\n');
    if (features != NULL)
        *features++ = '\0';
    else
        features = text + strlen(text);
    r = sluice_constraint_match(text, features);
    r_none = sluice_constraint_match(text, NULL);
    if (r < -1 || r > 1 || r_none < -1 || r_none > 1)
        abort();
    if ((r == -1) != (r_none == -1))
        abort();
    flen = strlen(features);
    if ((more = malloc(flen + 16)) != NULL) {
        memcpy(more, features, flen);
        memcpy(more + flen, ",extra_feature", 15);
        r_more = sluice_constraint_match(text, more);
        if (r == 1 && r_more != 1)
            abort();
        free(more);
    }
    free(text);
    return 0;
}
