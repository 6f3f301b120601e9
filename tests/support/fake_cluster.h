/* SPDX-License-Identifier: Apache-2.0 */
/* fake_cluster.h - a deterministic in-memory cluster behind
 * sluice_cluster_ops_t, for launcher tests.
 *
 * Jobs follow a scripted list of stages; every batched state read
 * (job_states) advances each queued job by one poll.  Outages, lost submit
 * answers, refused submits and foreign jobs can be injected, and every call
 * is counted.
 */
#ifndef SLUICE_FAKE_CLUSTER_H
#define SLUICE_FAKE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/launcher.h>

#define FAKE_MAX_STAGES 8
#define FAKE_MAX_JOBS 1024

/* base UNKNOWN with no flags as a stage: the job vanishes (live queue and
 * accounting).  UNKNOWN with flags is a state string that hides the base,
 * as v0.0.38 reports "COMPLETING". */
/* FAKE_NO_BASE in a stage's flags: the stage is reported with its other
 * flags only and base UNKNOWN, as Slurm 22.05 reports "COMPLETING". */
#define FAKE_NO_BASE (UINT32_C(1) << 31)
typedef struct {
    sluice_job_base base;
    uint32_t flags;
    int exit_code;
    int signal;
    int polls; /* polls spent in this stage before the next (last stage: before leaving) */
} fake_stage_t;

typedef enum {
    FAKE_SUBMIT_OK = 0,
    FAKE_SUBMIT_REJECT,   /* proven rejection */
    FAKE_SUBMIT_LOST,     /* the job is created but the answer is lost (UNCERTAIN) */
    FAKE_SUBMIT_DROP,     /* UNCERTAIN and nothing was created */
    FAKE_SUBMIT_NOT_SENT, /* UNAVAILABLE: provably never sent (refused connect), nothing created */
    FAKE_SUBMIT_OTHER_CLUSTER, /* OK with "<id>;elsewhere": the job went to another cluster */
} fake_submit_mode;

typedef struct {
    uint64_t id;
    char name[200];
    char comment[200];
    char user[64];
    char dependency[64];
    size_t n_comp;
    fake_stage_t stages[FAKE_MAX_STAGES];
    size_t n_stages;
    size_t pos;
    int polls;
    bool in_queue;
    bool in_acct;
    bool acct_hidden; /* never visible in accounting */
    int64_t submit_s;
    int cancels;
    const char *pending_reason; /* state_reason while pending (borrowed); NULL: "Priority" */
    const char *pending_desc;   /* state_description while pending (borrowed), or NULL */
    /* state_reason once final (borrowed; NULL: "None").  Set, the job is
     * shown as one slurmctld failed before it started: no nodes, start_time
     * = end_time (Slurm 24.11's BadConstraints failure). */
    const char *unstarted_reason;
    bool other_cluster;      /* its records say another cluster or a federation */
    bool acct_comment_empty; /* its accounting record keeps "" as the comment */
    char acct_user[64];      /* set: accounting names this user (another job's record) */
    char acct_name[64];      /* set: accounting names this job name */
    char script[64];         /* the start of the first component's script ("" none) */
    bool later_scripts;      /* a later component came with a script of its own */
} fake_job_t;

typedef struct {
    fake_job_t jobs[FAKE_MAX_JOBS];
    size_t n_jobs;
    uint64_t next_id;
    fake_submit_mode modes[16];
    size_t n_modes;
    fake_stage_t script[FAKE_MAX_STAGES];
    size_t n_script;
    bool live_down;
    bool acct_down;
    bool cancel_noop;        /* DELETE accepted, job unaffected (a late COMPLETED wins the race) */
    bool acct_hidden;        /* new jobs never reach accounting */
    bool live_hidden;        /* new jobs are never in the live queue (ran and left at once) */
    bool acct_comment_empty; /* accounting keeps "" as the comment (no job_comment flag) */
    bool other_cluster;      /* new jobs' records say another cluster (a federation) */
    const char *user;
    const char *pending_reason; /* given to later jobs (fake_job_t) */
    const char *pending_desc;
    const char *unstarted_reason;
    const int64_t *clock_ms;
    bool no_submit_many; /* leave submit_many NULL in the ops table */
    /* node_address: "node<N>" is at "10.0.0.<N>"; nodes_down answers
     * UNAVAILABLE, a node named no_addr_node NOT_FOUND */
    bool nodes_down;
    const char *no_addr_node;
    unsigned n_node_lookups;
    /* submit_many: what the launcher asked for, and what really overlapped */
    unsigned n_submit_many, last_in_flight, max_batch, max_active;
    /* counters */
    unsigned n_submit, n_states, n_get, n_find_live, n_find_acct, n_acct, n_cancel;
    size_t last_states_n;
} fake_cluster_t;

/* Initialise (zeroed, default script PENDING 1, RUNNING 1, COMPLETED 0 with
 * 2 polls before leaving the queue). */
void fake_cluster_init(fake_cluster_t *fc, const int64_t *clock_ms, const char *user);
/* The ops table bound to fc.  Its submit_many (unless no_submit_many)
 * runs min(in_flight, n) threads that each take the next request, so up to
 * `in_flight` POSTs really overlap (each holds ~2 ms outside the fake's
 * lock); max_active records the most that ran at once. */
sluice_cluster_ops_t fake_cluster_ops(fake_cluster_t *fc);
/* The next submit's behaviour (queued; default OK). */
void fake_cluster_push_mode(fake_cluster_t *fc, fake_submit_mode mode);
/* Script of later jobs. */
void fake_cluster_set_script(fake_cluster_t *fc, const fake_stage_t *stages, size_t n);
/* Put a job in the queue directly (a foreign or late job); returns its id. */
uint64_t fake_cluster_add_job(
    fake_cluster_t *fc, const char *name, const char *comment, const char *user, size_t n_comp);
fake_job_t *fake_cluster_job(fake_cluster_t *fc, uint64_t id);
/* Jobs whose name starts with `prefix`. */
size_t fake_cluster_count_named(const fake_cluster_t *fc, const char *prefix);

#endif /* SLUICE_FAKE_CLUSTER_H */
