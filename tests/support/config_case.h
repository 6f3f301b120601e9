/* SPDX-License-Identifier: Apache-2.0 */
/* config_case.h - a site configuration loaded from text in a test. */
#ifndef SLUICE_TEST_CONFIG_CASE_H
#define SLUICE_TEST_CONFIG_CASE_H

#include <stddef.h>

#include <sluice/config.h>

/* sluice_config_load() of `text` as the site file "site.yaml", with the
 * environment `envp` (NULL: an empty one, not the test's) and the --set
 * overrides sets[0..n_sets).  Same ownership as sluice_config_load(). */
sluice_err config_case_load(const char *text,
                            const char *const *envp,
                            const char *const *sets,
                            size_t n_sets,
                            sluice_config_t **out,
                            sluice_error_t *err);

#endif /* SLUICE_TEST_CONFIG_CASE_H */
