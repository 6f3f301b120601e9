/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_hostlist.c - libFuzzer target for the hostlist expander
 * (base/hostlist.c).
 *
 * Invariants checked on every input: no out-of-bounds access or leak
 * (ASan); at most `max` names; every name is a non-empty string with no
 * ',' and no bracket; hostlist_first() agrees with the first name of
 * hostlist_expand() whenever both succeed, and fails when the expression
 * is refused as malformed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NAMES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sluice_error_t err = SLUICE_ERROR_INIT, ferr = SLUICE_ERROR_INIT;
    char *expr = malloc(size + 1);
    char first[256];
    json_t *names = NULL;
    sluice_err rc, frc;
    size_t i;

    if (expr == NULL)
        return 0;
    memcpy(expr, data, size);
    expr[size] = '\0';
    rc = hostlist_expand(expr, MAX_NAMES, &names, &err);
    frc = hostlist_first(expr, first, sizeof(first), &ferr);
    if (rc == SLUICE_OK) {
        if (!json_is_array(names) || json_array_size(names) > MAX_NAMES)
            abort();
        for (i = 0; i < json_array_size(names); i++) {
            const char *n = json_string_value(json_array_get(names, i));
            if (n == NULL || n[0] == '\0' || strpbrk(n, ",[]") != NULL)
                abort();
        }
        if (json_array_size(names) > 0 && frc == SLUICE_OK &&
            strcmp(first, json_string_value(json_array_get(names, 0))) != 0)
            abort();
        json_decref(names);
    } else {
        if (names != NULL || memchr(err.text, 0, sizeof(err.text)) == NULL)
            abort();
        if (rc == SLUICE_EINVAL && frc == SLUICE_OK)
            abort(); /* first checks the whole expression as expand does */
    }
    free(expr);
    return 0;
}
