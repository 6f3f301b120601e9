/* SPDX-License-Identifier: Apache-2.0 */
/* render.h - turn a validated launch and the site model into one batch
 * script and one job description per pool, and prepare the launch's
 * private staging directory.
 *
 * A launch is rendered once, when it is accepted; the render (script + job
 * descriptions, see sluice_render_to_json()) is stored with it and every
 * submit attempt reuses it.  Secrets are never part of a render: the
 * script only names the secret file, which sluice_staging_write_secrets()
 * produces at submit time.
 *
 * What the script does is described step by step in docs/rendering.md.
 *
 * Thread-safety: no global state; the process environment is read only
 * through the injected getenv function.
 */
#ifndef SLUICE_RENDER_H
#define SLUICE_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/config.h>
#include <sluice/error.h>
#include <sluice/jobdesc.h>
#include <sluice/launch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes of the rendered script for its own failures (the workload's
 * codes pass through unchanged). */
#define SLUICE_RENDER_EXIT_REQUEUED 96  /* requeued job refused (requeue off) */
#define SLUICE_RENDER_EXIT_SECRETS 97   /* secrets.env missing in staging */
#define SLUICE_RENDER_EXIT_PEERS 98     /* peers.env did not appear in time */
#define SLUICE_RENDER_EXIT_HOSTS 99     /* a component's first host is unknown */
#define SLUICE_RENDER_PEERS_WAIT_S 300U /* default wait for peers.env */

/* Checks that the image file exists; returns 0 when `path` (service-side)
 * is an existing regular file.  Tests inject one; NULL = stat(2). */
typedef int (*sluice_render_stat_fn)(const char *path, void *arg);

/* Everything rendering needs besides the site, the study and the launch.
 * Zero-initialise and set what you need. */
typedef struct {
    unsigned attempt;      /* >= 1; 0 is taken as 1 */
    const char *run_id;    /* NULL: "<launch_id>.<attempt>" */
    uint32_t peers_wait_s; /* 0: SLUICE_RENDER_PEERS_WAIT_S */
    bool keep_going;       /* true: a failing pool does not stop the others (also when
                              the launch's keep_going is true) */
    /* Slurm job id of the launch this one depends on; 0: not known yet
     * (the job description's dependency stays NULL and the launcher fills
     * it in at submit time). */
    uint64_t dependency_job_id;
    /* Not read by sluice_render() any more: the site's forward_env values
     * are the job's own, read by the script after setup (NVFlare's
     * meaning; docs/rendering.md, step 6).  Kept so that callers that set
     * it still compile. */
    sluice_getenv_fn getenv_fn;
    void *getenv_arg;
    sluice_render_stat_fn stat_fn; /* NULL: stat(2) */
    void *stat_arg;
} sluice_render_ctx_t;

/* A file to create in the attempt's staging directory (never a secret). */
typedef struct {
    char *name; /* relative to the staging directory */
    char *content;
    unsigned mode; /* e.g. 0600 */
} sluice_render_file_t;

typedef struct {
    char *launch_id;
    unsigned attempt;
    char *sha8;             /* first 8 hex digits of sha256(launch_id) */
    char *run_id;           /* exported as SLUICE_RUN_ID / NVFL_RUN_ID */
    char *staging_service;  /* <storage.root>/<site>/<sha8>/attempt-<n> */
    char *staging_cluster;  /* the same directory under storage.cluster_root */
    uint32_t master_port;   /* from the site's port range, per launch */
    char *script;           /* the batch script (also in jobs[0].script) */
    sluice_jobdesc_t *jobs; /* one per pool, in pool order */
    size_t n_jobs;
    char **pool_names;   /* n_jobs names: exit/<pool> files */
    char **secret_names; /* names only; values are written at submit time */
    size_t n_secret_names;
    sluice_render_file_t *files;
    size_t n_files;
} sluice_render_t;

/* Render `launch` for `cfg` (and `study`, which may be NULL).  On success
 * *out receives a new render (caller frees with sluice_render_free()).
 * Errors: SLUICE_EINVAL (the request cannot run on this site: fail-closed
 * GPU series, bad mount, image missing or not SQSH/SIF, reserved variable
 * name, ...; the text names the field), SLUICE_ECONFIG (the site or study
 * cannot render it), SLUICE_ENOMEM, SLUICE_ETOOBIG.  Nothing is written. */
SLUICE_API sluice_err sluice_render(const sluice_config_t *cfg,
                                    const sluice_study_t *study,
                                    const sluice_launch_t *launch,
                                    const sluice_render_ctx_t *ctx,
                                    sluice_render_t **out,
                                    sluice_error_t *err);

/* NULL-safe. */
SLUICE_API void sluice_render_free(sluice_render_t *r);

/* The render as JSON (for the store and for dry runs): launch_id, attempt,
 * sha8, run_id, staging paths, master_port, pools, secret_names, files
 * (names and modes), script, and jobs (sluice_jobdesc_to_json() each).
 * A new reference, or NULL when out of memory. */
SLUICE_API json_t *sluice_render_to_json(const sluice_render_t *r);

/* ---- the probe job of `sluice check --probe-job` -------------------------- */

