/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_parse.h - the helpers shared by the slurmrestd version adapters
 * and slurmrest.c: the answer decoder and Slurm's numbers, state values,
 * the common accounting fields and the job-description pieces of both
 * submit families.
 *
 * Implemented in slurmrest_parse.c, which calls nothing of slurmrest.c or
 * the adapters (calls go slurmrest.c -> adapters -> here).
 */
#ifndef SLUICE_SLURMREST_PARSE_H
#define SLUICE_SLURMREST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "slurmrest.h"

#include "base/jdec.h"

/* ---- reading answers (base/jdec.h) ---------------------------------------- */

/* The decoder of an answer: lenient (null is absent, unknown members are
 * ignored), errors "<path>: expected ..." with SLUICE_EPROTO, the first one
 * ends the parse. */
void slurmrest_decoder(jdec_t *d, sluice_error_t *err);

/* A Slurm number at c.key: bare (integer or real), {set,infinite,number}
 * or null.  *present is false for absent, null, unset or infinite values. */
sluice_err slurmrest_number(const jdec_cur_t *c, const char *key, bool *present, int64_t *out);

/* The number at c.key (as slurmrest_number()), 0 when absent; does nothing
 * once *rc holds an error, and records the first one. */
int64_t slurmrest_num_or_zero(const jdec_cur_t *c, const char *key, sluice_err *rc);

/* One state name into base or flag bits (unknown names are ignored). */
void slurmrest_state_name(const char *name, sluice_job_base *base, uint32_t *flags);

/* The state at cursor `state`: an array of names (or a single string) into
 * base + flags; absent is UNKNOWN with no flags. */
sluice_err slurmrest_state_value(const jdec_cur_t *state, sluice_job_base *base, uint32_t *flags);

/* The parts of an accounting record that every version shapes alike:
 * state {current, reason}, comment.job, het {job_id, job_offset} and
 * time {submission, start, end}. */
sluice_err slurmrest_acct_common(const jdec_cur_t *rec, sluice_jobview_t *v);

/* Shared by both families: the common job-description fields, the GPU
 * request text and the signal split.  *out of gres is a new allocation. */
sluice_err slurmrest_check_desc(const sluice_jobdesc_t *d, size_t i, sluice_error_t *err);
sluice_err slurmrest_gres(const sluice_jobdesc_t *d, const char *prefix, char **out);

/* "[B:]NAME[@SECONDS]" into its parts; EINVAL on bad syntax.  *name is a new
 * allocation; *delay is -1 when no "@SECONDS" was given. */
sluice_err slurmrest_split_signal(
    const char *spec, size_t i, bool *batch_only, char **name, long *delay, sluice_error_t *err);

/* ---- cluster identity (docs/state-machine.md, "Ownership") --------------- */

/* A job id given as a string: "<id>" or "<id>;<cluster>" (a job routed to
 * another cluster).  *cluster is a new allocation (free()) holding the part
 * after ';', or NULL.  SLUICE_EPROTO naming `path` for anything else. */
sluice_err slurmrest_split_job_id(
    const char *text, const char *path, int64_t *id, char **cluster, sluice_error_t *err);

/* Whether a job record (live or accounting) belongs to another cluster
 * than `local` (the answer's meta.slurm.cluster; NULL or "" when the
 * answer names none, as v0.0.38's), or to a federation: federation_origin
 * or federation_siblings_active/_viable set and not empty. */
bool slurmrest_other_cluster(const jdec_cur_t *rec, const char *local);

#endif /* SLUICE_SLURMREST_PARSE_H */
