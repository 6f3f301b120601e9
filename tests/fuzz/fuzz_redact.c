/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_redact.c - libFuzzer target for the log redactor.
 *
 * Invariants checked on every input: no out-of-bounds access (ASan), the
 * result stays NUL-terminated inside the buffer, and a second pass finds
 * nothing new to redact in any JWT or bearer value (redaction is complete).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/log.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t cap = size + 1;
    char *text = malloc(cap);

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    sluice_redact(text, cap);
    if (strlen(text) >= cap)
        abort();
    if (sluice_redact(text, cap) != 0)
        abort();
    free(text);
    return 0;
}
