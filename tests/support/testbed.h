/* SPDX-License-Identifier: Apache-2.0 */
/* testbed.h - helpers for end-to-end tests on the local Slurm testbed.
 *
 * The testbed is found through the SLUICE_TB_* variables that
 * deploy/testbed/env.sh prints; when they are not in the environment, the
 * script is run and its export lines are read.  A missing testbed fails the
 * test with a hint, never skips it. */
#ifndef SLUICE_TEST_TESTBED_H
#define SLUICE_TEST_TESTBED_H

#include <stdbool.h>

#include <sluice/config.h>

#define TESTBED_HINT                                                                               \
    "the testbed is not available: run deploy/testbed/start.sh and "                               \
    "eval \"$(deploy/testbed/env.sh)\""

/* Load the SLUICE_TB_* variables (running env.sh when needed) and check
 * that the REST URL is a loopback one. */
void testbed_env_load(void);

/* A SLUICE_TB_* variable; fails the test when it is unset or empty. */
const char *testbed_var(const char *name);

/* The sluice site configuration of deploy/testbed/site-config.sh (over the
 * Unix socket when `socket`).  Caller frees with sluice_config_free(). */
sluice_config_t *testbed_config(bool socket);

/* Run a shell command; returns its exit status (-1 when it did not exit). */
int testbed_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SLUICE_TEST_TESTBED_H */
