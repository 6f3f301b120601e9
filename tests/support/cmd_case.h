/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_case.h - running the real `sluice` binary ($SLUICE_BIN) in a test
 * against a scratch store directory filled through the library (the suites
 * of `sluice status`, `ls` and `cancel`). */
#ifndef SLUICE_TEST_CMD_CASE_H
#define SLUICE_TEST_CMD_CASE_H

#include <jansson.h>

/* The scratch store directory of the running test. */
extern char cmd_dir[256];

/* A new scratch directory /tmp/sluice-cmd<name>-XXXXXX (skips the test when
 * SLUICE_BIN is not set, as outside ctest); cmd_case_teardown() removes it. */
void cmd_case_setup(const char *name);
void cmd_case_teardown(void);

/* Run `sluice ARGS` (a printf format) with stdout and stderr into a file of
 * the scratch directory; its exit code. */
int cmd_sluice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run `sluice ARGS` with stdout and stderr into two files; its exit code.
 * cmd_output() is then the standard output alone, cmd_errors() the
 * standard error. */
int cmd_sluice_split(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What the last cmd_sluice() printed (borrowed: valid until the next call). */
char *cmd_output(void);

/* What the last cmd_sluice_split() printed to stderr (borrowed). */
char *cmd_errors(void);

/* Create launch `id` of site "tb" (state ACCEPTED) in the scratch store. */
void cmd_add_launch(const char *id);

/* The output of the last run parsed as JSON (new reference; fails the test
 * when it is not). */
json_t *cmd_output_json(void);

#endif
