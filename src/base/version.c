/* SPDX-License-Identifier: Apache-2.0 */
/* version.c - the library's version at run time. */
#include <sluice/version.h>

const char *sluice_version(void)
{
    return SLUICE_VERSION_STRING;
}
