/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_config.c - issue 31's site-file items through the real binary
 * ($SLUICE_BIN): `config show` prints what unset values mean (text and
 * `-o json`), `config init` writes a starting file that loads once its
 * placeholders are filled, every error of a site file is printed in one
 * run with exit 78 once, and `--set` reaches a map's entries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "cmd_case.h"

static void setup(void)
{
    cmd_case_setup("cfg");
    unsetenv("SLUICE_CONFIG");
}

TestSuite(cmd_config, .init = setup, .fini = cmd_case_teardown, .timeout = 120);

#define SITE                                                                                       \
    "rest:\n"                                                                                      \
    "  url: https://rest.example:6820\n"                                                           \
    "  user: svc\n"                                                                                \
    "storage:\n"                                                                                   \
    "  root: /lustre/s\n"                                                                          \
    "job_launcher:\n"                                                                              \
    "  sandbox: none\n"

static void write_text(const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", cmd_dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* The line of `text` that starts with `key` and a space, or NULL. */
static const char *line_of(const char *text, const char *key)
{
    size_t len = strlen(key);

    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, len) == 0 && p[len] == ' ')
            return p;
    return NULL;
}

/* Does the line at `line` (up to its newline) hold `want`? */
static int line_has(const char *line, const char *want)
{
    const char *nl = strchr(line, '\n');
    const char *at = strstr(line, want);

    return at != NULL && (nl == NULL || at < nl);
}

Test(cmd_config, show_prints_what_an_unset_value_means)
{
    const char *l;

    write_text("site.yaml", SITE);
    cr_assert_eq(cmd_sluice_split("config show --config '%s/site.yaml'", cmd_dir), 0, "%s",
                 cmd_errors());
    cr_assert_not_null(l = line_of(cmd_output(), "job_launcher.gpu_vendor"), "%s", cmd_output());
    cr_assert(line_has(l, "nvidia") && line_has(l, "(default)"), "%.120s", l);
    cr_assert_not_null(l = line_of(cmd_output(), "job_launcher.poll_interval"));
    cr_assert(line_has(l, "auto: 2s, 10s on v0.0.38") && line_has(l, "(default)"), "%.120s", l);
    cr_assert_not_null(l = line_of(cmd_output(), "log.level"));
    cr_assert(line_has(l, "warning"), "%.120s", l);
    /* a value that is set is printed as it is */
    cr_assert_eq(cmd_sluice_split("config show --config '%s/site.yaml' --set "
                                  "job_launcher.gpu_vendor=amd --set job_launcher.poll_interval=7",
                                  cmd_dir),
                 0, "%s", cmd_errors());
    cr_assert_not_null(l = line_of(cmd_output(), "job_launcher.gpu_vendor"));
    cr_assert(line_has(l, "amd") && line_has(l, "(flag)") && !line_has(l, "nvidia"), "%.120s", l);
    cr_assert_not_null(l = line_of(cmd_output(), "job_launcher.poll_interval"));
    cr_assert(line_has(l, "7") && !line_has(l, "auto"), "%.120s", l);
}

/* -o json: "config" keeps the raw values its readers know; the meanings
 * are a new member beside it. */
Test(cmd_config, show_json_keeps_raw_values_and_adds_effective)
{
    json_t *j;

    write_text("site.yaml", SITE);
    cr_assert_eq(cmd_sluice_split("config show --config '%s/site.yaml' -o json", cmd_dir), 0, "%s",
                 cmd_errors());
    j = cmd_output_json();
    cr_assert(json_is_null(json_object_get(
        json_object_get(json_object_get(j, "config"), "job_launcher"), "gpu_vendor")));
    cr_assert_str_eq(json_string_value(
                         json_object_get(json_object_get(j, "sources"), "job_launcher.gpu_vendor")),
                     "default");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "effective"),
                                                       "job_launcher.gpu_vendor")),
                     "nvidia");
    cr_assert_not_null(json_object_get(j, "identity"));
    json_decref(j);
}

