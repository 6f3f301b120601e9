/* SPDX-License-Identifier: Apache-2.0 */
/* test_live_submit_many.c - the pooled cluster operations
 * (sluice_cluster_rest_t, submit_many) against the real testbed: several
 * held jobs POSTed 4 at a time, each on its own client; every outcome
 * belongs to its own request (one failed request in the batch does not
 * touch the others); a second batch reuses the clients.  Every job is
 * cancelled at the end.  A missing testbed is a failure, never a skip.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/client.h>
#include <sluice/ops.h>

#include "testbed.h"

#define N_JOBS 9
/* This request names a partition that does not exist.  Slurm 22.05 answers
 * HTTP 500 with error 2000, which proves nothing: UNCERTAIN, and it stays
 * that request's outcome alone. */
#define BAD 4

static void fill_desc(sluice_jobdesc_t *d, const char *name, const char *partition)
{
    char out[600];

    memset(d, 0, sizeof(*d));
    d->name = strdup(name);
    d->comment = strdup("sluice:e2e-many:1");
    d->partition = strdup(partition);
    d->time_limit = 5;
    d->nodes = 1;
    d->tasks_per_node = 1;
    d->hold = true;
    d->workdir = strdup(testbed_var("SLUICE_TB_CLUSTER_STORAGE_ROOT"));
    snprintf(out, sizeof(out), "%s/%s-%%j.out", testbed_var("SLUICE_TB_CLUSTER_STORAGE_ROOT"),
             name);
    d->std_out = strdup(out);
    d->std_err = strdup(out);
    d->script = strdup("#!/bin/sh\ntrue\n");
    cr_assert_eq(sluice_jobdesc_setenv(d, "PATH", "/usr/bin:/bin", NULL), SLUICE_OK);
}

/* One batch of N_JOBS; returns through ids[] the ids of the OK ones. */
static void batch(sluice_cluster_ops_t *ops, int round, uint64_t *ids)
{
    sluice_jobdesc_t d[N_JOBS];
    sluice_submit_req_t reqs[N_JOBS];
    sluice_submit_outcome oc[N_JOBS];
    sluice_submit_result_t res[N_JOBS];
    char name[N_JOBS][96];

    for (int i = 0; i < N_JOBS; i++) {
        snprintf(name[i], sizeof(name[i]), "sluice-e2e-many-%ld-%d-%d", (long)getpid(), round, i);
        fill_desc(&d[i], name[i],
                  i == BAD ? "no-such-partition" : testbed_var("SLUICE_TB_PARTITION"));
        reqs[i].descs = &d[i];
        reqs[i].n = 1;
    }
    memset(res, 0, sizeof(res));
    ops->submit_many(ops->arg, reqs, N_JOBS, 4, oc, res);
    for (int i = 0; i < N_JOBS; i++) {
        sluice_jobview_t *v = NULL;
        size_t n = 0;

        if (i == BAD) {
            cr_assert(oc[i] == SLUICE_SUBMIT_UNCERTAIN || oc[i] == SLUICE_SUBMIT_REJECTED,
                      "round %d: bad request: %d (%s)", round, oc[i], res[i].detail);
            cr_assert_eq(res[i].job_id, 0);
            ids[i] = 0;
            continue;
        }
        cr_assert_eq(oc[i], SLUICE_SUBMIT_OK, "round %d job %d: %d (%s)", round, i, oc[i],
                     res[i].detail);
        ids[i] = res[i].job_id;
        cr_assert_gt(ids[i], 0);
        for (int k = 0; k < i; k++)
            cr_assert_neq(ids[k], ids[i], "distinct job ids");
        /* the id answered for request i is the job named for request i */
        cr_assert_eq(ops->get_job(ops->arg, ids[i], &v, &n), SLUICE_LOOKUP_FOUND);
        cr_assert_geq(n, 1);
        cr_assert_str_eq(v[0].name, name[i]);
        cr_assert_eq(v[0].base, SLUICE_JOB_PENDING);
        for (size_t k = 0; k < n; k++)
            sluice_jobview_clear(&v[k]);
        free(v);
    }
    for (int i = 0; i < N_JOBS; i++)
        sluice_jobdesc_clear(&d[i]);
}

Test(live_submit_many, four_in_flight_each_outcome_its_own, .timeout = 300)
{
    sluice_config_t *cfg;
    sluice_client_t *client = NULL;
    sluice_cluster_rest_t *pool = NULL;
    sluice_cluster_ops_t ops;
    sluice_error_t err = SLUICE_ERROR_INIT;
    uint64_t ids[2][N_JOBS];

    testbed_env_load();
    cfg = testbed_config(false);
    cr_assert_not_null(cfg, TESTBED_HINT);
    cr_assert_eq(sluice_client_new_from_config(&client, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_cluster_rest_new(&pool, client, cfg, &err), SLUICE_OK, "%s", err.text);
    sluice_cluster_rest_ops(pool, &ops);
    cr_assert_not_null(ops.submit_many);
    batch(&ops, 1, ids[0]);
    batch(&ops, 2, ids[1]); /* the extra clients are reused */
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < N_JOBS; i++) {
            if (ids[r][i] != 0)
                cr_assert_eq(ops.cancel(ops.arg, ids[r][i], 0, &err), SLUICE_OK, "%s", err.text);
        }
    }
    sluice_cluster_rest_free(pool);
    sluice_client_free(client);
    sluice_config_free(cfg);
}
