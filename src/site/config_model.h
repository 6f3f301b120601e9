/* SPDX-License-Identifier: Apache-2.0 */
/* config_model.h - the members of the site model and of the study runtime
 * (sluice_config_t, sluice_study_runtime_t and sluice_study_t are opaque in
 * <sluice/config.h>).
 *
 * Internal: the library's own files and the tests include it; it is not
 * installed, so its layout may change in any release.  Every string in the
 * structs below is owned by the containing object and valid until its
 * sluice_*_free().  Other modules read the fields directly and never modify
 * them (src/site/ writes them; sluice_config_set_token_user() is the one
 * change after load).  Durations are whole seconds; Slurm times are whole
 * minutes.
 */
#ifndef SLUICE_SITE_CONFIG_MODEL_H
#define SLUICE_SITE_CONFIG_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/config.h>

typedef struct {
    char **items; /* n strings, owned, then NULL (when n > 0) */
    size_t n;
} sluice_strlist_t;

/* One entry of job_launcher.executables. */
typedef struct {
    char *name;
    char *path;  /* absolute, normalised, no ':', quote, '$', '\\' or control byte */
    bool in_use; /* false for sbatch/squeue/sacct/scancel/srun-side CLIs sluice never runs */
} sluice_executable_t;

typedef struct sluice_config_priv sluice_config_priv_t;

struct sluice_config {
    /* site: */
    char *site_name;       /* site.name, default "default" */
    char *job_name_prefix; /* site.job_name_prefix: "sluice" (default) or "nvfl" */

    struct {
        char *url;                    /* https://, http:// (loopback only) or unix:/path */
        char *api_version;            /* "auto" or "v0.0.38", "v0.0.40".."v0.0.46" */
        char *user;                   /* Slurm user the JWT names (X-SLURM-USER-NAME) */
        char *jwt_file;               /* token file (re-read on change) */
        char *jwt_key_file;           /* HS256 key (mint) */
        char *jwt_rs256_key_file;     /* RS256 private key (mint) */
        long jwt_lifespan_s;          /* minted token lifetime, default 1800 */
        sluice_strlist_t jwt_command; /* argv printing the token (site file only) */
        char *jwt_kid;                /* `kid` header of RS256 minted tokens */
        bool tls_verify;              /* default true */
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
};

/* ---- study runtime ---- */

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

struct sluice_study {
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
};

struct sluice_study_runtime {
    sluice_study_t *studies;
    size_t n_studies;
};

#endif /* SLUICE_SITE_CONFIG_MODEL_H */
