/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_gendoc.c - what `sluice __gendoc` makes, through the real
 * binary: the bash and zsh completions of --state (the state machine's
 * states) and --set (the field table's keys), compared with the library's
 * own lists; sluice.1's EXAMPLES (each line parses), FILES and ENVIRONMENT;
 * sluice.yaml(5) with every key of the field table, the same bytes as
 * `config reference --format man`; and bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/fsm.h>

#include "cmd_case.h"
#include "site/config_int.h"
#include "site/config_ref.h"

static void setup(void)
{
    cmd_case_setup("gendoc");
}

TestSuite(cmd_gendoc, .init = setup, .fini = cmd_case_teardown, .timeout = 60);

/* A file of the scratch directory, whole (caller frees). */
static char *slurp(const char *name)
{
    char path[512], *buf;
    long n;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", cmd_dir, name);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = calloc(1, (size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return buf;
}

/* The words of the line after `arm` ("--state)") in a bash script: what
 * `compgen -W "..."` offers there. */
static char *bash_words(const char *script, const char *arm)
{
    const char *p = strstr(script, arm), *q, *end;

    cr_assert_not_null(p, "no arm %s", arm);
    q = strstr(p, "compgen -W \"");
    cr_assert_not_null(q);
    q += strlen("compgen -W \"");
    end = strchr(q, '"');
    return strndup(q, (size_t)(end - q));
}

static char *expected_states(void)
{
    char *buf = calloc(1, 512);

    for (int s = 0; s < SLUICE_FSM_STATE_COUNT_; s++) {
        sluice_fsm_state st = (sluice_fsm_state)s;
        if (st == SLUICE_FSM_NEW || sluice_fsm_state_public(st) != st)
            continue;
        if (buf[0] != '\0')
            strcat(buf, " ");
        strcat(buf, sluice_fsm_state_name(st));
    }
    return buf;
}

/* Every settable key of the table, each followed by `suffix`. */
static char *expected_keys(const char *suffix)
{
    char *buf = calloc(1, 16384);

    for (size_t i = 0; i < CFG_N_FIELDS; i++) {
        if (!cfg_kind_settable(cfg_fields[i].kind))
            continue;
        if (buf[0] != '\0')
            strcat(buf, " ");
        strcat(buf, cfg_fields[i].path);
        strcat(buf, suffix);
    }
    /* then the commands of job_launcher.executables sluice runs */
    for (size_t i = 0; cfg_exec_used(i) != NULL; i++) {
        strcat(buf, " job_launcher.executables.");
        strcat(buf, cfg_exec_used(i));
        strcat(buf, suffix);
    }
    return buf;
}

Test(cmd_gendoc, completions_offer_the_states_and_the_set_keys_of_the_library)
{
    char *bash, *zsh, *got, *want;

    cr_assert_eq(cmd_sluice("__gendoc bash '%s/bash'", cmd_dir), 0, "%s", cmd_output());
    cr_assert_eq(cmd_sluice("__gendoc zsh '%s/zsh'", cmd_dir), 0, "%s", cmd_output());
    bash = slurp("bash");
    zsh = slurp("zsh");

    got = bash_words(bash, "--state)");
    want = expected_states();
    cr_expect_str_eq(got, want);
    cr_expect_str_eq(want, "ACCEPTED SUBMITTING PENDING RUNNING CANCELLING DONE");
    free(got);

    /* zsh: the same states as the value of --state */
    {
        char spec[600];
        snprintf(spec, sizeof(spec), ":STATE:(%s)'", want);
        cr_expect_not_null(strstr(zsh, spec), "no %s in the zsh script", spec);
    }
    free(want);

    got = bash_words(bash, "--set)");
    want = expected_keys("=");
    cr_expect_str_eq(got, want);
    cr_expect_not_null(strstr(got, "rest.url= "));
    /* a map's entries that --set reaches */
    cr_expect_not_null(strstr(got, "job_launcher.executables.srun= "), "%s", got);
    /* gpu_series itself (a mapping) is not a --set key: its entries' fields are */
    cr_expect(strstr(got, " gpu_series=") == NULL && strncmp(got, "gpu_series=", 11) != 0,
              "a file-only key is offered");
    free(got);
    free(want);

    /* zsh: the keys in _sluice_set_keys, which --set's value calls */
    want = expected_keys("");
    {
        char *line = calloc(1, strlen(want) + 32);
        sprintf(line, "    keys=(%s)\n", want);
        cr_expect_not_null(strstr(zsh, line), "zsh keys differ from the table");
        free(line);
    }
    cr_expect_not_null(strstr(zsh, ":KEY=VALUE:_sluice_set_keys'"));
    free(want);
    free(bash);
    free(zsh);
}

/* The lines of `page` between ".SH <name>" and the next ".SH". */
static char *section(const char *page, const char *name)
{
    char head[64];
    const char *p, *end;

    snprintf(head, sizeof(head), "\n.SH %s\n", name);
    p = strstr(page, head);
    cr_assert_not_null(p, "no section %s", name);
    p += strlen(head);
    end = strstr(p, "\n.SH ");
    return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

Test(cmd_gendoc, sluice_1_has_examples_that_parse_files_and_environment)
{
    char *page, *ex, *env, *files;
    const char *p;
    int examples = 0;

    cr_assert_eq(cmd_sluice("__gendoc man '%s'", cmd_dir), 0, "%s", cmd_output());
    page = slurp("sluice.1");
    ex = section(page, "EXAMPLES");
    env = section(page, "ENVIRONMENT");
    files = section(page, "FILES");

    /* each example line, with --help after it, parses: its options and
     * their values (durations, choices) are the command's own */
    for (p = ex; (p = strstr(p, "\nsluice ")) != NULL; p++) {
        char line[512], cmd[600];
        size_t n = strcspn(p + 1, "\n"), k, j = 0;

        cr_assert_lt(n, sizeof(line));
        /* roff's "\-" back to "-" */
        for (k = 0; k < n; k++)
            if (!(p[1 + k] == '\\' && p[2 + k] == '-'))
                line[j++] = p[1 + k];
        line[j] = '\0';
        snprintf(cmd, sizeof(cmd), "%s --help", line + strlen("sluice "));
        cr_expect_eq(cmd_sluice("%s", cmd), 0, "example '%s': %s", line, cmd_output());
        examples++;
    }
    cr_expect_geq(examples, 8, "%d examples", examples);

    /* what the command reads, named */
    cr_expect_not_null(strstr(env, ".B SLUICE_STATE_DIR\n"));
    cr_expect_not_null(strstr(env, ".B SLUICE_HEARTBEAT_S\n"));
    cr_expect_not_null(strstr(env, ".B SLUICE_STORE_URL\n"));
    cr_expect_not_null(strstr(files, "STATE_DIR/sluice.db"));
    cr_expect_not_null(strstr(page, ".BR sluice.yaml (5)"), "SEE ALSO names sluice.yaml(5)");
    free(ex);
    free(env);
    free(files);
    free(page);
}

Test(cmd_gendoc, sluice_yaml_5_has_every_key_and_is_the_reference_s)
{
    char *page, *ref;

    cr_assert_eq(cmd_sluice("__gendoc man5 '%s'", cmd_dir), 0, "%s", cmd_output());
    page = slurp("sluice.yaml.5");
    cr_expect_eq(strncmp(page, ".\\\" Generated", 13), 0);
    cr_expect_not_null(strstr(page, "\n.TH SLUICE.YAML 5 "));
    for (size_t i = 0; i < CFG_N_FIELDS; i++) {
        char want[160], *esc = want;
        /* the key as roff writes it: '-' is "\-" */
        esc += sprintf(esc, "\n.TP\n.B ");
        for (const char *k = cfg_fields[i].path; *k; k++)
            esc += *k == '-' ? sprintf(esc, "\\-") : sprintf(esc, "%c", *k);
        sprintf(esc, "\n");
        cr_expect_not_null(strstr(page, want), "no entry for %s", cfg_fields[i].path);
    }
    cr_expect_not_null(strstr(page, "Environment: \\fBSLUICE_REST_URL\\fR"));

    /* one renderer: `config reference --format man` prints the same bytes */
    cr_assert_eq(cmd_sluice_split("config reference --format man"), 0, "%s", cmd_errors());
    ref = cmd_output();
    cr_expect_str_eq(ref, page);
    free(page);
}

Test(cmd_gendoc, bad_input)
{
    cr_expect_eq(cmd_sluice("__gendoc man5"), 64, "%s", cmd_output());
    cr_expect_not_null(strstr(cmd_output(), "man5 DIR"), "%s", cmd_output());
    cr_expect_eq(cmd_sluice("__gendoc man5 '%s/no/such/dir'", cmd_dir), 74, "%s", cmd_output());
    cr_expect_not_null(strstr(cmd_output(), "sluice.yaml.5"), "%s", cmd_output());
    cr_expect_eq(cmd_sluice("__gendoc roff '%s'", cmd_dir), 64, "%s", cmd_output());
    cr_expect_eq(cmd_sluice_split("config reference --format roff"), 64, "%s", cmd_errors());
    cr_expect_not_null(strstr(cmd_errors(), "expects one of: markdown json-schema man; got "
                                            "'roff'"),
                       "%s", cmd_errors());
}
