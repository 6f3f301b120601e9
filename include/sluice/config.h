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
 * - sluice_config_t, sluice_study_runtime_t and sluice_study_t are opaque:
 *   a caller reads the model through the functions below (every effective
 *   value is in sluice_config_to_json()).  Strings they hand out are
 *   borrowed from the object, valid until its sluice_*_free().
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

/* One entry of the gpu_series catalogue. */
typedef struct {
    char *name;
    char *constraint;   /* Slurm feature expression; always set (fail-closed) */
    char *gres;         /* gres name, default "gpu" */
    long gpus_per_node; /* 0 = not declared */
    char *gpu_vendor;   /* "nvidia", "amd" or "none"; NULL = job_launcher.gpu_vendor */
} sluice_gpu_series_t;

/* The validated site model: opaque.  Read it with the accessors below and
 * sluice_config_to_json() (every effective value and where it came from).
 * (The library's own files see its members: src/site/config_model.h.) */
typedef struct sluice_config sluice_config_t;

/* Reads one environment variable; returns a borrowed value or NULL. */
typedef const char *(*sluice_getenv_fn)(const char *name, void *arg);

/* Inputs of sluice_config_load().  Every member may be zero/NULL. */
typedef struct {
    unsigned int version; /* SLUICE_CONFIG_OPTS_VERSION: first, always */
    const char *path;     /* site YAML file; NULL = none */
    const char *text;     /* or: YAML text in memory (used when path is NULL) */
    size_t text_len;
    const char *text_name;      /* name used in messages for `text` ("<memory>") */
    const char *const *envp;    /* "NAME=value" array, NULL-terminated */
    sluice_getenv_fn getenv_fn; /* used when envp is NULL; both NULL = no env */
    void *getenv_arg;
    const char *const *overrides; /* "dotted.key=value" strings */
    size_t n_overrides;
    bool no_required; /* skip "required" checks (rest.url, storage.root, sandbox) */
    /* version 2: */
    /* Every error of the site file, the environment and --set, in order
     * (caller-owned, SLUICE_ERRLIST_INIT, sluice_errlist_clear() after):
     * the load goes on after a bad value and each item's reason is a whole
     * message ("<file>:<line>:<col>: <key>: <reason>"), its path the key.
     * `err` keeps the first.  The entries of `clusters:` are walked once
     * the top level has no error, each one's errors added; the checks
     * across fields and `tenants:` run only when there is none.  NULL: the
     * same errors are counted but only the first is reported. */
    sluice_errlist_t *errors;
} sluice_config_opts_t;

/* Every field but `version` zero: each one's documented default.  Declare options as
 * `sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;` and set what differs. */
#define SLUICE_CONFIG_OPTS_VERSION 2
#define SLUICE_CONFIG_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_CONFIG_OPTS_VERSION)

/* Initialise `opts` as SLUICE_CONFIG_OPTS_INIT does, for `version`
 * (pass SLUICE_CONFIG_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_config_opts_init(sluice_config_opts_t *opts,
                                              unsigned int version,
                                              sluice_error_t *err);

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

/* ---- tenants (`tenants:` in the site file; docs/tenants.md) ---- */

/* How sluice acts on Slurm as a tenant's user. */
typedef enum {
    SLUICE_TENANT_TOKEN_FILE = 1, /* jwt_file: a token of slurm_user, rotated by the site */
    SLUICE_TENANT_MINT,           /* the cluster's HS256/RS256 key mints tokens with sun =
                                     slurm_user */
    SLUICE_TENANT_PROXY,          /* the cluster's own token (SlurmUser or root) with
                                     X-SLURM-USER-NAME: slurm_user */
} sluice_tenant_identity_t;

/* Per-tenant limits; 0 is no limit.  A request over one is refused (HTTP
 * 429 naming it), never queued. */
typedef struct {
    long live_launches;      /* launches not yet DONE */
    long nodes_in_flight;    /* nodes of the launches not yet DONE */
    long gpus_in_flight;     /* GPUs of the launches not yet DONE */
    long accepts_per_minute; /* new launches accepted in any 60 s */
} sluice_tenant_limits_t;

/* One entry of `tenants:`: a named group of API callers acting on Slurm as
 * their own user, within the site policy.  Read-only, owned by the config.
 * An empty allowed_* list means the site's own rule for that field; a
 * non-empty one narrows it (each entry is also allowed by the site). */
typedef struct {
    char *name;       /* [a-z0-9][a-z0-9-]{0,31}, never "default" */
    char *slurm_user; /* the Slurm (and Unix) user its jobs run as */
    sluice_tenant_identity_t identity;
    char *jwt_file; /* SLUICE_TENANT_TOKEN_FILE: absolute; NULL otherwise */
    char *account;  /* the account of its jobs when a request names none; NULL: the site's */
    char **callers; /* API callers (tokens file names, "unix:<user>" socket peers) */
    size_t n_callers;
    char **allowed_partitions, **allowed_accounts, **allowed_qos, **allowed_images;
    size_t n_allowed_partitions, n_allowed_accounts, n_allowed_qos, n_allowed_images;
    sluice_tenant_limits_t limits;
    /* The studies of the study runtime file its requests may name; empty:
     * every study (a request naming none is never refused by it). */
    char **allowed_studies;
    size_t n_allowed_studies;
} sluice_tenant_t;

/* The name of the tenant every launch of a site without `tenants:` (and
 * every caller no tenant lists) belongs to: it acts as rest.user. */
#define SLUICE_TENANT_DEFAULT "default"

/* The tenants of a site config, in file order (0 without `tenants:`); each
 * borrowed from cfg. */
SLUICE_API size_t sluice_config_tenant_count(const sluice_config_t *cfg);
SLUICE_API const sluice_tenant_t *sluice_config_tenant_at(const sluice_config_t *cfg, size_t i);
/* The tenant named `name`, or NULL (also for "default", which has no entry). */
SLUICE_API const sluice_tenant_t *sluice_config_tenant_named(const sluice_config_t *cfg,
                                                             const char *name);
/* The tenant that lists `caller`, or NULL: the caller belongs to the
 * default tenant. */
SLUICE_API const sluice_tenant_t *sluice_config_tenant_of_caller(const sluice_config_t *cfg,
                                                                 const char *caller);
/* The identity's word in the site file: "token_file", "mint", "proxy". */
SLUICE_API const char *sluice_tenant_identity_name(sluice_tenant_identity_t id);

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
 * "env", ...}, "effective": {"job_launcher.gpu_vendor": "nvidia", ...},
 * "warnings": [...]}, and for a site with `clusters:` also "clusters":
 * [{"name": "east", "config": {the per-cluster blocks: rest, storage,
 * job_launcher.sbatch_directives, gpu_series}, "sources": {...},
 * "effective": {...}}, ...].  "config" keeps the raw values (null, 0);
 * "effective" has, by dotted path, what an unset value means, for the
 * fields whose unset value stands for something.  No secret material is ever in it; a password in
 * rest.url is replaced by "***".  *out is a new reference. */
SLUICE_API sluice_err sluice_config_to_json(const sluice_config_t *cfg,
                                            json_t **out,
                                            sluice_error_t *err);

/* ---- study runtime (local/study_runtime.yaml, format_version 2) ---- */

/* A study runtime file and one study of it: opaque (their members are
 * src/site/config_model.h's).  Load, find, hand to sluice_accept_opts_t. */
typedef struct sluice_study_runtime sluice_study_runtime_t;
typedef struct sluice_study sluice_study_t;

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
