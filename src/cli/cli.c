/* SPDX-License-Identifier: Apache-2.0 */
/* cli.c - the helpers every subcommand shares (cli.h): an error struct
 * printed and mapped to its sysexit, and the library's log routed to
 * stderr.
 *
 * Notes:
 * - Exit codes follow sysexits(3) (sluice_err_sysexit()); never 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "site/config_model.h"

/* Where the level and the format came from: a stronger source wins. */
enum { FROM_DEFAULT, FROM_SITE, FROM_ENV, FROM_FLAG };

static int log_level = SLUICE_LOG_WARNING, level_from = FROM_DEFAULT;
static int log_format = SLUICE_LOG_FORMAT_TEXT, format_from = FROM_DEFAULT;

static void install(void)
{
    sluice_log_to_stderr(log_level, (sluice_log_format_t)log_format);
}

int cli_log_init(void)
{
    const char *lv = getenv("SLUICE_LOG_LEVEL"), *fm = getenv("SLUICE_LOG_FORMAT");
    int rc = CLI_EX_OK;

    if (lv != NULL && lv[0] != '\0') {
        if (sluice_log_level_parse(lv) < 0) {
            fprintf(stderr,
                    "sluice: SLUICE_LOG_LEVEL: '%s' is not a level (error, warning, notice, info "
                    "or debug)\n",
                    lv);
            rc = CLI_EX_USAGE;
        } else {
            log_level = sluice_log_level_parse(lv);
            level_from = FROM_ENV;
        }
    }
    if (fm != NULL && fm[0] != '\0') {
        if (sluice_log_format_parse(fm) < 0) {
            fprintf(stderr,
                    "sluice: SLUICE_LOG_FORMAT: '%s' is not a format (text, json or "
                    "journald)\n",
                    fm);
            rc = CLI_EX_USAGE;
        } else {
            log_format = sluice_log_format_parse(fm);
            format_from = FROM_ENV;
        }
    }
    install();
    return rc;
}

int cli_log_option(int level, const char *value)
{
    int v = level ? sluice_log_level_parse(value) : sluice_log_format_parse(value);

    if (v < 0)
        return -1;
    if (level) {
        log_level = v;
        level_from = FROM_FLAG;
    } else {
        log_format = v;
        format_from = FROM_FLAG;
    }
    install();
    return 0;
}

void cli_log_site(const sluice_config_t *cfg)
{
    if (cfg == NULL)
        return;
    if (cfg->log.level != NULL && level_from < FROM_SITE &&
        sluice_log_level_parse(cfg->log.level) >= 0) {
        log_level = sluice_log_level_parse(cfg->log.level);
        level_from = FROM_SITE;
    }
    if (cfg->log.format != NULL && format_from < FROM_SITE &&
        sluice_log_format_parse(cfg->log.format) >= 0) {
        log_format = sluice_log_format_parse(cfg->log.format);
        format_from = FROM_SITE;
    }
    install();
}

int cli_fail(const sluice_error_t *err)
{
    fprintf(stderr, "sluice: %s\n", err->text[0] ? err->text : sluice_strerror(err->code));
    return sluice_err_sysexit(err->code);
}
