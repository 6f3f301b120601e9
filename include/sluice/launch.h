/* SPDX-License-Identifier: Apache-2.0 */
/* launch.h - the validated launch model: what a caller asks sluice to run.
 *
 * A launch request is JSON (the body of POST /launches, or a file given to
 * `sluice launch` / `sluice render`).  sluice_launch_parse() checks it
 * strictly against the request schema (openapi/components/launch-request.yaml)
 * and against the site's policy, and produces an immutable sluice_launch_t.
 * Two input forms are accepted and give the same model:
 *
 *  - the native form (`pools[]`, `image`, `time_limit`, `pending_timeout`);
 *  - the NVFlare job form (`resource_spec` + `launcher_spec.<site>.slurm`),
 *    mapped with the NVFlare Slurm launcher's rules.
 *
 * Every error names the JSON path and the reason, for example
 * "pools[1].gpus_per_node: expected an integer >= 0"; sluice_launch_parse_all()
 * names every one of them, not only the first.  On error nothing is
 * returned: there is no half-built model.
 *
 * Secrets: per-launch secret values (`secrets`) live in a separate area of
 * the model that is zeroed when the model is freed.  They are reachable only
 * through sluice_launch_secret_value(); sluice_launch_to_json() and the
 * request hash carry their names, never their values, and no error text
 * ever contains a value.
 *
 * Site policy: this module does not read the site configuration.  The caller
 * (the config module, or a test) fills a sluice_launch_policy_t with the
 * effective site + study policy and passes it in.
 *
 * Thread-safety: a parsed model is immutable; any number of threads may read
 * it.  Parsing keeps no global state.
 */
#ifndef SLUICE_LAUNCH_H
#define SLUICE_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits ------------------------------------------------------------ */

#define SLUICE_LAUNCH_MAX_BYTES (1024 * 1024) /* whole request */
#define SLUICE_LAUNCH_MAX_ID 128              /* launch_id */
#define SLUICE_LAUNCH_MAX_NAME 64             /* site, study, account, qos, partition */
#define SLUICE_LAUNCH_MAX_STRING 4096         /* command, args, paths, misc strings */
#define SLUICE_LAUNCH_MAX_VALUE 65536         /* env and secret values */
#define SLUICE_LAUNCH_MAX_ITEMS 256           /* args, env, secret_env, secrets, mounts */
#define SLUICE_LAUNCH_MAX_POOLS 16
#define SLUICE_LAUNCH_MAX_NODES 4096           /* per pool */
#define SLUICE_LAUNCH_MAX_GPUS 64              /* per node */
#define SLUICE_LAUNCH_MAX_CPUS 65536           /* per node */
#define SLUICE_LAUNCH_MAX_TIME_MINUTES 525600U /* 365 days */

/* ---- runtime profiles -------------------------------------------------- */

typedef enum {
    SLUICE_LAUNCH_PROFILE_UNSET = 0, /* the request did not choose */
    SLUICE_LAUNCH_PROFILE_NONE,      /* commands run directly in the allocation */
    SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS,
    SLUICE_LAUNCH_PROFILE_APPTAINER
} sluice_launch_profile;

#define SLUICE_LAUNCH_PROFILE_BIT(p) (1U << (unsigned)(p))

/* "none", "enroot-pyxis", "apptainer"; "" for UNSET and unknown values. */
SLUICE_API const char *sluice_launch_profile_name(sluice_launch_profile p);

/* Parse a profile name; "pyxis" is an alias of "enroot-pyxis".  Returns
 * SLUICE_LAUNCH_PROFILE_UNSET for an unknown name. */
SLUICE_API sluice_launch_profile sluice_launch_profile_parse(const char *name);

typedef enum {
    SLUICE_LAUNCH_DEP_NONE = 0,
    SLUICE_LAUNCH_DEP_AFTER,    /* the other launch has started */
    SLUICE_LAUNCH_DEP_AFTEROK,  /* ... has ended with SUCCEEDED */
    SLUICE_LAUNCH_DEP_AFTERANY, /* ... has ended, whatever the result */
} sluice_launch_dep;

