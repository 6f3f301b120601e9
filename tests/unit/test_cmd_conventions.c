/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_conventions.c - the command-line conventions every `sluice`
 * command shares, through the real binary ($SLUICE_BIN): options in any
 * order and `--opt=value`, usage errors that name the option, `help CMD`,
 * `-o json` with the API's field names, exit 66 for a missing input file,
 * no store created by a command that only reads, and the final line of a
 * launch that had already ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/accept.h>
#include <sluice/sluice.h>
#include <sluice/store.h>
#include <sluice/supervisor.h>

#include "cmd_case.h"
#include "fake_slurmrestd.h"
#include "sluice_assert.h"

static void setup(void)
{
    cmd_case_setup("conv");
    unsetenv("SLUICE_SERVER");
    unsetenv("SLUICE_STATE_DIR");
    unsetenv("SLUICE_CONFIG");
}

TestSuite(cmd_conventions, .init = setup, .fini = cmd_case_teardown, .timeout = 120);

/* Every command and subcommand that runs (the table's, hidden ones aside). */
static const char *const commands[] = {"version",     "config show", "token mint", "token show",
                                       "token check", "launch",      "render",     "status",
                                       "ls",          "logs",        "cancel",     "serve",
                                       "check",       "probe",       "help",       NULL};

static void write_text(const char *name, const char *text, mode_t mode)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", cmd_dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, mode), 0);
}

Test(cmd_conventions, options_may_follow_the_operand_in_either_form)
{
    json_t *j;

    cmd_add_launch("alpha");
    /* the README's order: the operand first */
    cr_assert_eq(cmd_sluice("status alpha --state-dir '%s'", cmd_dir), 0, "%s", cmd_output());
    cr_expect_not_null(strstr(cmd_output(), "state      ACCEPTED"), "%s", cmd_output());
    cr_assert_eq(cmd_sluice_split("status alpha -o json --state-dir '%s'", cmd_dir), 0, "%s",
                 cmd_errors());
    j = cmd_output_json();
    cr_expect_str_eq(json_string_value(json_object_get(j, "launch_id")), "alpha");
    json_decref(j);
    /* --opt=value, the long name of -o, and -ojson */
    cr_assert_eq(cmd_sluice_split("status alpha --state-dir='%s' --output=json", cmd_dir), 0, "%s",
                 cmd_errors());
    json_decref(cmd_output_json());
    cr_assert_eq(cmd_sluice_split("status --output json alpha --state-dir '%s'", cmd_dir), 0, "%s",
                 cmd_errors());
    json_decref(cmd_output_json());
    cr_assert_eq(cmd_sluice_split("ls -ojson --state-dir='%s'", cmd_dir), 0, "%s", cmd_errors());
    json_decref(cmd_output_json());
    /* `--` ends the options; $POSIXLY_CORRECT does not change the order */
    cr_assert_eq(cmd_sluice("status --state-dir '%s' -- alpha", cmd_dir), 0, "%s", cmd_output());
    cr_assert_eq(cmd_sluice("status alpha -- --state-dir '%s'", cmd_dir), 64, "%s", cmd_output());
    cr_assert_eq(setenv("POSIXLY_CORRECT", "1", 1), 0);
    cr_assert_eq(cmd_sluice("status alpha --state-dir '%s'", cmd_dir), 0, "%s", cmd_output());
    unsetenv("POSIXLY_CORRECT");
    /* a script that cancels with the operand first cancels */
    cr_assert_eq(cmd_sluice("cancel alpha --state-dir '%s'", cmd_dir), 0, "%s", cmd_output());
    cr_assert_eq(cmd_sluice("status alpha -o json --state-dir='%s'", cmd_dir), 0);
    cr_expect_not_null(strstr(cmd_output(), "\"cancel-asked\""), "%s", cmd_output());
}

