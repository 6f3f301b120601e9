/* SPDX-License-Identifier: Apache-2.0 */
/* headertest.c - the umbrella header compiles alone under -std=c11
 * -pedantic-errors, and the shared library exports what it declares. */
#include <sluice/sluice.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (sluice_errorf(&err, SLUICE_EINVAL, "field %s", "x") != SLUICE_EINVAL)
        return 1;
    if (strcmp(sluice_version(), SLUICE_VERSION_STRING) != 0) {
        fprintf(stderr, "library %s != header %s\n", sluice_version(), SLUICE_VERSION_STRING);
        return 1;
    }
    printf("headertest: 1 passed, 0 failed\n");
    return 0;
}
