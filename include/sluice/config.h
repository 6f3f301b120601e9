/* SPDX-License-Identifier: Apache-2.0 */
/* config.h - the validated site model (site YAML + environment + flags) and
 * the per-launch study runtime file.
 *
 * A site configuration is built in layers: defaults, then the YAML site file
 * (which may be an NVFlare slurm.yaml taken whole), then the environment
 * (SLUICE_<SECTION>_<KEY> and the seed's FORGE_* variables), then flag
 * overrides ("rest.url=https://..." strings).  A later layer wins.  The
 * result is checked as a whole; on any error nothing is returned.
 *
 * Notes:
 * - Only src/site/config_yaml.c sees libyaml.
 * - The model holds file *paths* of secrets (JWT file, keys), never their
 *   contents; sluice_config_to_json() is safe to print.
 * - Every string in the structs below is owned by the containing object and
 *   valid until its sluice_*_free().  Other modules read the fields directly
 *   and never modify them.
 * - Durations are whole seconds; Slurm times are whole minutes.
 */
#ifndef SLUICE_CONFIG_H
#define SLUICE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SLUICE_SANDBOX_UNSET = 0,
    SLUICE_SANDBOX_ENROOT_PYXIS, /* "enroot-pyxis", alias "pyxis" */
    SLUICE_SANDBOX_APPTAINER,    /* "apptainer" */
    SLUICE_SANDBOX_NONE          /* "none": bare Python in the allocation */
} sluice_sandbox_t;

/* Canonical profile name ("enroot-pyxis", "apptainer", "none", "unset"). */
SLUICE_API const char *sluice_sandbox_name(sluice_sandbox_t s);

/* Where an effective value came from. */
typedef enum {
    SLUICE_SRC_DEFAULT = 0,
    SLUICE_SRC_FILE,
    SLUICE_SRC_ENV,
    SLUICE_SRC_FLAG,
    SLUICE_SRC_TOKEN /* rest.user only: the Slurm token's own user (sluice_config_set_token_user())
                      */
} sluice_config_source_t;

SLUICE_API const char *sluice_config_source_name(sluice_config_source_t s);

typedef struct {
    char **items; /* n strings, owned */
    size_t n;
} sluice_strlist_t;

/* One entry of the gpu_series catalogue. */
typedef struct {
    char *name;
    char *constraint;   /* Slurm feature expression; always set (fail-closed) */
    char *gres;         /* gres name, default "gpu" */
    long gpus_per_node; /* 0 = not declared */
    char *gpu_vendor;   /* "nvidia", "amd" or "none"; NULL = job_launcher.gpu_vendor */
} sluice_gpu_series_t;

/* One entry of job_launcher.executables. */
typedef struct {
    char *name;
    char *path;  /* absolute, normalised, no ':', quote, '$', '\\' or control byte */
    bool in_use; /* false for sbatch/squeue/sacct/scancel/srun-side CLIs sluice never runs */
} sluice_executable_t;

typedef struct sluice_config_priv sluice_config_priv_t;

