/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_durations.c - every flag of `sluice` that takes a time span
 * (launch --heartbeat and $SLUICE_HEARTBEAT_S, check --probe-timeout,
 * probe --timeout, token mint --lifespan) through the real binary: the
 * site file's syntax ("90", "30s", "5m", "2h", "1d"), a bare number in
 * seconds, and a bad value or one out of range as a usage error (64) that
 * names the flag and the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "cmd_case.h"

static void setup(void)
{
    cmd_case_setup("dur");
}

TestSuite(cmd_durations, .init = setup, .fini = cmd_case_teardown, .timeout = 60);

static void put_key(void)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/key", cmd_dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("cluster-secret-key-0123456789abcd", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
}

/* exp - iat of the token `token mint --lifespan <lifespan> -o json` prints. */
static long long minted_lifespan(const char *lifespan)
{
    json_t *j, *claims;
    long long span;

    cr_assert_eq(cmd_sluice_split("token mint --key '%s/key' --user alice --lifespan %s -o json",
                                  cmd_dir, lifespan),
                 0, "--lifespan %s: %s", lifespan, cmd_errors());
    j = cmd_output_json();
    claims = json_object_get(j, "claims");
    cr_assert(json_is_integer(json_object_get(claims, "exp")), "%s", cmd_output());
    span = json_integer_value(json_object_get(claims, "exp")) -
           json_integer_value(json_object_get(claims, "iat"));
    json_decref(j);
    return span;
}

Test(cmd_durations, lifespan_takes_units_and_a_bare_number_is_seconds)
{
    put_key();
    cr_expect_eq(minted_lifespan("90"), 90);
    cr_expect_eq(minted_lifespan("90s"), 90);
    cr_expect_eq(minted_lifespan("30m"), 1800);
    cr_expect_eq(minted_lifespan("2h"), 7200);
    cr_expect_eq(minted_lifespan("1d"), 86400);
}

Test(cmd_durations, a_bad_duration_names_the_flag_and_the_reason)
{
    put_key();
    cr_assert_eq(
        cmd_sluice_split("token mint --key '%s/key' --user alice --lifespan 1.5h", cmd_dir), 64);
    cr_expect_not_null(strstr(cmd_errors(), "sluice token mint: --lifespan: expected a duration: "
                                            "seconds, or a number with s, m, h or d"),
                       "%s", cmd_errors());
    cr_expect_not_null(strstr(cmd_errors(), "got '1.5h'"), "%s", cmd_errors());
    cr_expect_not_null(strstr(cmd_errors(), "Run 'sluice token mint --help'"), "%s", cmd_errors());
    cr_expect_eq(cmd_output()[0], '\0', "nothing minted: %s", cmd_output());

    cr_assert_eq(cmd_sluice_split("token mint --key '%s/key' --user alice --lifespan 0", cmd_dir),
                 64);
    cr_expect_not_null(strstr(cmd_errors(), "--lifespan: expected a duration from 1s to 3650d; "
                                            "got '0'"),
                       "%s", cmd_errors());

    cr_assert_eq(cmd_sluice_split("probe --timeout 5x"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "sluice probe: --timeout: expected a duration"), "%s",
                       cmd_errors());
    cr_assert_eq(cmd_sluice_split("probe --timeout=10m"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "sluice probe: --timeout: expected a duration from 1s "
                                            "to 5m; got '10m' (10m)"),
                       "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("probe --timeout -5"), 64);

    cr_assert_eq(cmd_sluice_split("check --probe-job --probe-timeout 2h"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "sluice check: --probe-timeout: expected a duration "
                                            "from 1s to 1h; got '2h' (2h)"),
                       "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("check --probe-job --probe-timeout ''"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "--probe-timeout"), "%s", cmd_errors());
}

Test(cmd_durations, a_good_duration_passes_the_parser)
{
    /* nothing listens there: the command gets past its options to 69 */
    cr_expect_eq(cmd_sluice_split("probe --timeout 2s --server 'unix:%s/none.sock'", cmd_dir), 69,
                 "%s", cmd_errors());
    cr_expect_eq(cmd_sluice_split("probe --timeout 1m --server 'unix:%s/none.sock'", cmd_dir), 69,
                 "%s", cmd_errors());
    cr_expect_eq(cmd_sluice_split("probe --timeout 300 --server 'unix:%s/none.sock'", cmd_dir), 69,
                 "%s", cmd_errors());
}

Test(cmd_durations, heartbeat_flag_and_variable)
{
    char req[512];
    FILE *f;

    snprintf(req, sizeof(req), "%s/req.json", cmd_dir);
    f = fopen(req, "w");
    cr_assert_not_null(f);
    fputs("{}\n", f);
    fclose(f);

    cr_assert_eq(cmd_sluice_split("launch '%s' --wait --heartbeat 5 minutes", req), 64);
    cr_assert_eq(cmd_sluice_split("launch '%s' --wait --heartbeat 5min", req), 64);
    cr_expect_not_null(strstr(cmd_errors(), "sluice launch: --heartbeat: expected a duration"),
                       "%s", cmd_errors());
    cr_expect_not_null(strstr(cmd_errors(), "got '5min'"), "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("launch '%s' --wait --heartbeat 2d", req), 64);
    cr_expect_not_null(strstr(cmd_errors(), "--heartbeat: expected a duration from 0s to 1d; got "
                                            "'2d' (2d)"),
                       "%s", cmd_errors());

    /* the variable takes the same syntax, and its error names it */
    setenv("SLUICE_HEARTBEAT_S", "soon", 1);
    cr_assert_eq(cmd_sluice_split("launch '%s' --wait", req), 64);
    cr_expect_not_null(strstr(cmd_errors(), "sluice launch: SLUICE_HEARTBEAT_S: expected a "
                                            "duration"),
                       "%s", cmd_errors());
    /* a good value gets past the heartbeat to the request: not a usage error */
    setenv("SLUICE_HEARTBEAT_S", "10m", 1);
    cr_expect_neq(cmd_sluice_split("launch '%s' --wait --state-dir '%s/st'", req, cmd_dir), 64,
                  "%s", cmd_errors());
    unsetenv("SLUICE_HEARTBEAT_S");
    cr_expect_neq(
        cmd_sluice_split("launch '%s' --wait --heartbeat 0 --state-dir '%s/st'", req, cmd_dir), 64,
        "%s", cmd_errors());
}