Test(cmd_config, every_error_of_a_site_file_in_one_run)
{
    const char *e;

    write_text("bad.yaml", SITE "  bogus: 1\n  poll_interval: -1\n  internal_port: \"80\"\n"
                                "log:\n  level: loud\n");
    cr_assert_eq(cmd_sluice_split("config show --config '%s/bad.yaml'", cmd_dir), 78);
    e = cmd_errors();
    /* the first line is the message the first error alone gave */
    cr_assert(strncmp(e, "sluice: ", 8) == 0 &&
                  strstr(e, "bad.yaml:8:3: job_launcher.bogus: "
                            "unknown key\n") == e + 8 + strlen(cmd_dir) + 1,
              "%s", e);
    cr_assert_not_null(strstr(e, "bad.yaml:9:18: job_launcher.poll_interval: "), "%s", e);
    cr_assert_not_null(strstr(e, "bad.yaml:10:18: job_launcher.internal_port: "), "%s", e);
    cr_assert_not_null(strstr(e, "bad.yaml:12:10: log.level: "), "%s", e);
    cr_assert_eq(strlen(cmd_output()), 0, "%s", cmd_output());
}

Test(cmd_config, set_reaches_a_map_entry_and_refuses_file_only_keys)
{
    const char *l;

    write_text("site.yaml", SITE);
    cr_assert_eq(cmd_sluice_split("config show --config '%s/site.yaml' --set "
                                  "job_launcher.executables.srun=/opt/slurm/bin/srun --set "
                                  "gpu_series.a100.constraint=a100",
                                  cmd_dir),
                 0, "%s", cmd_errors());
    cr_assert_not_null(l = line_of(cmd_output(), "job_launcher.executables"));
    cr_assert(line_has(l, "/opt/slurm/bin/srun") && line_has(l, "(flag)"), "%.160s", l);
    cr_assert_not_null(l = line_of(cmd_output(), "gpu_series"));
    cr_assert(line_has(l, "\"constraint\":\"a100\""), "%.160s", l);
    cr_assert_eq(cmd_sluice_split("config show --config '%s/site.yaml' --set "
                                  "rest.jwt_command=/bin/true",
                                  cmd_dir),
                 78);
    cr_assert_not_null(strstr(cmd_errors(), "set in the site file only"), "%s", cmd_errors());
    cr_assert_eq(
        cmd_sluice_split("config show --config '%s/site.yaml' --set tenants.x.name=x", cmd_dir),
        78);
    cr_assert_not_null(strstr(cmd_errors(), "--set tenants.x.name: cannot be set from the "
                                            "environment or --set: set in the site file only"),
                       "%s", cmd_errors());
}

Test(cmd_config, init_writes_a_file_that_loads_once_filled)
{
    char path[512], *text, *p;
    struct stat st;
    FILE *f;
    long len;

    cr_assert_eq(cmd_sluice_split("config init --out '%s/init.yaml'", cmd_dir), 0, "%s",
                 cmd_errors());
    snprintf(path, sizeof(path), "%s/init.yaml", cmd_dir);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0640, "%o", st.st_mode & 0777);
    /* left as written, each placeholder is refused by name, all in one run */
    cr_assert_eq(cmd_sluice_split("config show --config '%s'", path), 78);
    cr_assert_not_null(strstr(cmd_errors(), "rest.url: still the placeholder"), "%s", cmd_errors());
    cr_assert_not_null(strstr(cmd_errors(), "storage.root: still the placeholder"), "%s",
                       cmd_errors());
    cr_assert_not_null(strstr(cmd_errors(), "job_launcher.sandbox: still the placeholder"), "%s",
                       cmd_errors());
    /* the standard output has the same bytes */
    cr_assert_eq(cmd_sluice_split("config init"), 0);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)len + 1);
    cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    cr_assert_str_eq(cmd_output(), text);
    cr_assert_not_null(strstr(text, "# Default: nvidia."), "%s", text);
    /* each placeholder filled, as a site admin would (the header's mention
     * of it is a comment) */
    for (p = strstr(text, ": \"<required: "); p != NULL; p = strstr(p, ": \"<required: ")) {
        char *end, *key = p;
        const char *v;
        p += 2;
        end = strchr(p + 1, '"');
        while (key > text && key[-1] != '\n')
            key--;
        v = strstr(key, "url:") == key + 2    ? "https://rest.example:6820"
            : strstr(key, "root:") == key + 2 ? "/lustre/s"
                                              : "none";
        cr_assert_not_null(end);
        memmove(p + strlen(v), end + 1, strlen(end + 1) + 1);
        memcpy(p, v, strlen(v));
    }
    write_text("filled.yaml", text);
    cr_assert_eq(cmd_sluice_split("config show --config '%s/filled.yaml'", cmd_dir), 0, "%s",
                 cmd_errors());
    /* and every commented key, uncommented as written, loads too: the
     * lines "  # key:" and "  # key: VALUE" (one word) */
    for (p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        char *c = p + strspn(p, " "), *w, *nl = strchr(p, '\n');
        if (strncmp(c, "# ", 2) != 0 || nl == NULL)
            continue;
        for (w = c + 2; *w == '_' || (*w >= 'a' && *w <= 'z'); w++)
            ;
        if (w == c + 2 || *w != ':' || (w[1] != '\n' && w[1] != ' ') ||
            (w[1] == ' ' && memchr(w + 2, ' ', (size_t)(nl - w - 2)) != NULL))
            continue;
        memmove(c, c + 2, strlen(c + 2) + 1);
    }
    write_text("uncommented.yaml", text);
    cr_assert_eq(cmd_sluice_split("config show --config '%s/uncommented.yaml'", cmd_dir), 0,
                 "%s\n%s", cmd_errors(), text);
    free(text);
}