typedef struct {
    /* site: */
    char *site_name;       /* site.name, default "default" */
    char *job_name_prefix; /* site.job_name_prefix: "sluice" (default) or "nvfl" */

    struct {
        char *url;                /* https://, http:// (loopback only) or unix:/path */
        char *api_version;        /* "auto" or "v0.0.38", "v0.0.40".."v0.0.46" */
        char *user;               /* Slurm user the JWT names (X-SLURM-USER-NAME) */
        char *jwt_file;           /* token file (re-read on change) */
        char *jwt_key_file;       /* HS256 key (mint) */
        char *jwt_rs256_key_file; /* RS256 private key (mint) */
        long jwt_lifespan_s;      /* minted token lifetime, default 1800 */
        bool tls_verify;          /* default true */
        char *ca_file, *ca_path, *pinned_pubkey, *client_cert, *client_key;
        bool allow_insecure_http; /* http:// to a non-loopback host */
        bool strict_permissions;  /* group/world-readable token files are errors */
    } rest;

    struct {
        char *root;         /* shared storage root as the service sees it */
        char *cluster_root; /* the same directory on the cluster (default: root) */
    } storage;

    /* job_launcher: (NVFlare key names) */
    struct {
        sluice_sandbox_t sandbox;
        char *image;       /* absolute path or NULL */
        char *python_path; /* absolute path or NULL */
        char *parent_host;
        struct {
            char *partition, *account, *qos, *constraint, *reservation;
            char *time;        /* as written, or NULL */
            long time_minutes; /* parsed `time`; 0 when unset */
        } sbatch;
        sluice_strlist_t setup;       /* shell lines, trusted */
        sluice_strlist_t forward_env; /* variable names */
        sluice_executable_t *executables;
        size_t n_executables;
        /* job_path: the PATH of every job (script and REST environment);
         * NULL = the default (see docs/configuration.md).  Absolute
         * directories joined by ':'. */
        char *job_path;
        long internal_port;      /* default 8102 */
        long poll_interval_s;    /* 0 = auto (2 s with jobs/state, 10 s on v0.0.38) */
        long submit_timeout_s;   /* default 30 */
        long query_timeout_s;    /* default 10 */
        long cancel_timeout_s;   /* default 10 */
        long pending_timeout_s;  /* default 600 */
        bool fail_unschedulable; /* default true: see unschedulable_reasons */
        sluice_strlist_t unschedulable_reasons; /* empty = the default list */
        long port_range_lo, port_range_hi;      /* default 29400-30399 (30400-31399) */
        char *internal_connection_security;     /* "mtls"/"clear": accepted, not used */
        /* workspace: the NVFlare runtime workspace (the output of `nvflare
         * deploy prepare`), an absolute path that is the same on the
         * parent and the nodes; NULL = none.  NVFlare-form launches under
         * a container get the NVFlare launcher's own mounts of it
         * (docs/rendering.md, "NVFlare launcher mounts"). */
        char *workspace;
        /* gpu_vendor: the vendor of a pool's GPUs when its series names
         * none: "nvidia" (apptainer --nv), "amd" (--rocm) or "none" (no
         * flag); NULL = "nvidia". */
        char *gpu_vendor;
    } launcher;

    sluice_gpu_series_t *gpu_series;
    size_t n_gpu_series;

    struct {
        sluice_strlist_t allowed_profiles; /* empty = the site sandbox only */
        sluice_strlist_t allowed_partitions, allowed_accounts, allowed_qos; /* empty = site's */
        bool allow_requeue;                                                 /* default false */
        long max_time_minutes;                                              /* 0 = no cap */
        /* Series of a pool that asks for GPUs and names none (the NVFlare
         * form never names one); NULL: such a pool is refused (fail-closed). */
        char *default_gpu_series;
        /* Job images (a request's own image) the site authorises (BYOC):
         * absolute files, or directories (a trailing '/', or an existing
         * directory) whose files are allowed; compared on canonical paths.
         * Empty (the default): every job image is refused; the study's and
         * the site's images are trusted. */
        sluice_strlist_t allowed_images;
        /* Variables of the service's own environment a request's
         * `secret_env` may name: exact names, or a prefix ending in '*'
         * ("WANDB_*").  Empty (the default): a request may name none.  A
         * study's secret_env is the site's own and is not limited. */
        sluice_strlist_t allowed_secret_env;
        /* Hetjobs: true = a failing pool does not stop the others (default
         * false: it stops them); allow_keep_going lets a request choose. */
        bool keep_going;
        bool allow_keep_going;
    } policy;

    struct {
        long miss_budget;    /* default 5 */
        long miss_spacing_s; /* default 6 */
    } accounting;

    struct {
        long absence_delay_s;   /* default 60 */
        long absence_lookups;   /* default 3 */
        long absence_spacing_s; /* default 10 */
        long in_flight;         /* POSTs at once, 1..16; default 4 */
        long per_sec;           /* submit budget toward slurmctld; default 200 */
    } submit;

    /* server: (`sluice serve`; its flags override these) */
    struct {
        char *listen;         /* "ADDR:PORT"; plain HTTP only on loopback, any address with TLS */
        char *tokens_file;    /* `<caller> <token> [admin]` lines */
        char *socket;         /* Unix socket path */
        long socket_mode;     /* default 0660; never world-accessible */
        char *socket_group;   /* group the socket is chowned to, or NULL */
        char *tls_cert;       /* PEM certificate (chain) for the TCP listener */
        char *tls_key;        /* PEM private key */
        long threads;         /* worker threads per listener, default 4 */
        long conn_timeout_s;  /* idle or trickling connection closed after, default 30 */
        long max_connections; /* past it: 503, default 4096 */
        long head_timeout_s;  /* a first request head not whole by then: closed, default 10 */
    } server;

    /* retention: (0 = keep forever) */
    struct {
        long launches_max_age_s; /* finished launches, default 2592000 (30 d) */
        long logs_max_age_s;     /* archived logs, default 7776000 (90 d) */
    } retention;
    struct {
        long rpc_per_sec; /* reads and cancels toward slurmctld; default 50 */
    } poll;
    /* webhooks: a signed POST of each transition of a launch (docs/api.md,
     * "Webhooks").  On when `url` is set or allow_request_urls is true;
     * then secret_file is required. */
    struct {
        char *url;                /* the site's receiver for every launch, or NULL */
        char *secret_file;        /* the HMAC key file (its path; the worker reads it) */
        long queue_max;           /* undelivered deliveries kept in the store, default 10000 */
        long timeout_s;           /* one POST, connect included, default 10 */
        long retry_initial_s;     /* the first retry's delay, default 5 */
        long retry_max_s;         /* the longest delay between attempts, default 3600 */
        long max_attempts;        /* then the delivery is dead (kept), default 20 */
        bool allow_insecure_http; /* http:// to a non-loopback host */
        bool allow_request_urls;  /* a request's webhook.url, when it matches a prefix */
        sluice_strlist_t request_url_prefixes; /* the allow-list of request URLs */
    } webhooks;

    /* store: where launches and events are kept (docs/operations.md,
     * "The store").  url NULL: SQLite in the state directory; a
     * postgresql:// or postgres:// URL (never with a password): PostgreSQL. */
    struct {
        char *url;           /* NULL or the PostgreSQL URL */
        char *password_file; /* NULL (libpq's environment, PGPASSFILE) or a 0600 file */
        long log_max_bytes;  /* each archived log kept up to its last N bytes, default 8 MiB */
    } store;

    /* ha: replicas of `sluice serve` on one PostgreSQL store, one leader
     * (leader.h; docs/operations.md, "Replicas"). */
    struct {
        long lease_ms;    /* a leader's lease, default 8000 */
        long renew_ms;    /* its renewal interval, default 2000; < lease_ms / 2 */
        char *replica_id; /* NULL: $SLUICE_REPLICA_ID, else <hostname>:<pid> */
    } ha;

    /* log: what the command's stderr sink shows when neither --log-level /
     * --log-format nor SLUICE_LOG_LEVEL / SLUICE_LOG_FORMAT say (NULL:
     * warning, text). */
    struct {
        char *level;  /* error | warning | notice | info | debug */
        char *format; /* text | json | journald */
    } log;

    /* Non-fatal findings ("parent.environment_setup: not used by sluice"). */
    sluice_strlist_t warnings;

    sluice_config_priv_t *priv; /* provenance; internal */
} sluice_config_t;

