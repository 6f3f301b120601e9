/* SPDX-License-Identifier: Apache-2.0 */
/* testbed.c - finding the local Slurm testbed from end-to-end tests. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "base/buf.h"
#include "testbed.h"

static const char *source_dir(void)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    return src ? src : ".";
}

void testbed_env_load(void)
{
    char cmd[1200], line[4096];
    FILE *p;

    if (getenv("SLUICE_TB_REST_URL") == NULL) {
        snprintf(cmd, sizeof(cmd), "bash '%s/deploy/testbed/env.sh' 2>/dev/null", source_dir());
        p = popen(cmd, "r");
        cr_assert_not_null(p, "cannot run env.sh: %s", TESTBED_HINT);
        while (fgets(line, sizeof(line), p) != NULL) {
            char *eq, *val, *end;

            if (strncmp(line, "export ", 7) != 0 || (eq = strchr(line + 7, '=')) == NULL)
                continue;
            *eq = '\0';
            val = eq + 1;
            if (*val == '\'') {
                val++;
                if ((end = strrchr(val, '\'')) != NULL)
                    *end = '\0';
            } else {
                val[strcspn(val, "\n")] = '\0';
            }
            setenv(line + 7, val, 1);
        }
        pclose(p);
    }
    cr_assert(strncmp(testbed_var("SLUICE_TB_REST_URL"), "http://127.", 11) == 0,
              "only loopback may be contacted: %s", testbed_var("SLUICE_TB_REST_URL"));
}

const char *testbed_var(const char *name)
{
    const char *v = getenv(name);

    cr_assert(v != NULL && v[0] != '\0', "%s is not set: %s", name, TESTBED_HINT);
    return v;
}

sluice_config_t *testbed_config(bool socket)
{
    char cmd[1200], chunk[4096];
    buf_t yaml;
    FILE *p;
    size_t n;
    sluice_config_opts_t opts = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    buf_init(&yaml, 1 << 20);
    snprintf(cmd, sizeof(cmd), "bash '%s/deploy/testbed/site-config.sh' %s", source_dir(),
             socket ? "--socket" : "");
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
        cr_assert_eq(buf_append(&yaml, chunk, n), SLUICE_OK);
    cr_assert_eq(pclose(p), 0, "site-config.sh failed: %s", TESTBED_HINT);
    opts.text = buf_str(&yaml);
    opts.text_len = yaml.len;
    opts.text_name = "testbed-site.yaml";
    cr_assert_eq(sluice_config_load(&opts, &cfg, &err), SLUICE_OK, "%s", err.text);
    buf_free(&yaml);
    return cfg;
}

int testbed_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    int st;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
