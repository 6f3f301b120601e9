/* SPDX-License-Identifier: Apache-2.0 */
/* opts.c - the version check of the public options structs (opts.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "opts.h"

/* "client" -> "CLIENT", truncated to fit. */
static void upper(char *buf, size_t size, const char *name)
{
    size_t i;

    for (i = 0; name[i] != '\0' && i + 1 < size; i++)
        buf[i] = (char)toupper((unsigned char)name[i]);
    buf[i] = '\0';
}

sluice_err opts_check_version(const char *name,
                              unsigned int version,
                              unsigned int current,
                              sluice_error_t *err)
{
    char up[64];

    if (version >= 1 && version <= current)
        return SLUICE_OK;
    upper(up, sizeof(up), name);
    return sluice_errorf(err, SLUICE_EINVAL,
                         "sluice_%s_opts_t: version %u is unknown to this library (it knows 1 to "
                         "%u); start from SLUICE_%s_OPTS_INIT or sluice_%s_opts_init()",
                         name, version, current, up, name);
}

sluice_err opts_init(void *opts,
                     const void *tmpl,
                     size_t size,
                     const char *name,
                     unsigned int version,
                     unsigned int current,
                     sluice_error_t *err)
{
    sluice_err rc;

    if (opts == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_%s_opts_init: NULL options", name);
    if ((rc = opts_check_version(name, version, current, err)) != SLUICE_OK)
        return rc;
    /* One version so far: every known version has the layout of `tmpl`.
     * When a version 2 adds members, a caller built for version 1 passes a
     * smaller struct: copy only that version's size then. */
    memcpy(opts, tmpl, size);
    return SLUICE_OK;
}
