/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config.c - libFuzzer target for the site and study runtime parsers.
 *
 * Every input is parsed from memory as a site file (no environment, required
 * keys not enforced) and as a study runtime file.  Invariants: no crash, no
 * leak, no sanitizer report; on failure the output pointer stays untouched
 * and the message is NUL-terminated; on success the model converts to JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/config.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const no_env[] = {NULL};
    sluice_config_opts_t o;
    sluice_config_t *cfg = NULL;
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;

    o = (sluice_config_opts_t)SLUICE_CONFIG_OPTS_INIT;
    o.text = (const char *)data;
    o.text_len = size;
    o.text_name = "fuzz.yaml";
    o.envp = no_env;
    o.no_required = true;
    if (sluice_config_load(&o, &cfg, &err) == SLUICE_OK) {
        if (sluice_config_to_json(cfg, &j, &err) != SLUICE_OK)
            abort();
        json_decref(j);
    } else if (cfg != NULL || memchr(err.text, 0, sizeof(err.text)) == NULL) {
        abort();
    }
    if (sluice_study_runtime_load("fuzz.yaml", (const char *)data, size, cfg, &rt, &err) ==
        SLUICE_OK)
        sluice_study_runtime_free(rt);
    else if (rt != NULL)
        abort();
    sluice_config_free(cfg);
    return 0;
}