Test(cmd_conventions, a_usage_error_names_the_option_then_points_to_help)
{
    char want[256];

    for (size_t i = 0; commands[i] != NULL; i++) {
        cr_assert_eq(cmd_sluice_split("%s --bogus", commands[i]), 64, "%s", commands[i]);
        snprintf(want, sizeof(want),
                 "sluice %s: unknown option '--bogus'\n"
                 "Run 'sluice %s --help' for its usage and options.\n",
                 commands[i], commands[i]);
        cr_expect_str_eq(cmd_errors(), want, "%s", commands[i]);
        cr_expect_str_empty(cmd_output(), "%s", commands[i]);
    }
    /* A misspelt option or command: the one clearly meant. */
    cr_assert_eq(cmd_sluice_split("status x --stat-dir /x"), 64);
    cr_expect_str_eq(cmd_errors(), "sluice status: unknown option '--stat-dir' (did you mean "
                                   "--state-dir?)\nRun 'sluice status --help' for its usage and "
                                   "options.\n");
    cr_assert_eq(cmd_sluice_split("stauts x"), 64);
    cr_expect_str_eq(cmd_errors(), "sluice: unknown command 'stauts' (did you mean status?)\n"
                                   "Run 'sluice --help' for the commands.\n");
    cr_assert_eq(cmd_sluice_split("frobnicate"), 64);
    cr_expect_str_eq(
        cmd_errors(),
        "sluice: unknown command 'frobnicate'\nRun 'sluice --help' for the commands.\n");
    cr_assert_eq(cmd_sluice_split("token mnt"), 64);
    cr_expect_str_eq(cmd_errors(), "sluice token: unknown command 'mnt' (did you mean mint?)\n"
                                   "Run 'sluice token --help' for its usage and options.\n");
    cr_assert_eq(cmd_sluice_split("status x --bogus=1"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "unknown option '--bogus'"), "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("status x --state-dir"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "option '--state-dir' needs a value"), "%s",
                       cmd_errors());
    cr_assert_eq(cmd_sluice_split("ls --live=yes"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "option '--live' takes no value"), "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("ls --st DONE"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "ambiguous option '--st'"), "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("status x -o yaml"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "expects one of: text json; got 'yaml'"), "%s",
                       cmd_errors());
    cr_assert_eq(cmd_sluice_split("status x y"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "unexpected argument 'y'"), "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("status -x a"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "unknown option '-x'"), "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("nosuch"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "unknown command 'nosuch'"), "%s", cmd_errors());
}

Test(cmd_conventions, help_of_a_command_is_its_help_and_exit_0)
{
    char want[128], *by_flag;

    for (size_t i = 0; commands[i] != NULL; i++) {
        cr_assert_eq(cmd_sluice_split("%s --help", commands[i]), 0, "%s", commands[i]);
        snprintf(want, sizeof(want), "usage: sluice %s ", commands[i]);
        cr_expect(strncmp(cmd_output(), want, strlen(want)) == 0, "%s: %s", commands[i],
                  cmd_output());
        by_flag = strdup(cmd_output());
        cr_assert_eq(cmd_sluice_split("help %s", commands[i]), 0, "%s", commands[i]);
        cr_expect_str_eq(cmd_output(), by_flag, "help %s", commands[i]);
        cr_assert_eq(cmd_sluice_split("%s -h", commands[i]), 0, "%s", commands[i]);
        cr_expect_str_eq(cmd_output(), by_flag, "%s -h", commands[i]);
        free(by_flag);
    }
    cr_assert_eq(cmd_sluice_split("help token"), 0);
    cr_expect_not_null(strstr(cmd_output(), "usage: sluice token mint"), "%s", cmd_output());
    cr_assert_eq(cmd_sluice_split("help"), 0);
    cr_expect_not_null(strstr(cmd_output(), "  launch "), "%s", cmd_output());
    cr_assert_eq(cmd_sluice_split("help nosuch"), 64);
    cr_expect_not_null(strstr(cmd_errors(), "no command 'nosuch'"), "%s", cmd_errors());
}

