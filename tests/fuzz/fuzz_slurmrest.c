/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_slurmrest.c - libFuzzer target for the slurmrestd response parsers.
 *
 * The input is decoded as JSON and handed to every parser of every version.
 * Invariants: no crash, no leak (ASan), and a failed parse leaves its
 * result struct empty. */
#include <stdint.h>
#include <stdlib.h>

#include "slurm/slurmrest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);

    if (j == NULL)
        return 0;
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_envelope_t e = {0};
        sluice_rest_submit_t s = {0};
        sluice_rest_jobs_t jobs = {0};
        sluice_rest_job_states_t st = {0};
        sluice_rest_diag_t d = {0};
        sluice_rest_nodes_t n = {0};
        sluice_rest_ping_t p = {0};
        sluice_rest_openapi_ops_t o = {0, 0};

        if (sluice_rest_parse_envelope(v, j, &e, NULL) != SLUICE_OK && e.n_errors != 0)
            abort();
        sluice_rest_no_job_changes(&e);
        sluice_rest_first_error(&e, NULL, NULL);
        sluice_rest_envelope_clear(&e);
        sluice_rest_parse_submit(v, j, &s, NULL);
        sluice_rest_submit_clear(&s);
        if (sluice_rest_parse_jobs(v, j, &jobs, NULL) != SLUICE_OK && jobs.n_jobs != 0)
            abort();
        sluice_rest_jobs_clear(&jobs);
        sluice_rest_parse_acct_jobs(v, j, &jobs, NULL);
        sluice_rest_jobs_clear(&jobs);
        sluice_rest_parse_job_states(v, j, &st, NULL);
        sluice_rest_job_states_clear(&st);
        sluice_rest_parse_diag(v, j, &d, NULL);
        sluice_rest_diag_rpc_count(&d, "REQUEST_JOB_INFO");
        sluice_rest_diag_clear(&d);
        sluice_rest_parse_nodes(v, j, &n, NULL);
        sluice_rest_nodes_clear(&n);
        sluice_rest_parse_ping(v, j, &p, NULL);
        sluice_rest_ping_clear(&p);
        if (sluice_rest_openapi_ops(j, v, &o, NULL) == SLUICE_OK && o.deprecated > o.operations)
            abort();
    }
    json_decref(j);
    return 0;
}
