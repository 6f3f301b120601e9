/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_json_text.c - json_text_dump() writes what json_dumps() writes.
 *
 * Any input jansson parses (with JSON_DECODE_ANY and JSON_ALLOW_NUL, so
 * scalars and strings holding NUL are in too) is dumped by both, with each
 * flag combination json_text_dump() writes itself: the texts must be equal
 * byte for byte (the stored texts and the hashes made of them depend on
 * it).  A difference aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/json_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t flags[] = {
        JSON_COMPACT | JSON_ENCODE_ANY,
        JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY,
        JSON_ENCODE_ANY,
        JSON_SORT_KEYS | JSON_ENCODE_ANY,
        JSON_COMPACT | JSON_SORT_KEYS,
    };
    json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

    if (v == NULL)
        return 0;
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        char *a = json_dumps(v, flags[i]), *b = json_text_dump(v, flags[i]);

        if ((a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0))
            abort();
        free(a);
        free(b);
    }
    json_decref(v);
    return 0;
}