/* "after", "afterok", "afterany"; "" for NONE. */
SLUICE_API const char *sluice_launch_dep_name(sluice_launch_dep d);

/* ---- site policy (filled by the config module) ------------------------- */

/* One entry of the site's GPU series catalogue.  A series whose constraint
 * is NULL or "" is known but unusable: a pool that asks for it is refused
 * (fail-closed), naming the pool and the series. */
typedef struct {
    const char *series;         /* e.g. "a100" */
    const char *constraint;     /* Slurm constraint expression, e.g. "gpu_a100" */
    const char *gres;           /* gres name ("gpu" or "gpu:a100"); NULL = "gpu" */
    uint32_t max_gpus_per_node; /* 0 = not checked */
} sluice_launch_series_t;

/* What a request may choose.  Every pointer is borrowed for the duration of
 * the sluice_launch_parse() call only; the model keeps copies of what it
 * needs.  String lists: NULL or empty means the request may not set the
 * field at all; an entry "*" allows any (syntactically valid) value. */
typedef struct {
    /* The effective site (and study) sandbox.  UNSET is treated as NONE. */
    sluice_launch_profile default_profile;
    /* Profiles a request may name, as SLUICE_LAUNCH_PROFILE_BIT() bits.
     * 0: only default_profile may be named. */
    unsigned allowed_profiles;
    const char *const *partitions;
    size_t n_partitions;
    const char *const *accounts;
    size_t n_accounts;
    const char *const *qos;
    size_t n_qos;
    const sluice_launch_series_t *series;
    size_t n_series;
    uint32_t pending_timeout; /* the site's, seconds; 0 = 600 (NVFlare's default) */
    bool allow_requeue;
    /* Series of a pool that asks for GPUs and names none (must be in
     * `series`); NULL: such a pool is refused (fail-closed). */
    const char *default_series;
    /* Hetjobs: the site's keep_going (a failing pool does not stop the
     * others), and whether a request may choose the other value. */
    bool keep_going;
    bool allow_keep_going;
    /* The worker interpreter (study slurm.python_path, else the site's
     * job_launcher.python_path), or NULL: the command of an NVFlare-form
     * request that gives none (its args then start with the worker
     * module, as NVFlare's launcher runs `<python_path> -u -m ...`). */
    const char *python_path;
    /* The service's variables `secret_env` may name: exact names, or
     * prefixes ending in '*'.  None: a request may name no variable. */
    char *const *secret_env_allowed;
    size_t n_secret_env_allowed;
    /* Webhooks (docs/api.md): a request may name `webhook.url` only when
     * allow_webhook_urls is set and the URL starts with one of
     * webhook_prefixes (boundary rule of site/webhook_url.h); plain http
     * only to loopback unless webhook_allow_insecure_http. */
    bool allow_webhook_urls;
    char *const *webhook_prefixes;
    size_t n_webhook_prefixes;
    bool webhook_allow_insecure_http;
    /* The site's clusters, by name (`cluster` must be one of them); none:
     * only "default" (a site without `clusters:`). */
    const char *const *clusters;
    size_t n_clusters;
} sluice_launch_policy_t;

#define SLUICE_LAUNCH_DEFAULT_PENDING_TIMEOUT 600U

/* ---- the model --------------------------------------------------------- */

/* Every pointer inside these structs is owned by the sluice_launch_t they
 * came from: borrowed by the reader, valid until sluice_launch_free(). */

typedef struct {
    char *name;
    char *value;
} sluice_launch_var_t;

typedef struct {
    char *source; /* absolute, normalised, service-side path */
    char *target; /* absolute, normalised path inside the job */
    bool rw;      /* false: read-only (the default) */
} sluice_launch_mount_t;