Test(cmd_conventions, json_output_has_the_api_field_names)
{
    json_t *j, *t;

    /* version */
    cr_assert_eq(cmd_sluice_split("version -o json"), 0, "%s", cmd_errors());
    j = cmd_output_json();
    cr_expect(json_is_string(json_object_get(j, "version")), "%s", cmd_output());
    cr_expect(json_is_string(json_object_get(j, "library")), "%s", cmd_output());
    json_decref(j);
    /* ls: the page of GET /v1/launches */
    cmd_add_launch("alpha");
    cr_assert_eq(cmd_sluice_split("ls --state-dir '%s' --output json", cmd_dir), 0);
    j = cmd_output_json();
    cr_expect_eq(json_array_size(json_object_get(j, "items")), 1, "%s", cmd_output());
    cr_expect(json_is_null(json_object_get(j, "next_cursor")), "%s", cmd_output());
    cr_expect_null(json_object_get(j, "launches"), "%s", cmd_output());
    json_decref(j);
    /* a live launch has no result yet: null, as the API says */
    cr_assert_eq(cmd_sluice_split("status alpha --state-dir '%s' -o json", cmd_dir), 0);
    j = cmd_output_json();
    cr_expect(json_is_null(json_object_get(j, "result_code")), "%s", cmd_output());
    cr_expect_null(json_object_get(j, "result"), "%s", cmd_output());
    json_decref(j);
    /* cancel: the launch, as DELETE answers */
    cr_assert_eq(cmd_sluice_split("cancel alpha --state-dir '%s' -o json", cmd_dir), 0);
    j = cmd_output_json();
    cr_expect_str_eq(json_string_value(json_object_get(j, "launch_id")), "alpha");
    cr_expect(json_is_array(json_object_get(j, "events")), "%s", cmd_output());
    json_decref(j);
    /* token mint, show and check */
    write_text("key", "0123456789abcdef0123456789abcdef", 0600);
    cr_assert_eq(cmd_sluice_split("token mint --key '%s/key' --user alice -o json", cmd_dir), 0,
                 "%s", cmd_errors());
    j = cmd_output_json();
    cr_assert(json_is_string(json_object_get(j, "token")), "%s", cmd_output());
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "claims"), "sun")),
                     "alice");
    write_text("tok", json_string_value(json_object_get(j, "token")), 0600);
    json_decref(j);
    cr_assert_eq(cmd_sluice_split("token show '%s/tok' -o json", cmd_dir), 0, "%s", cmd_errors());
    j = cmd_output_json();
    t = json_object_get(j, "claims");
    cr_expect_str_eq(json_string_value(json_object_get(t, "sun")), "alice");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "header"), "alg")),
                     "HS256");
    cr_expect(json_is_integer(json_object_get(j, "expires_in")), "%s", cmd_output());
    json_decref(j);
    cr_assert_eq(
        cmd_sluice_split("token check --output=json --key '%s/key' '%s/tok'", cmd_dir, cmd_dir), 0,
        "%s", cmd_errors());
    j = cmd_output_json();
    cr_expect(json_is_true(json_object_get(j, "valid")), "%s", cmd_output());
    json_decref(j);
}

