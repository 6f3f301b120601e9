/* SPDX-License-Identifier: Apache-2.0 */
/* config_case.c - a site configuration loaded from text in a test. */
#include <string.h>

#include "config_case.h"

sluice_err config_case_load(const char *text,
                            const char *const *envp,
                            const char *const *sets,
                            size_t n_sets,
                            sluice_config_t **out,
                            sluice_error_t *err)
{
    static const char *const no_env[] = {NULL};
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;

    o.text = text;
    o.text_len = strlen(text);
    o.text_name = "site.yaml";
    o.envp = envp ? envp : no_env;
    o.overrides = sets;
    o.n_overrides = n_sets;
    return sluice_config_load(&o, out, err);
}
