/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_case.c - see cmd_case.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include <sluice/store.h>

#include "cmd_case.h"

char cmd_dir[256];
static char out_path[300];
static char err_path[300];
static const char *bin;

void cmd_case_setup(const char *name)
{
    bin = getenv("SLUICE_BIN");
    if (bin == NULL)
        cr_skip_test("SLUICE_BIN is not set (run through ctest)");
    snprintf(cmd_dir, sizeof(cmd_dir), "/tmp/sluice-cmd%s-XXXXXX", name);
    cr_assert_not_null(mkdtemp(cmd_dir));
    snprintf(out_path, sizeof(out_path), "%s/out.txt", cmd_dir);
    snprintf(err_path, sizeof(err_path), "%s/err.txt", cmd_dir);
}

void cmd_case_teardown(void)
{
    char cmd[300];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cmd_dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", cmd_dir);
}

int cmd_sluice(const char *fmt, ...)
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

int cmd_sluice_split(const char *fmt, ...)
{
    char args[1024], cmd[2048];
    va_list ap;
    int st;

    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s'", bin, args, out_path, err_path);
    st = system(cmd);
    cr_assert(WIFEXITED(st), "%s", cmd);
    return WEXITSTATUS(st);
}

static char *slurp(const char *path, char *text, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n;

    cr_assert_not_null(f, "%s", path);
    n = fread(text, 1, size - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

char *cmd_output(void)
{
    static char text[65536];

    return slurp(out_path, text, sizeof(text));
}

char *cmd_errors(void)
{
    static char text[65536];

    return slurp(err_path, text, sizeof(text));
}

json_t *cmd_output_json(void)
{
    json_error_t jerr;
    const char *text = cmd_output();
    json_t *j = json_loads(text, 0, &jerr);

    cr_assert_not_null(j, "not JSON (%s): %s", jerr.text, text);
    return j;
}

void cmd_add_launch(const char *id)
{
    sluice_store_t *s = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_pack("{s:s s:s}", "launch_id", id, "site", "tb");
    sluice_store_launch_spec_t spec = {id, "tb", NULL, req, NULL, NULL, "test", 0};

    cr_assert_eq(sluice_store_open(&s, cmd_dir, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_store_create_launch(s, &spec, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_store_close(s);
    json_decref(req);
}
