/* SPDX-License-Identifier: Apache-2.0 */
/* jobdesc_cases.h - named job descriptions shared by the golden and contract
 * tests of the REST adapters (plain, hetjob, GPUs, exclusive, hold,
 * dependency, signal, hostile strings). */
#ifndef SLUICE_TEST_JOBDESC_CASES_H
#define SLUICE_TEST_JOBDESC_CASES_H

#include <stddef.h>

#include <sluice/jobdesc.h>

#define JOBDESC_CASE_MAX_COMPONENTS 3

size_t jobdesc_case_count(void);
const char *jobdesc_case_name(size_t i);
/* Fill out[] (zeroed first) and return the number of components; the
 * caller clears each with sluice_jobdesc_clear(). */
size_t jobdesc_case_build(size_t i, sluice_jobdesc_t out[JOBDESC_CASE_MAX_COMPONENTS]);

#endif
