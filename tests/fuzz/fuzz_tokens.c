/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_tokens.c - libFuzzer target for the API tokens file parser of
 * `sluice serve` (server_parse_tokens, serve/server_access.c), the same
 * function the file reader calls.
 *
 * Invariants checked on every input: no out-of-bounds access or leak
 * (ASan); at most MAX_TOKENS entries, also after an error; every entry
 * has a caller name of 1-63 characters from [A-Za-z0-9._@-] and a token
 * of 16 bytes or more with no blank, found in the input; an error text is
 * NUL-terminated and never holds a token.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/server_access.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int found_in(const uint8_t *data, size_t size, const char *s)
{
    size_t n = strlen(s), i;

    for (i = 0; n <= size && i <= size - n; i++)
        if (memcmp(data + i, s, n) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static token_t tokens[MAX_TOKENS];
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t n = 0, i;
    sluice_err rc;

    rc = server_parse_tokens("fuzz", (const char *)data, size, tokens, &n, &err);
    if (n > MAX_TOKENS || (rc == SLUICE_OK && n == 0))
        abort();
    if (rc != SLUICE_OK && memchr(err.text, 0, sizeof(err.text)) == NULL)
        abort();
    for (i = 0; i < n; i++) {
        const char *name = tokens[i].name, *tok = tokens[i].token;

        if (name == NULL || tok == NULL || name[0] == '\0' || strlen(name) > 63 ||
            strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-") !=
                strlen(name))
            abort();
        if (strlen(tok) < 16 || strpbrk(tok, " \t\r\n") != NULL || !found_in(data, size, tok))
            abort();
        if (rc != SLUICE_OK && strstr(err.text, tok) != NULL)
            abort();
    }
    server_tokens_free(tokens, n);
    return 0;
}
