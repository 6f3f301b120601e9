/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_parse.h - the helpers shared by the slurmrestd version adapters
 * and slurmrest.c: lenient getters, state values, the common accounting
 * fields and the job-description pieces of both submit families.
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

#include <sluice/slurmrest.h>

/* ---- lenient getters; `path` names the object for error text ------------ */

/* A string member: absent or null leaves *out NULL; other types EPROTO.
 * *out is a new allocation (free()). */
sluice_err slurmrest_get_string(
    const json_t *obj, const char *key, const char *path, char **out, sluice_error_t *err);

/* A number that may be bare (integer or real), {set,infinite,number} or
 * null.  *present is false for absent, null, unset or infinite values. */
sluice_err slurmrest_get_number(const json_t *obj,
                                const char *key,
                                const char *path,
                                bool *present,
                                int64_t *out,
                                sluice_error_t *err);

/* An array member: absent or null is NULL with *rc SLUICE_OK; another type
 * is NULL with *rc EPROTO.  Borrowed reference (valid as long as obj). */
const json_t *slurmrest_get_array(
    const json_t *obj, const char *key, const char *path, sluice_err *rc, sluice_error_t *err);

/* One state name into base or flag bits (unknown names are ignored). */
void slurmrest_state_name(const char *name, sluice_job_base *base, uint32_t *flags);

/* A number at obj.key (plain or {set,infinite,number}), 0 when absent;
 * does nothing once *rc holds an error, and records the first one. */
int64_t slurmrest_num_or_zero(
    const json_t *obj, const char *key, const char *path, sluice_err *rc, sluice_error_t *err);

/* The parts of an accounting record that every version shapes alike:
 * state {current, reason}, comment.job, het {job_id, job_offset} and
 * time {submission, start, end}. */
sluice_err slurmrest_acct_common(const json_t *rec,
                                 const char *path,
                                 sluice_jobview_t *v,
                                 sluice_error_t *err);

/* A state array (or a single string) into base + flags; EPROTO on other
 * types. */
sluice_err slurmrest_state_value(const json_t *state,
                                 const char *path,
                                 sluice_job_base *base,
                                 uint32_t *flags,
                                 sluice_error_t *err);

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
bool slurmrest_other_cluster(const json_t *rec, const char *local);

#endif /* SLUICE_SLURMREST_PARSE_H */
