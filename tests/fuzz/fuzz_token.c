/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_token.c - libFuzzer target for the token-file parser and the JWT
 * header/claims decoder.
 *
 * Invariants checked on every input: no out-of-bounds access or leak
 * (ASan), a parsed token is a substring of the input, decoding a parsed
 * token either fails cleanly or yields two JSON objects, and the inspect
 * output never contains the signature part.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/auth.h>

#include "slurm/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Like strstr, but the input may hold NUL bytes. */
static int contains(const char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle), i;

    for (i = 0; n <= len && i <= len - n; i++) {
        if (memcmp(hay + i, needle, n) == 0)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    char *tok = NULL;
    json_t *h = NULL;
    json_t *c = NULL;
    json_t *j = NULL;
    char *dump;
    int64_t v;

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (sluice_token_parse(text, size, &tok, NULL) == SLUICE_OK) {
        if (!contains(text, size, tok))
            abort();
        if (auth_decode(tok, &h, &c, NULL) == SLUICE_OK) {
            if (!json_is_object(h) || !json_is_object(c))
                abort();
            (void)auth_claim_int(c, "exp", &v);
        }
        if (sluice_token_inspect(tok, &j, NULL) == SLUICE_OK) {
            const char *sig = strrchr(tok, '.') + 1;
            dump = json_dumps(j, JSON_COMPACT);
            if (dump != NULL && strlen(sig) >= 16 && strstr(dump, sig) != NULL)
                abort();
            free(dump);
        }
    }
    /* The decoder must also survive arbitrary text fed directly. */
    json_decref(h);
    json_decref(c);
    json_decref(j);
    h = c = NULL;
    if (auth_decode(text, &h, &c, NULL) == SLUICE_OK) {
        json_decref(h);
        json_decref(c);
    }
    free(tok);
    free(text);
    return 0;
}
