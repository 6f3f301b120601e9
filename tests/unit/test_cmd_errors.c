/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_errors.c - `sluice render` and `sluice launch` print every field
 * error of a request, one line each naming its path, in request order,
 * through the real binary ($SLUICE_BIN); the exit code stays 65. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "cmd_case.h"

static void setup(void)
{
    cmd_case_setup("errors");
    unsetenv("SLUICE_SERVER");
    unsetenv("SLUICE_STATE_DIR");
    unsetenv("SLUICE_CONFIG");
}

TestSuite(cmd_errors, .init = setup, .fini = cmd_case_teardown, .timeout = 60);

static void write_text(const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", cmd_dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
}

static void site(void)
{
    char yaml[2048], storage[400];

    write_text("key", "0123456789abcdef0123456789abcdef");
    snprintf(storage, sizeof(storage), "%s/storage", cmd_dir);
    cr_assert_eq(mkdir(storage, 0700), 0);
    /* slurmrestd is never reached: the request is refused before */
    snprintf(yaml, sizeof(yaml),
             "site:\n  name: site-1\n"
             "rest:\n  url: http://127.0.0.1:1\n  api_version: v0.0.40\n  user: alice\n"
             "  jwt_key_file: %s/key\n"
             "storage:\n  root: %s\n  cluster_root: %s\n"
             "job_launcher:\n  sandbox: none\n",
             cmd_dir, storage, storage);
    write_text("site.yaml", yaml);
    write_text("req.json",
               "{\"launch_id\": \"bad-1\", \"site\": \"site-1\", \"command\": \"/bin/true\", "
               "\"pools\": [{\"name\": \"a\", \"nodes\": 0}, {\"name\": \"b\"}, "
               "{\"name\": \"c\", \"cpus_per_node\": 0}], \"time_limit\": \"soon\"}");
}

static void expect_three_lines(const char *errs)
{
    const char *a = strstr(errs, "sluice: pools[0].nodes: expected an integer between 1 and");
    const char *b = strstr(errs, "sluice: pools[2].cpus_per_node: expected an integer between 1");
    const char *c = strstr(errs, "sluice: time_limit: expected minutes or a Slurm time");
    size_t lines = 0;

    cr_expect(a != NULL && b != NULL && c != NULL, "%s", errs);
    cr_expect(a < b && b < c, "request order: %s", errs);
    for (; *errs; errs++)
        lines += *errs == '\n';
    cr_expect_eq(lines, 3, "one line per error");
}

Test(cmd_errors, render_prints_every_field_error)
{
    site();
    cr_assert_eq(cmd_sluice_split("render '%s/req.json' --config '%s/site.yaml'", cmd_dir, cmd_dir),
                 65, "%s", cmd_errors());
    expect_three_lines(cmd_errors());
}

Test(cmd_errors, launch_prints_every_field_error)
{
    site();
    cr_assert_eq(
        cmd_sluice_split("launch '%s/req.json' --wait --config '%s/site.yaml' --state-dir '%s'",
                         cmd_dir, cmd_dir, cmd_dir),
        65, "%s", cmd_errors());
    expect_three_lines(cmd_errors());
}

Test(cmd_errors, a_json_syntax_error_names_the_file)
{
    site();
    write_text("broken.json", "{\"launch_id\": \"x\",\n  \"site\": }\n");
    cr_assert_eq(
        cmd_sluice_split("render '%s/broken.json' --config '%s/site.yaml'", cmd_dir, cmd_dir), 65,
        "%s", cmd_errors());
    char want[600];
    snprintf(want, sizeof(want),
             "sluice: %s/broken.json: invalid JSON at line 2, column 11: unexpected token\n",
             cmd_dir);
    cr_expect_str_eq(cmd_errors(), want);
}

Test(cmd_errors, no_site_file_given_says_so)
{
    site();
    unsetenv("SLUICE_CONFIG");
    unsetenv("FORGE_SLURM_REST_URL");
    unsetenv("SLUICE_REST_URL");
    cr_assert_eq(cmd_sluice_split("render '%s/req.json'", cmd_dir), 78, "%s", cmd_errors());
    cr_expect_str_eq(cmd_errors(),
                     "sluice: no site file given: pass --config FILE or set SLUICE_CONFIG=FILE\n");
    cr_assert_eq(cmd_sluice_split("config show"), 78, "%s", cmd_errors());
    cr_expect_str_eq(cmd_errors(),
                     "sluice: no site file given: pass --config FILE or set SLUICE_CONFIG=FILE\n");
    /* A configuration from the environment alone names its own missing key. */
    cr_assert_eq(cmd_sluice_split("config show --set rest.url=https://r:1"), 78, "%s",
                 cmd_errors());
    cr_expect_str_eq(cmd_errors(), "sluice: <config>: storage.root: required (set storage.root, "
                                   "FORGE_STORAGE_ROOT or --set storage.root=...)\n");
}
