/* SPDX-License-Identifier: Apache-2.0 */
/* wipe.c - see wipe.h. */
#include <stdlib.h>
#include <string.h>

#include "wipe.h"

void wipe(void *p, size_t n)
{
    if (p != NULL && n > 0)
        explicit_bzero(p, n);
}

void wipe_str(char *s)
{
    if (s != NULL)
        wipe(s, strlen(s));
}

void wipe_free(void *p, size_t n)
{
    wipe(p, n);
    free(p);
}

void wipe_str_free(char *s)
{
    wipe_str(s);
    free(s);
}