typedef struct {
    char *name;                /* [a-z0-9_-]{1,32}, unique in the launch */
    char *gpu_series;          /* NULL: no series (then gpus_per_node is 0) */
    uint32_t nodes;            /* >= 1 */
    uint32_t gpus_per_node;    /* 0 = none */
    uint32_t cpus_per_node;    /* 0 = not set (the partition's default) */
    uint64_t mem_per_node_mib; /* 0 = not set */
    char *command;             /* effective: the pool's, else the launch's; never NULL */
    char **args;               /* effective arguments (see docs/launch-request.md) */
    size_t n_args;
    /* Command of ranks 1..n-1 when nodes > 1 (NVFlare's
     * additional_node_command, one shell-free command line split on
     * whitespace by rendering).  NULL: rank 0 only runs `command`, and the
     * application owns the fan-out (needs the profile `none`). */
    char *additional_node_command;
    /* Resolved from the series catalogue (not part of the request): */
    char *constraint; /* NULL when gpu_series is NULL */
    char *gres;       /* NULL: "gpu" */
    /* What the request itself said (for the canonical JSON). */
    bool set_command;
    bool set_args;
    /* gpu_series is the policy's default_series (the request named none):
     * left out of the canonical JSON, like every site default. */
    bool default_series;
} sluice_launch_pool_t;

typedef struct {
    char *launch_id;
    char *site;
    char *study;                             /* NULL: none */
    sluice_launch_profile profile;           /* as requested; UNSET when absent */
    sluice_launch_profile effective_profile; /* requested, else the site's */
    char *image;                             /* NULL: the study's or site's image */
    char *command;                           /* NULL when every pool has its own */
    char **args;
    size_t n_args;
    char *workdir; /* NULL: the launch's staging directory */
    sluice_launch_var_t *env;
    size_t n_env;
    char **secret_env; /* names of variables in the service's environment */
    size_t n_secret_env;
    sluice_launch_mount_t *mounts;
    size_t n_mounts;
    uint32_t time_limit;                /* minutes; 0 = the site's */
    uint32_t pending_timeout;           /* seconds as requested; 0 = not set */
    uint32_t effective_pending_timeout; /* requested, else the site's */
    char *depends_on;                   /* another launch_id, or NULL */
    sluice_launch_dep depends_condition;
    bool requeue;
    bool exclusive;
    /* Hetjobs: true = a failing pool does not stop the other pools.  The
     * request's value (set_keep_going), else the site's policy. */
    bool keep_going;
    bool set_keep_going;
    char *signal; /* normalised "<SIG>@<seconds>" (e.g. "USR1@120"), or NULL */
    char *account;
    char *qos;
    char *partition;
    sluice_launch_pool_t *pools; /* 1..SLUICE_LAUNCH_MAX_POOLS */
    size_t n_pools;
    bool nvflare_form; /* the request used resource_spec/launcher_spec */
    /* webhook.url: this launch's own webhook receiver (besides the site's),
     * or NULL.  Allowed by the policy's webhook_* fields only. */
    char *webhook_url;
    /* The cluster the request names (one of policy.clusters), or NULL:
     * the site's first. */
    char *cluster;
} sluice_launch_spec_t;

typedef struct sluice_launch sluice_launch_t;

/* Parse flags. */
enum {
    /* Accept `secret_names` (an array of names whose values are not
     * available), as written by sluice_launch_to_json(): used when the store
     * reloads a launch after a restart. */
    SLUICE_LAUNCH_PARSE_STORED = 1U << 0,
};

/* Parse and validate `len` bytes of JSON (no NUL terminator needed) against
 * `policy`.  On success *out receives a new model (caller frees with
 * sluice_launch_free()).  Errors: SLUICE_EINVAL (bad JSON, schema or policy
 * violation; err->text names the JSON path), SLUICE_ETOOBIG (more than
 * SLUICE_LAUNCH_MAX_BYTES), SLUICE_ENOMEM.  The parse tree's copies of
 * secret values are zeroed before it is released; the caller's buffer is
 * the caller's to wipe. */
SLUICE_API sluice_err sluice_launch_parse(sluice_launch_t **out,
                                          const char *data,
                                          size_t len,
                                          const sluice_launch_policy_t *policy,
                                          unsigned flags,
                                          sluice_error_t *err);