/* The report the probe job writes in its staging directory. */
#define SLUICE_PROBE_REPORT "probe.out"

/* Render the probe job: one component, one node, one task, with the same
 * srun, container runtime and PATH as a launch of this site.  Its script
 * writes SLUICE_PROBE_REPORT (lines "<key> <value>": srun, runtime-name,
 * srun-path or
 * srun-missing, srun-version-rc, srun-version, srun-version-err, step-rc,
 * step-out, step-err, end) after running `srun --version` and a one-task
 * step that looks up the runtime (`command -v`) on the compute node; it
 * exits 0 whenever it could write the report.  `tag` ([0-9a-z]{1,16})
 * makes it unique: the job is named "<prefix>-<site[:32]>-probe-<tag>" and
 * its staging directory is <storage.root>/<site>/.probe-<tag>/attempt-1
 * (r->sha8 is ".probe-<tag>": a dot name, which the service's staging scan
 * passes over).  Create it with sluice_staging_create(cfg, r, false, ...).
 * Time limit: 5 minutes, or the site's time when that is shorter.  On
 * success *out receives a new render (caller frees with
 * sluice_render_free()).  SLUICE_EINVAL for a bad tag, SLUICE_ECONFIG
 * without storage.root, SLUICE_ENOMEM. */
SLUICE_API sluice_err sluice_render_probe(const sluice_config_t *cfg,
                                          const char *tag,
                                          sluice_render_t **out,
                                          sluice_error_t *err);

/* ---- bridge from the site model to the launch parser --------------------- */

/* Fill `out` with the effective site (+ study) policy for
 * sluice_launch_parse().  Strings are borrowed from cfg/study; the series
 * array is allocated: release with sluice_config_launch_policy_clear(). */
SLUICE_API sluice_err sluice_config_launch_policy(const sluice_config_t *cfg,
                                                  const sluice_study_t *study,
                                                  sluice_launch_policy_t *out,
                                                  sluice_error_t *err);
SLUICE_API void sluice_config_launch_policy_clear(sluice_launch_policy_t *p);

/* ---- tenants (docs/tenants-identity-notes.md) ------------------------------ */

/* Narrow a policy of sluice_config_launch_policy() to tenant `t` (NULL:
 * the default tenant, unchanged): each non-empty allowed_partitions,
 * allowed_accounts and allowed_qos list of the tenant replaces the site's
 * (the site file already holds each entry to the site's own rule, so the
 * result is the site's rule and then the tenant's).  Strings are
 * borrowed from `t`. */
SLUICE_API void sluice_launch_policy_narrow(sluice_launch_policy_t *p, const sluice_tenant_t *t);

/* Finish the render `r` of tenant `t`'s launch `launch` on cluster `cfg`
 * (t NULL: nothing to do): every job whose account the request did not
 * name takes t->account when set; then every job's partition, account and
 * qos, also those that come from the study's or the site's defaults, must
 * be in the tenant's list of that field when the list is non-empty, and a
 * job image the request names must be allowed by t->allowed_images when
 * that is non-empty (canonically, as policy.allowed_images).
 * SLUICE_EINVAL names the field, the value and the tenant; SLUICE_ENOMEM. */
SLUICE_API sluice_err sluice_render_for_tenant(const sluice_config_t *cfg,
                                               const sluice_tenant_t *t,
                                               const sluice_launch_t *launch,
                                               sluice_render_t *r,
                                               sluice_error_t *err);

/* ---- staging ------------------------------------------------------------- */

/* Create <storage.root>/<site>/<sha8>/attempt-<n>/ (and its exit/
 * subdirectory) with mode 0700, following no symlink below the storage
 * root.  When the launch directory (<sha8>) already exists and
 * `known_launch` is false, fails with SLUICE_ECONFLICT naming it.  An
 * existing attempt directory is SLUICE_ECONFLICT too.  Then writes every
 * file of the render (O_CREAT|O_EXCL|O_NOFOLLOW).  On success *dirfd_out
 * (may be NULL) receives an O_DIRECTORY descriptor of the attempt directory
 * (caller closes).  SLUICE_EIO / SLUICE_EPERM name the path. */
SLUICE_API sluice_err sluice_staging_create(const sluice_config_t *cfg,
                                            const sluice_render_t *r,
                                            bool known_launch,
                                            int *dirfd_out,
                                            sluice_error_t *err);

/* Write <staging>/secrets.env (0600, O_CREAT|O_EXCL|O_NOFOLLOW) into the
 * attempt directory `dirfd`: the launch's secret values, then each
 * secret_env name of the launch and of the study read through getenv_fn
 * (the study's entries read their `source` variable).  A missing value is
 * SLUICE_EINVAL naming the variable (never a value); a reloaded launch
 * whose values are gone gives "secret unavailable after restart".  Does
 * nothing (and creates no file) when the launch has no secrets. */
SLUICE_API sluice_err sluice_staging_write_secrets(int dirfd,
                                                   const sluice_launch_t *launch,
                                                   const sluice_study_t *study,
                                                   sluice_getenv_fn getenv_fn,
                                                   void *getenv_arg,
                                                   sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_RENDER_H */