/* Reads one environment variable; returns a borrowed value or NULL. */
typedef const char *(*sluice_getenv_fn)(const char *name, void *arg);

/* Inputs of sluice_config_load().  Every member may be zero/NULL. */
typedef struct {
    const char *path; /* site YAML file; NULL = none */
    const char *text; /* or: YAML text in memory (used when path is NULL) */
    size_t text_len;
    const char *text_name;      /* name used in messages for `text` ("<memory>") */
    const char *const *envp;    /* "NAME=value" array, NULL-terminated */
    sluice_getenv_fn getenv_fn; /* used when envp is NULL; both NULL = no env */
    void *getenv_arg;
    const char *const *overrides; /* "dotted.key=value" strings */
    size_t n_overrides;
    bool no_required; /* skip "required" checks (rest.url, storage.root, sandbox) */
} sluice_config_opts_t;

/* Every field zero: each one's documented default.  Declare options as
 * `sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;` and set what differs. */
#define SLUICE_CONFIG_OPTS_INIT                                                                    \
    {                                                                                              \
        0                                                                                          \
    }

/* Build the validated site model.  On success *out receives a new object
 * (caller frees with sluice_config_free()); on failure *out is untouched and
 * `err` says "<file>:<line>:<col>: <key>: <what was expected>" (SLUICE_ECONFIG),
 * SLUICE_EIO when the file cannot be read, SLUICE_ENOMEM.  Thread-safe
 * (no global state; the process environment is read only through opts). */
SLUICE_API sluice_err sluice_config_load(const sluice_config_opts_t *opts,
                                         sluice_config_t **out,
                                         sluice_error_t *err);

SLUICE_API void sluice_config_free(sluice_config_t *cfg);

/* ---- clusters (`clusters:` in the site file; docs/configuration.md) ---- */

