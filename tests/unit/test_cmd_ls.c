/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_ls.c - `sluice ls` through the real binary ($SLUICE_BIN)
 * against a store filled through the library. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include <sluice/store.h>

static char dir[256];
static char out_path[300];
static const char *bin;

static void setup(void)
{
    bin = getenv("SLUICE_BIN");
    if (bin == NULL)
        cr_skip_test("SLUICE_BIN is not set (run through ctest)");
    snprintf(dir, sizeof(dir), "/tmp/sluice-cmdls-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(out_path, sizeof(out_path), "%s/out.txt", dir);
}

static void teardown(void)
{
    char cmd[300];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", dir);
}

TestSuite(cmd_ls, .init = setup, .fini = teardown, .timeout = 60);

/* Run `sluice ARGS` with stdout+stderr into out_path; returns its exit code. */
static int sluice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sluice(const char *fmt, ...)
{
    char args[1024], cmd[2048];
    va_list ap;
    int st;

    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>&1", bin, args, out_path);
    st = system(cmd);
    cr_assert(WIFEXITED(st), "%s", cmd);
    return WEXITSTATUS(st);
}

static char *output(void)
{
    static char text[65536];
    FILE *f = fopen(out_path, "r");
    size_t n;

    cr_assert_not_null(f);
    n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void add_launch(const char *id)
{
    sluice_store_t *s = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_pack("{s:s s:s}", "launch_id", id, "site", "tb");
    sluice_store_launch_spec_t spec = {id, "tb", NULL, req, NULL, NULL, "test", 0};

    cr_assert_eq(sluice_store_open(&s, dir, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_store_create_launch(s, &spec, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_store_close(s);
    json_decref(req);
}

Test(cmd_ls, ls_lists_launches_in_text_and_json)
{
    add_launch("alpha");
    add_launch("beta");
    cr_assert_eq(sluice("ls --state-dir '%s'", dir), 0);
    cr_assert_not_null(strstr(output(), "alpha"));
    cr_assert_not_null(strstr(output(), "ACCEPTED"));
    cr_assert_eq(sluice("ls --state-dir '%s' -o json --limit 1", dir), 0);
    cr_assert_not_null(strstr(output(), "\"next_cursor\""));
    cr_assert_not_null(strstr(output(), "alpha"));
    cr_assert_null(strstr(output(), "beta"));
    cr_assert_eq(sluice("ls --state-dir '%s' --terminal", dir), 0);
    cr_assert_null(strstr(output(), "alpha"));
}

Test(cmd_ls, usage_errors_are_64_and_help_is_0)
{
    cr_assert_eq(sluice("ls --bogus"), 64);
    cr_assert_eq(sluice("ls --limit 0"), 64);
    cr_assert_eq(sluice("ls --help"), 0);
}