Test(cmd_conventions, a_missing_input_file_is_66)
{
    cr_assert_eq(cmd_sluice_split("render '%s/none.json'", cmd_dir), 66);
    cr_expect_not_null(strstr(cmd_errors(), "none.json: No such file or directory"), "%s",
                       cmd_errors());
    cr_assert_eq(cmd_sluice_split("launch '%s/none.json' --wait", cmd_dir), 66, "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("launch '%s/none.json' --server http://127.0.0.1:1", cmd_dir), 66,
                 "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("token show '%s/none'", cmd_dir), 66);
    cr_assert_eq(cmd_sluice_split("token check --key '%s/none' -", cmd_dir), 66);
    cr_assert_eq(cmd_sluice_split("config show --config '%s/none.yaml'", cmd_dir), 66);
    cr_assert_eq(cmd_sluice_split("check --config='%s/none.yaml'", cmd_dir), 66);
    cr_assert_eq(setenv("SLUICE_CONFIG", "/nonexistent/site.yaml", 1), 0);
    cr_assert_eq(cmd_sluice_split("config show"), 66, "%s", cmd_errors());
    cr_expect_not_null(strstr(cmd_errors(), "/nonexistent/site.yaml"), "%s", cmd_errors());
    unsetenv("SLUICE_CONFIG");
    cr_assert_eq(
        cmd_sluice_split("status x --server http://127.0.0.1:1 --api-token-file '%s/no'", cmd_dir),
        66, "%s", cmd_errors());
    cr_assert_eq(setenv("SLUICE_API_TOKEN_FILE", "/nonexistent/token", 1), 0);
    cr_assert_eq(cmd_sluice_split("status x --server http://127.0.0.1:1"), 66, "%s", cmd_errors());
    unsetenv("SLUICE_API_TOKEN_FILE");
    /* a usage error is reported before a missing file */
    cr_assert_eq(cmd_sluice_split("token mint --key '%s/none' --user u --alg ES256", cmd_dir), 64);
}

Test(cmd_conventions, a_command_that_reads_never_creates_a_store)
{
    static const char *const reads[] = {"status x", "ls", "logs x", "cancel x", NULL};
    char dir[400];
    struct stat st;

    snprintf(dir, sizeof(dir), "%s/none/state", cmd_dir);
    for (size_t i = 0; reads[i] != NULL; i++) {
        cr_assert_eq(cmd_sluice_split("%s --state-dir '%s'", reads[i], dir), 66, "%s: %s", reads[i],
                     cmd_errors());
        cr_expect_not_null(strstr(cmd_errors(), "no store at "), "%s", cmd_errors());
        cr_expect_neq(stat(dir, &st), 0, "%s created %s", reads[i], dir);
    }
    /* the default store ($SLUICE_STATE_DIR here) the same */
    cr_assert_eq(setenv("SLUICE_STATE_DIR", dir, 1), 0);
    for (size_t i = 0; reads[i] != NULL; i++) {
        cr_assert_eq(cmd_sluice_split("%s", reads[i]), 66, "%s: %s", reads[i], cmd_errors());
        cr_expect_neq(stat(dir, &st), 0, "%s created %s", reads[i], dir);
    }
    unsetenv("SLUICE_STATE_DIR");
}

/* A store holding launch done-1 of site-1 that ended WORKLOAD_102, 202 ms
 * after it was accepted; the site file and the request file to launch it
 * again (rest.url: a fake slurmrestd that is never asked). */
static void store_with_a_finished_launch(fake_server_t *fs, char *site, char *req, size_t size)
{
    const char *text = "{\"launch_id\": \"done-1\", \"site\": \"site-1\", \"profile\": \"none\", "
                       "\"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": "
                       "\"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}";
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_supervisor_opts_t so = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_t *cfg = NULL;
    sluice_supervisor_t *sup = NULL;
    sluice_store_t *store = NULL;
    json_t *launch = NULL, *ctx;
    char yaml[2048], storage[400];
    int64_t created;

    write_text("key", "0123456789abcdef0123456789abcdef", 0600);
    snprintf(storage, sizeof(storage), "%s/storage", cmd_dir);
    cr_assert_eq(mkdir(storage, 0700), 0);
    snprintf(yaml, sizeof(yaml),
             "site:\n  name: site-1\n"
             "rest:\n  url: %s\n  api_version: v0.0.40\n  user: alice\n  jwt_key_file: %s/key\n"
             "storage:\n  root: %s\n  cluster_root: %s\n"
             "job_launcher:\n  sandbox: none\n",
             fake_url(fs), cmd_dir, storage, storage);
    write_text("site.yaml", yaml, 0600);
    write_text("req.json", text, 0600);
    snprintf(site, size, "%s/site.yaml", cmd_dir);
    snprintf(req, size, "%s/req.json", cmd_dir);
    co.path = site;
    cr_assert_sluice_ok(sluice_config_load(&co, &cfg, &err), &err);
    so.state_dir = cmd_dir;
    cr_assert_sluice_ok(sluice_supervisor_open(&sup, cfg, &so, NULL, &err), &err);
    cr_assert_sluice_ok(sluice_accept(NULL, &outcome, NULL, sluice_supervisor_launcher(sup), cfg,
                                      text, strlen(text), &ao, &err),
                        &err);
    sluice_supervisor_close(sup);
    sluice_config_free(cfg);
    /* it ended, as a supervisor records it */
    cr_assert_sluice_ok(sluice_store_open(&store, cmd_dir, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_launch(store, "done-1", &launch, &err), &err);
    created = (int64_t)json_integer_value(json_object_get(launch, "created_ms"));
    json_decref(launch);
    sum.state = "DONE";
    sum.terminal = 1;
    sum.set_result = 1;
    sum.result_code = 102;
    sum.reason = "workload exit 102";
    ctx = json_pack("{s:[{s:i s:s}]}", "jobs", "job_id", 42, "state", "FAILED");
    cr_assert_sluice_ok(sluice_store_append_event_and_update(store, "done-1", "observed", ctx, NULL,
                                                             created + 202, &sum, NULL, &err),
                        &err);
    json_decref(ctx);
    /* bookkeeping after the end, as the archive writes */
    cr_assert_sluice_ok(sluice_store_append_event(store, "done-1", "archived", NULL, NULL,
                                                  created + 500, NULL, &err),
                        &err);
    sluice_store_close(store);
}

Test(cmd_conventions, launching_a_finished_launch_again_prints_its_final_line)
{
    fake_server_t *fs = fake_start(0);
    char site[400], req[400];
    json_t *j;

    cr_assert_not_null(fs);
    store_with_a_finished_launch(fs, site, req, sizeof(req));
    cr_assert_eq(
        cmd_sluice_split("launch '%s' --wait --config '%s' --state-dir '%s'", req, site, cmd_dir),
        102, "%s%s", cmd_output(), cmd_errors());
    cr_expect_not_null(strstr(cmd_output(), "launch done-1 already known: resuming it"), "%s",
                       cmd_output());
    cr_expect_not_null(strstr(cmd_output(), "] DONE       slurm=FAILED result=WORKLOAD_102(102) "
                                            "workload exit 102\n"),
                       "%s", cmd_output());
    /* the same as one JSON object, its numbers as numbers */
    cr_assert_eq(cmd_sluice_split("launch '%s' --wait --config '%s' --state-dir '%s' -o json", req,
                                  site, cmd_dir),
                 102, "%s%s", cmd_output(), cmd_errors());
    j = cmd_output_json();
    cr_expect_str_eq(json_string_value(json_object_get(j, "state")), "DONE");
    cr_expect_eq(json_integer_value(json_object_get(j, "result_code")), 102);
    cr_expect_str_eq(json_string_value(json_object_get(j, "slurm_state")), "FAILED");
    cr_expect_str_eq(json_string_value(json_object_get(j, "event")), "observed");
    cr_expect_null(json_object_get(j, "result"), "%s", cmd_output());
    json_decref(j);
    cr_expect_not_null(strstr(cmd_output(), "\"elapsed_s\":0.202"), "%s", cmd_output());
    cr_expect_null(strstr(cmd_output(), "0.2020000"), "%s", cmd_output());
    /* nothing was asked of slurmrestd */
    cr_expect_eq(fake_request_count(fs), 0);
    fake_stop(fs);
}

/* The log on stderr: --log-level / --log-format on every command, the
 * SLUICE_LOG_* variables below them, log.level / log.format in the site
 * file below those; a bad value of any of them names itself. */
#define TEST_JWT                                                                                   \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."                                                        \
    "eyJleHAiOjQxMDI0NDQ4MDAsImlhdCI6MTcwMDAwMDAwMCwic3VuIjoi"                                     \
    "YWxpY2UifQ.c2ln"

Test(cmd_conventions, log_level_and_format_from_flag_environment_and_site)
{
    char tok[512];
    json_t *line;

    write_text("tok.jwt", TEST_JWT "\n", 0644); /* group-readable: one warning */
    snprintf(tok, sizeof(tok), "%s/tok.jwt", cmd_dir);

    /* JSON lines, one object per line, with the subsystem. */
    cr_assert_eq(cmd_sluice_split("token show '%s' --log-format=json", tok), 0);
    line = json_loads(cmd_errors(), 0, NULL);
    cr_assert_not_null(line, "not one JSON line: %s", cmd_errors());
    cr_assert_str_eq(json_string_value(json_object_get(line, "level")), "warning");
    cr_assert_str_eq(json_string_value(json_object_get(line, "subsystem")), "auth_token");
    cr_assert_not_null(
        strstr(json_string_value(json_object_get(line, "msg")), "readable by group"));
    cr_assert_not_null(json_object_get(line, "time"));
    json_decref(line);
    /* The text default has the time, the level and the subsystem. */
    cr_assert_eq(cmd_sluice_split("token show '%s'", tok), 0);
    cr_assert_not_null(strstr(cmd_errors(), "Z warning auth_token: token file "), "%s",
                       cmd_errors());
    /* Level error hides the warning; the environment says journald. */
    cr_assert_eq(cmd_sluice_split("token show --log-level error '%s'", tok), 0);
    cr_assert_str_eq(cmd_errors(), "");
    setenv("SLUICE_LOG_FORMAT", "journald", 1);
    cr_assert_eq(cmd_sluice_split("token show '%s'", tok), 0);
    cr_assert(strncmp(cmd_errors(), "<4>auth_token: ", 15) == 0, "%s", cmd_errors());
    /* ... and the flag wins over the environment. */
    cr_assert_eq(cmd_sluice_split("token show '%s' --log-format text", tok), 0);
    cr_assert_not_null(strstr(cmd_errors(), " warning auth_token: "), "%s", cmd_errors());
    unsetenv("SLUICE_LOG_FORMAT");

    /* Bad values name where they came from. */
    cr_assert_eq(cmd_sluice("version --log-level=loud"), 64);
    cr_assert_not_null(strstr(cmd_output(), "option '--log-level' expects one of"), "%s",
                       cmd_output());
    setenv("SLUICE_LOG_LEVEL", "loud", 1);
    cr_assert_eq(cmd_sluice("version"), 64);
    cr_assert_not_null(strstr(cmd_output(), "SLUICE_LOG_LEVEL: 'loud' is not a level"), "%s",
                       cmd_output());
    unsetenv("SLUICE_LOG_LEVEL");
    write_text("site.yaml", "log:\n  level: info\n  format: jsonl\n", 0644);
    cr_assert_eq(cmd_sluice("config show --config '%s/site.yaml'", cmd_dir), 78);
    cr_assert_not_null(strstr(cmd_output(), "log.format: expected text, json or journald"), "%s",
                       cmd_output());
}
