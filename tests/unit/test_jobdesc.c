/* SPDX-License-Identifier: Apache-2.0 */
/* test_jobdesc.c - the neutral job model: env, JSON view, state tables,
 * wait status split. */
#include <criterion/criterion.h>

#include <string.h>

#include <sluice/jobdesc.h>

Test(jobdesc, setenv_copies_and_clear_zeroes)
{
    sluice_jobdesc_t d = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;
    char name[] = "PATH";

    cr_assert_eq(sluice_jobdesc_setenv(&d, name, "/bin", &err), SLUICE_OK);
    name[0] = 'X';
    cr_assert_str_eq(d.env[0].name, "PATH");
    cr_assert_eq(sluice_jobdesc_setenv(&d, "A=B", "x", &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_jobdesc_setenv(&d, "", "x", &err), SLUICE_EINVAL);
    cr_assert_eq(d.n_env, 1);
    sluice_jobdesc_clear(&d);
    cr_assert_eq(d.n_env, 0);
    cr_assert_null(d.env);
    sluice_jobdesc_clear(NULL);
}

Test(jobdesc, to_json_has_every_field)
{
    sluice_jobdesc_t d = {0};
    json_t *j;

    d.name = strdup("n");
    d.nodes = 2;
    d.exclusive = true;
    cr_assert_eq(sluice_jobdesc_setenv(&d, "LANG", "C", NULL), SLUICE_OK);
    j = sluice_jobdesc_to_json(&d);
    cr_assert_not_null(j);
    cr_assert_str_eq(json_string_value(json_object_get(j, "name")), "n");
    cr_assert(json_is_null(json_object_get(j, "partition")));
    cr_assert_eq(json_integer_value(json_object_get(j, "nodes")), 2);
    cr_assert(json_is_true(json_object_get(j, "exclusive")));
    cr_assert_str_eq(
        json_string_value(json_object_get(json_array_get(json_object_get(j, "env"), 0), "value")),
        "C");
    cr_assert_eq(json_object_size(j), 24);
    json_decref(j);
    sluice_jobdesc_clear(&d);
}

Test(jobdesc, base_table_round_trips)
{
    for (int b = 1; b < SLUICE_JOB_BASE_COUNT_; b++)
        cr_assert_eq(sluice_job_base_parse(sluice_job_base_name(b)), b);
    cr_assert_str_eq(sluice_job_base_name(SLUICE_JOB_NODE_FAIL), "NODE_FAIL");
    cr_assert_str_eq(sluice_job_base_name(99), "UNKNOWN");
    cr_assert_eq(sluice_job_base_parse("pending"), SLUICE_JOB_BASE_UNKNOWN);
    cr_assert_eq(sluice_job_base_parse(NULL), SLUICE_JOB_BASE_UNKNOWN);
}

Test(jobdesc, flag_table_round_trips)
{
    for (int i = 0; i < SLUICE_JOB_FLAG_COUNT_; i++) {
        uint32_t bit = UINT32_C(1) << i;
        cr_assert_eq(sluice_job_flag_parse(sluice_job_flag_name(bit)), bit);
    }
    cr_assert_eq(sluice_job_flag_parse("COMPLETING"), SLUICE_JOB_FLAG(COMPLETING));
    cr_assert_eq(sluice_job_flag_parse("RUNNING"), 0);
    cr_assert_null(sluice_job_flag_name(3));
}

Test(jobdesc, final_states)
{
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_BASE_UNKNOWN, 0));
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_PENDING, 0));
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_RUNNING, 0));
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_SUSPENDED, 0));
    cr_assert(sluice_job_is_final(SLUICE_JOB_COMPLETED, 0));
    cr_assert(sluice_job_is_final(SLUICE_JOB_OUT_OF_MEMORY, 0));
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_BASE_COUNT_, 0));
    /* ended, not done: the epilog or stage-out runs, or it is requeued */
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_COMPLETED, SLUICE_JOB_FLAG(COMPLETING)));
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_FAILED, SLUICE_JOB_FLAG(STAGE_OUT)));
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_NODE_FAIL, SLUICE_JOB_FLAG(REQUEUED)));
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_FAILED, SLUICE_JOB_FLAG(SPECIAL_EXIT)));
    cr_assert_not(sluice_job_is_final(SLUICE_JOB_CANCELLED, SLUICE_JOB_FLAG(REQUEUE_HOLD)));
    /* flags that change nothing */
    cr_assert(sluice_job_is_final(SLUICE_JOB_COMPLETED, SLUICE_JOB_FLAG(LAUNCH_FAILED)));
    cr_assert(sluice_job_is_final(SLUICE_JOB_TIMEOUT, SLUICE_JOB_FLAG(SIGNALING)));
}

Test(jobdesc, wait_status_split)
{
    static const struct {
        int64_t raw;
        int code, sig;
    } rows[] = {{0, 0, 0},     {256, 1, 0}, {768, 3, 0},          {15, 0, 15},     {9, 0, 9},
                {0x8b, 0, 11}, {-2, 0, 0},  {4294967294LL, 0, 0}, {0xff00, 255, 0}};

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int code = -1, sig = -1;
        sluice_wait_status_split(rows[i].raw, &code, &sig);
        cr_assert_eq(code, rows[i].code, "raw %lld", (long long)rows[i].raw);
        cr_assert_eq(sig, rows[i].sig, "raw %lld", (long long)rows[i].raw);
    }
    sluice_wait_status_split(256, NULL, NULL);
}
