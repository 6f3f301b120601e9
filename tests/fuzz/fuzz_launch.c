/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_launch.c - libFuzzer target for launch requests.
 *
 * Parses the input as a launch request under a fixed permissive policy
 * (every profile, any partition/account/qos, requeue allowed, a small GPU
 * catalogue with one fail-closed series).  Invariants checked on every
 * accepted input: every pool has a command, and the canonical JSON parses
 * back (as a stored launch, which has no secret values at all) to the same
 * hash, so the canonical text cannot depend on any secret value.
 * Rejected inputs must leave an error text and no model.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/launch.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const any[] = {"*"};
static const sluice_launch_series_t series[] = {
    {"a100", "gpu_a100", "gpu:a100", 8},
    {"l40s", "gpu_l40s", NULL, 0},
    {"h100", NULL, NULL, 0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sluice_launch_policy_t pol;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL, *back = NULL;
    char *text = NULL, *back_text = NULL;
    size_t i;

    memset(&pol, 0, sizeof(pol));
    pol.default_profile = SLUICE_LAUNCH_PROFILE_APPTAINER;
    pol.allowed_profiles = SLUICE_LAUNCH_PROFILE_BIT(SLUICE_LAUNCH_PROFILE_NONE) |
                           SLUICE_LAUNCH_PROFILE_BIT(SLUICE_LAUNCH_PROFILE_APPTAINER) |
                           SLUICE_LAUNCH_PROFILE_BIT(SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS);
    pol.partitions = any;
    pol.n_partitions = 1;
    pol.accounts = any;
    pol.n_accounts = 1;
    pol.qos = any;
    pol.n_qos = 1;
    pol.series = series;
    pol.n_series = 3;
    pol.pending_timeout = 600;
    pol.allow_requeue = true;

    if (sluice_launch_parse(&l, (const char *)data, size, &pol, 0, &err) != SLUICE_OK) {
        if (l != NULL || err.text[0] == '\0')
            abort();
        return 0;
    }
    text = sluice_launch_to_json(l, NULL);
    if (text == NULL)
        abort();
    for (i = 0; i < sluice_launch_pool_count(l); i++)
        if (sluice_launch_pool(l, i)->command == NULL)
            abort();
    if (sluice_launch_parse(&back, text, strlen(text), &pol, SLUICE_LAUNCH_PARSE_STORED, &err) !=
        SLUICE_OK)
        abort();
    back_text = sluice_launch_to_json(back, NULL);
    if (back_text == NULL || strcmp(text, back_text) != 0)
        abort();
    free(back_text);
    free(text);
    sluice_launch_free(back);
    sluice_launch_free(l);
    return 0;
}