/* sluice_launch_parse() that names every field error: the checks go on
 * after a bad field (a field whose value is bad is left out of the checks
 * that read it), and each error is appended to `errors` (may be NULL) as
 * {path, reason}, in the order of the request document.  err->text is the
 * first of them ("<path>: <reason>").  An error of the request as a whole
 * (not JSON, not an object, too big, out of memory) stops at once and is
 * in `err` only: `errors` then gains nothing.  The caller owns `errors`
 * (sluice_errlist_clear()). */
SLUICE_API sluice_err sluice_launch_parse_all(sluice_launch_t **out,
                                              const char *data,
                                              size_t len,
                                              const sluice_launch_policy_t *policy,
                                              unsigned flags,
                                              sluice_errlist_t *errors,
                                              sluice_error_t *err);

/* The request text as one JSON value, the way every parse reads it:
 * duplicate keys refused, at most SLUICE_LAUNCH_MAX_BYTES (SLUICE_ETOOBIG),
 * invalid JSON SLUICE_EINVAL with the line and column (never jansson's
 * excerpt of the text, which may be part of a secret).  *out is a new
 * reference on success.  For callers that look at the document before the
 * parse (the accept pipeline, the service): they load it once with this
 * and hand the value to sluice_launch_parse_value(). */
SLUICE_API sluice_err sluice_launch_load(const char *data,
                                         size_t len,
                                         json_t **out,
                                         sluice_error_t *err);

/* sluice_launch_parse_all() of a document already loaded (any JSON value:
 * not an object is SLUICE_EINVAL).  The secret values in `root` are zeroed
 * once the model holds its copies, whatever the outcome; the value stays
 * the caller's to release. */
SLUICE_API sluice_err sluice_launch_parse_value(sluice_launch_t **out,
                                                json_t *root,
                                                const sluice_launch_policy_t *policy,
                                                unsigned flags,
                                                sluice_errlist_t *errors,
                                                sluice_error_t *err);

/* Free a model; secret values are zeroed first.  NULL-safe. */
SLUICE_API void sluice_launch_free(sluice_launch_t *l);

/* The whole read-only model (borrowed; valid until sluice_launch_free()). */
SLUICE_API const sluice_launch_spec_t *sluice_launch_spec(const sluice_launch_t *l);

/* Shortcuts into the model (borrowed). */
SLUICE_API const char *sluice_launch_id(const sluice_launch_t *l);
SLUICE_API size_t sluice_launch_pool_count(const sluice_launch_t *l);
/* Pool i, or NULL when i is out of range. */
SLUICE_API const sluice_launch_pool_t *sluice_launch_pool(const sluice_launch_t *l, size_t i);

/* Per-launch secrets (`secrets` in the request).  Names are sorted.  The
 * value is borrowed, valid until sluice_launch_free(), and NULL when the
 * model was reloaded from its canonical JSON (values are never stored):
 * the launcher then ends the launch with "secret unavailable after
 * restart".  Never log or copy a value anywhere but the secret file. */
SLUICE_API size_t sluice_launch_secret_count(const sluice_launch_t *l);
SLUICE_API const char *sluice_launch_secret_name(const sluice_launch_t *l, size_t i);
SLUICE_API const char *sluice_launch_secret_value(const sluice_launch_t *l, size_t i);

/* Canonical JSON of the request as the model understood it: native form,
 * compact, keys sorted, defaults that depend on site policy left out, and
 * secrets listed by name only (`secret_names`).  An NVFlare-form request
 * and its native equivalent give the same text.  Caller frees with free().
 * Returns NULL (err: SLUICE_ENOMEM) when out of memory. */
SLUICE_API char *sluice_launch_to_json(const sluice_launch_t *l, sluice_error_t *err);

/* The same canonical request as a JSON object (what sluice_launch_to_json()
 * serialises), for callers that hand it on as JSON: no text in between.
 * Secrets by name only.  A new reference, or NULL (err: SLUICE_ENOMEM). */
SLUICE_API json_t *sluice_launch_to_value(const sluice_launch_t *l, sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_LAUNCH_H */
