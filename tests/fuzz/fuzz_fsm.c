/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_fsm.c - libFuzzer target for the state machine's event log.
 *
 * The input is parsed as a JSON array of log entries and replayed.  Checked
 * on every input: no crash, no leak (ASan), replay is deterministic (twice
 * gives equal launches), every parsed event survives a JSON round trip, and
 * once a launch is DONE no later entry changes its result or reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/fsm.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fold(const json_t *log)
{
    sluice_fsm_launch_t l;
    sluice_fsm_config_t cfg;
    size_t i;

    sluice_fsm_config_default(&cfg);
    cfg.pending_timeout = 20;
    cfg.miss_budget = 2;
    sluice_fsm_launch_init(&l, &cfg);
    for (i = 0; i < json_array_size(log); i++) {
        sluice_fsm_event_t ev;
        json_t *again = NULL;
        bool was_done = l.state == SLUICE_FSM_DONE;
        int result = l.result;
        char reason[SLUICE_FSM_REASON_MAX];

        memcpy(reason, l.reason, sizeof(reason));
        memset(&ev, 0, sizeof(ev));
        if (sluice_fsm_event_from_json(json_array_get(log, i), &ev, NULL) != SLUICE_OK)
            continue;
        if (sluice_fsm_event_to_json(&ev, &again, NULL) != SLUICE_OK)
            abort();
        json_decref(again);
        (void)sluice_fsm_apply(&l, &ev, NULL, NULL);
        if (was_done &&
            (l.state != SLUICE_FSM_DONE || l.result != result || strcmp(l.reason, reason) != 0))
            abort();
        sluice_fsm_event_clear(&ev);
        (void)sluice_fsm_due(&l, 1e6);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *log = json_loadb((const char *)data, size, 0, NULL);
    sluice_fsm_launch_t a, b;
    sluice_err ra, rb;

    if (log == NULL)
        return 0;
    ra = sluice_fsm_replay(NULL, log, &a, NULL);
    rb = sluice_fsm_replay(NULL, log, &b, NULL);
    if (ra != rb || (ra == SLUICE_OK && !sluice_fsm_launch_equal(&a, &b)))
        abort();
    if (json_is_array(log))
        fold(log);
    json_decref(log);
    return 0;
}