/* The clusters of a site config, in file order; the first is the default.
 * A config without `clusters:` has one, "default", which is cfg itself.
 * With `clusters:`, each is a complete sluice_config_t built from the top
 * level with the entry's rest, storage, job_launcher.sbatch_directives and
 * gpu_series on top (every other block as the site's); the environment and
 * --set give their rest/storage/sbatch_directives values to the first
 * cluster only.  Each is borrowed: owned by cfg and freed with it (never
 * call sluice_config_free() on one); a cluster's own count is 1 (itself).
 * The site config itself then holds the top level: what the clusters
 * inherit, not a cluster (its rest.url or storage.root may be unset).
 * Read-only after load, so safe from any thread, as cfg is. */
SLUICE_API size_t sluice_config_cluster_count(const sluice_config_t *cfg);
/* The i-th cluster (borrowed from cfg), or NULL when i >= the count. */
SLUICE_API const sluice_config_t *sluice_config_cluster_at(const sluice_config_t *cfg, size_t i);
/* The same, writable: what a command completes on each cluster before it
 * uses them (sluice_client_resolve_user()). */
SLUICE_API sluice_config_t *sluice_config_cluster_at_mut(sluice_config_t *cfg, size_t i);
/* NULL or "" name: the default (first) cluster; NULL when no cluster has the name. */
SLUICE_API const sluice_config_t *sluice_config_cluster_named(const sluice_config_t *cfg,
                                                              const char *name);
/* The name of a cluster (borrowed from cfg): "default" for a config
 * without `clusters:`, the entry's name for one of
 * sluice_config_cluster_at(); NULL for a site config with `clusters:`
 * (which is not itself a cluster) and for NULL. */
SLUICE_API const char *sluice_config_cluster_name(const sluice_config_t *cfg);

/* The GPU series named `name`, borrowed from cfg, or NULL. */
SLUICE_API const sluice_gpu_series_t *sluice_config_gpu_series(const sluice_config_t *cfg,
                                                               const char *name);

/* The path job_launcher.executables gives for command `name` ("srun",
 * "apptainer", ...), borrowed from cfg, or NULL when it names none. */
SLUICE_API const char *sluice_config_executable(const sluice_config_t *cfg, const char *name);

/* The Slurm identity of a configuration without rest.user: the user the
 * token names (`claim`: "sun" or "username"; the slurm layer reads it:
 * sluice_client_resolve_user()).  rest.user becomes `user`, its source
 * SLUICE_SRC_TOKEN ("token:<claim>" in sluice_config_to_json()), so that
 * everything reading rest.user (the staging owner, the launcher) sees the
 * identity.  Nothing changes when rest.user is already that user;
 * SLUICE_ECONFIG when it names another; SLUICE_EINVAL for an empty user. */
SLUICE_API sluice_err sluice_config_set_token_user(sluice_config_t *cfg,
                                                   const char *user,
                                                   const char *claim,
                                                   sluice_error_t *err);

/* Where the value at dotted `key` came from (SLUICE_SRC_DEFAULT if unknown). */
SLUICE_API sluice_config_source_t sluice_config_source(const sluice_config_t *cfg, const char *key);

/* Effective configuration as JSON: {"config": {...}, "sources": {"rest.url":
 * "env", ...}, "warnings": [...]}, and for a site with `clusters:` also
 * "clusters": [{"name": "east", "config": {the per-cluster blocks: rest,
 * storage, job_launcher.sbatch_directives, gpu_series}, "sources": {...}},
 * ...].  No secret material is ever in it; a password in rest.url is
 * replaced by "***".  *out is a new reference. */
SLUICE_API sluice_err sluice_config_to_json(const sluice_config_t *cfg,
                                            json_t **out,
                                            sluice_error_t *err);

/* ---- study runtime (local/study_runtime.yaml, format_version 2) ---- */

typedef struct {
    char *name;   /* dataset name */
    char *source; /* absolute path on the cluster */
    char *target; /* /data/<study>/<dataset> */
    bool read_only;
} sluice_dataset_t;

typedef struct {
    char *name;   /* variable name inside the job */
    char *source; /* variable in the service's environment */
} sluice_secret_env_t;

/* A read-only secret mount (secret_mounts.<name>: {source, mount_path}). */
typedef struct {
    char *name;   /* [A-Za-z0-9._-] */
    char *source; /* absolute path on the cluster, outside the storage root */
    char *target; /* mount_path: absolute path inside the container */
} sluice_secret_mount_t;