Test(cmd_config, init_refuses_to_overwrite_without_force)
{
    char path[512];
    struct stat st;

    write_text("mine.yaml", "site:\n  name: mine\n");
    snprintf(path, sizeof(path), "%s/mine.yaml", cmd_dir);
    cr_assert_eq(chmod(path, 0600), 0);
    cr_assert_eq(cmd_sluice_split("config init --out '%s'", path), 73);
    cr_assert_not_null(strstr(cmd_errors(), "use --force"), "%s", cmd_errors());
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_size, (off_t)strlen("site:\n  name: mine\n"));
    cr_assert_eq(cmd_sluice_split("config init --out '%s' --force", path), 0, "%s", cmd_errors());
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_gt(st.st_size, 500);
    cr_assert_eq(st.st_mode & 0777, 0640, "%o", st.st_mode & 0777);
    /* --force alone says what it needs; a directory that is not there is
     * an output error */
    cr_assert_eq(cmd_sluice_split("config init --force"), 64);
    cr_assert_eq(cmd_sluice_split("config init --out '%s/no/such/dir/x.yaml'", cmd_dir), 74);
}

/* --out never writes through a symbolic link or into a FIFO, even with
 * --force: the file the link names keeps its bytes. */
Test(cmd_config, init_never_follows_a_link_or_opens_a_fifo)
{
    char target[512], link[512], fifo[512];
    struct stat st;

    write_text("target.yaml", "keep: me\n");
    snprintf(target, sizeof(target), "%s/target.yaml", cmd_dir);
    snprintf(link, sizeof(link), "%s/link.yaml", cmd_dir);
    snprintf(fifo, sizeof(fifo), "%s/fifo.yaml", cmd_dir);
    cr_assert_eq(symlink(target, link), 0);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(cmd_sluice_split("config init --out '%s' --force", link), 74);
    cr_assert_not_null(strstr(cmd_errors(), "symbolic link"), "%s", cmd_errors());
    cr_assert_eq(stat(target, &st), 0);
    cr_assert_eq(st.st_size, (off_t)strlen("keep: me\n"));
    cr_assert_neq(cmd_sluice_split("config init --out '%s' --force", fifo), 0);
}

/* `sluice check` has a FAIL row for each error of the site file. */
Test(cmd_config, check_lists_every_error_of_the_site_file)
{
    write_text("bad.yaml", SITE "  bogus: 1\n  poll_interval: -1\n");
    cr_assert_eq(cmd_sluice("check --config '%s/bad.yaml'", cmd_dir), 78, "%s", cmd_output());
    cr_assert_not_null(strstr(cmd_output(), "job_launcher.bogus: unknown key"), "%s", cmd_output());
    cr_assert_not_null(strstr(cmd_output(), "bad.yaml:9:18: job_launcher.poll_interval: "), "%s",
                       cmd_output());
}