typedef struct {
    char *name;
    char *image; /* container.image, or NULL */
    sluice_dataset_t *datasets;
    size_t n_datasets;
    char **env_names, **env_values; /* n_env pairs */
    size_t n_env;
    sluice_secret_env_t *secret_env;
    size_t n_secret_env;
    sluice_secret_mount_t *secret_mounts; /* always read-only; never read by sluice */
    size_t n_secret_mounts;
    /* slurm: overrides; UNSET / NULL when not given */
    sluice_sandbox_t sandbox;
    sluice_strlist_t setup;
    bool has_setup;
    char *partition, *account, *qos;
    char *python_path; /* slurm.python_path: the worker interpreter, or NULL (the site's) */
} sluice_study_t;

typedef struct {
    sluice_study_t *studies;
    size_t n_studies;
} sluice_study_runtime_t;

/* Load a study runtime file (sluice_study_source_t re-reads it when it
 * changes).  `site` may be NULL; when given, studies whose effective
 * sandbox is "none" may not declare an image, datasets or secret mounts,
 * and secret mount sources must lie outside its storage root.  `text`/`len` may replace `path`
 * (then `path` is only used in messages).  Same error and ownership rules as sluice_config_load();
 * caller frees with sluice_study_runtime_free(). */
SLUICE_API sluice_err sluice_study_runtime_load(const char *path,
                                                const char *text,
                                                size_t len,
                                                const sluice_config_t *site,
                                                sluice_study_runtime_t **out,
                                                sluice_error_t *err);

SLUICE_API void sluice_study_runtime_free(sluice_study_runtime_t *rt);

/* Borrowed study named `name`, or NULL. */
SLUICE_API const sluice_study_t *sluice_study_runtime_find(const sluice_study_runtime_t *rt,
                                                           const char *name);

/* ---- a study runtime file re-read when it changes (`sluice serve`) ---- */

/* The file at `path`, for `site` (borrowed; it must outlive the source).
 * Every sluice_study_source_get() reads the file again and parses it when
 * its bytes differ from the version in memory.  A file that becomes
 * missing or invalid is not replaced by the last good version: get fails
 * with SLUICE_ECONFIG and the load error (naming the file, and the line
 * and column where it applies), which is logged once per content of the
 * file, until the file is fixed.  Thread-safe: versions in use are
 * reference-counted. */
typedef struct sluice_study_source sluice_study_source_t;

/* Open and read the file now; an unusable file is an error here (as
 * sluice_study_runtime_load() says).  Free with sluice_study_source_close(). */
SLUICE_API sluice_err sluice_study_source_open(sluice_study_source_t **out,
                                               const char *path,
                                               const sluice_config_t *site,
                                               sluice_error_t *err);

/* The current version (the file is read now): *out is
 * borrowed until sluice_study_source_release(src, *out).  On error *out is
 * NULL. */
SLUICE_API sluice_err sluice_study_source_get(sluice_study_source_t *src,
                                              const sluice_study_runtime_t **out,
                                              sluice_error_t *err);
SLUICE_API void sluice_study_source_release(sluice_study_source_t *src,
                                            const sluice_study_runtime_t *rt);

/* Every version must have been released.  NULL-safe. */
SLUICE_API void sluice_study_source_close(sluice_study_source_t *src);

/* ---- YAML documents as JSON (the site layer's YAML reader) ---------- */

/* One YAML document (at most 1 MiB; no aliases, duplicate keys, NUL bytes
 * or second document, as for the site file) as a JSON value: mappings
 * become objects (keys as strings, in document order), sequences arrays.
 * Plain scalars follow the YAML 1.2 core schema: null (~, null, empty),
 * true/false, integers (decimal, 0o octal, 0x hex), floats; .inf and .nan,
 * which JSON cannot hold, stay strings.  Quoted, block and tagged scalars
 * are strings.  `name` names the text in errors ("<name>:<line>:<col>:
 * ..."; SLUICE_ECONFIG).  *out is a new reference (json_decref()); an empty
 * document is JSON null. */
SLUICE_API sluice_err sluice_yaml_to_json(
    const char *name, const char *text, size_t len, json_t **out, sluice_error_t *err);

/* A JSON value as a YAML block document that sluice_yaml_to_json() reads
 * back as the same value: strings that would read as another type (or as
 * YAML syntax) are quoted, multi-line strings are literal blocks, object
 * keys keep their order.  *out is new (free()).  SLUICE_EINVAL for a
 * string with a NUL byte or nesting deeper than 32. */
SLUICE_API sluice_err sluice_json_to_yaml(const json_t *j, char **out, sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_CONFIG_H */
