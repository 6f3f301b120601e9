/* SPDX-License-Identifier: Apache-2.0 */
/* config_int.h - what the site files share: the YAML tree, the field
 * table, the walker context and the value helpers.
 *
 * Who owns what:
 *   config_yaml.c     the tree (cfg_parse_yaml, cfg_node_free), cfg_read_file,
 *                     cfg_dup/cfg_dupn
 *   config_fields.c   the field table (cfg_fields, cfg_find_field)
 *   config_kinds.c    the kinds in words, settable kinds, SLUICE_* names
 *   config_meaning.c  what an unset value means (config show, config init)
 *   config_ref.c      `sluice config reference` (markdown; config_ref.h)
 *   config_init.c     `sluice config init` (config_ref.h)
 *   config_schema.c   its JSON Schema
 *   config_value.c    errors and warnings at a node, scalar words, lists
 *   config_catalog.c  gpu_series and job_launcher.executables
 *   config_check.c    the cross-field checks run after every layer
 *   config_walk.c     the layers of one model: defaults, the tree walked
 *                     against the field table (cfg_apply), env and --set
 *   config_clusters.c the `clusters:` list: one model per entry, and the
 *                     sluice_config_cluster_*() accessors
 *   config_tenants.c  the `tenants:` list and the sluice_config_tenant_*()
 *                     accessors
 *   config.c          load and free
 *   config_json.c     `sluice config show`
 *   study.c           the study runtime file
 *   study_source.c    the study file re-read when it changes (calls study.c
 *                     and config_yaml.c)
 * The calls go one way: config.c calls config_clusters.c, both call
 * config_walk.c and config_check.c; config_walk.c calls config_catalog.c;
 * study.c calls what it needs; all of them call config_value.c,
 * config_fields.c, config_kinds.c and config_yaml.c, which call nothing
 * above them; config_ref.c and config_schema.c only read the table.
 *
 * Every helper that fails returns a sluice_err and has written the message
 * into ctx->err; strings they hand out are new (caller frees with free()).
 */
#ifndef SLUICE_SITE_CONFIG_INT_H
#define SLUICE_SITE_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/config.h>

#include "config_model.h"

/* ---- the tree ---------------------------------------------------------- */

typedef enum { N_SCALAR, N_MAP, N_SEQ } nkind_t;

typedef struct node {
    nkind_t kind;
    char *str;  /* scalar text (NUL-free) */
    bool plain; /* plain style, no explicit tag: may be a number/bool/null */
    size_t line, col;
    struct node **kids; /* map: key, value, key, value ... */
    size_t n;
} node_t;

/* Parse YAML text into a tree; an empty document gives *out == NULL.
 * `file` names the text in errors.  Caller frees *out with cfg_node_free(). */
sluice_err
cfg_parse_yaml(const char *file, const char *text, size_t len, node_t **out, sluice_error_t *err);
void cfg_node_free(node_t *n); /* NULL-safe */

/* Read a file of at most 1 MiB; *text is new (free()), NUL-terminated. */
sluice_err cfg_read_file(const char *path, char **text, size_t *len, sluice_error_t *err);

/* Copies; NULL when out of memory (cfg_dup(NULL) is NULL). */
char *cfg_dupn(const char *s, size_t len);
char *cfg_dup(const char *s);

/* ---- the field table --------------------------------------------------- */

typedef enum {
    K_STR,       /* any single-line string */
    K_NAME,      /* [A-Za-z0-9._-]{1,64} */
    K_PREFIX,    /* job name prefix */
    K_HOST,      /* host name */
    K_ABS,       /* absolute path */
    K_URL,       /* rest.url */
    K_DBURL,     /* store.url: postgresql:// or postgres://, no password */
    K_APIVER,    /* auto | v0.0.38 | v0.0.40..45 */
    K_SANDBOX,   /* enroot-pyxis | pyxis | apptainer | none */
    K_ICS,       /* mtls | clear (accepted, not used) */
    K_RUNTIME,   /* "slurm" */
    K_BOOL,      /* true/false */
    K_INT,       /* integer in [min,max] */
    K_DUR,       /* seconds or "30s"/"5m"/"2h"/"1d" */
    K_STIME,     /* Slurm time */
    K_PORTRANGE, /* "a-b" or [a, b] */
    K_LINES,     /* block string or list of lines */
    K_LIST,      /* list of strings */
    K_ENVLIST,   /* list of variable names */
    K_PROFILES,  /* list of sandbox names */
    K_SERIES,    /* gpu_series map */
    K_EXECS,     /* executables map */
    K_MODE,      /* octal file mode, never world-accessible */
    K_JOBPATH,   /* PATH of the job: absolute directories joined by ':' */
    K_GPUVENDOR, /* nvidia | amd | none */
    K_LOGLEVEL,  /* error | warning | notice | info | debug (log.h's names) */
    K_LOGFORMAT, /* text | json | journald */
    K_ARGV,      /* a command: list of strings, the first an absolute path; file only */
} kind_t;

typedef struct {
    const char *path;
    kind_t kind;
    size_t off; /* place in sluice_config_t */
    long min, max;
    const char *forge; /* FORGE_* variable, or NULL */
    const char *doc;   /* what the key does, one or two sentences (the reference) */
} field_t;

/* The number of rows of cfg_fields (checked where the table is). */
#define CFG_N_FIELDS 99

extern const field_t cfg_fields[CFG_N_FIELDS];

/* The field of a dotted path, or NULL. */
const field_t *cfg_find_field(const char *path);
/* Index of a path in cfg_fields (0 when unknown). */
size_t cfg_field_index(const char *path);
/* True when some field lives below `path` ("rest" for "rest.url"). */
bool cfg_is_section(const char *path);

/* ---- the kinds in words (config_kinds.c), for the reference ------------ */

/* The type of `f` in words ("duration (1s to 3600s)", "boolean"), written
 * into buf (cap bytes); returns buf. */
const char *cfg_kind_type(const field_t *f, char *buf, size_t cap);
/* The fixed words a kind accepts (NULL-terminated, static), or NULL when
 * its values are not a fixed set.  K_PROFILES gives its items' words. */
const char *const *cfg_kind_values(kind_t k);
/* False for the kinds the environment and --set refuse (they are set
 * from the site file only). */
bool cfg_kind_settable(kind_t k);
/* SLUICE_<PATH> with dots as underscores, upper case (SLUICE_REST_URL). */
void cfg_env_name(const char *path, char *out, size_t cap);

/* ---- what an unset value means (config_meaning.c) ---------------------- */

/* The words for the value of `f` in `cfg` when it is unset (NULL, 0, an
 * empty list) and its unset value stands for something: "nvidia",
 * "auto: 2s, 10s on v0.0.38", written into buf (cap bytes); NULL when the
 * value is set or needs no words.  cfg NULL: the words whatever the value
 * (config init, the reference). */
const char *cfg_meaning(const sluice_config_t *cfg, const field_t *f, char *buf, size_t cap);
/* The rows of the table of meanings, for the tests. */
size_t cfg_meaning_count(void);
const char *cfg_meaning_path(size_t i);

/* True for the fields a `clusters:` entry may set (rest.*, storage.*,
 * job_launcher.sbatch_directives.*, gpu_series). */
bool cfg_field_per_cluster(const field_t *f);

/* Where each field's value came from, per loaded config, and the clusters. */
struct sluice_config_priv {
    unsigned char src[CFG_N_FIELDS];
    char *origin[CFG_N_FIELDS]; /* env variable name for SLUICE_SRC_ENV */
    size_t line[CFG_N_FIELDS], col[CFG_N_FIELDS];
    /* "default" for a config without `clusters:`, the entry's name for a
     * cluster, NULL for a site with `clusters:` (not itself a cluster). */
    char *cluster_name;
    /* A site with `clusters:`: one model per entry, in file order, owned
     * here (sluice_config_free() frees them).  Otherwise NULL and 0. */
    sluice_config_t **clusters;
    size_t n_clusters;
    /* The `tenants:` list (config_tenants.c), in file order; owned here. */
    sluice_tenant_t *tenants;
    size_t n_tenants;
};

/* ---- the walker context and value helpers ------------------------------ */

/* What the model being built is, for the required checks. */
typedef enum {
    CFG_ROLE_SITE = 0, /* a config without `clusters:`: today's rules */
    CFG_ROLE_BASE,     /* a site with `clusters:`: what they inherit; the
                        * required rest/storage checks are the clusters' */
    CFG_ROLE_FIRST,    /* the first (default) cluster */
    CFG_ROLE_OTHER,    /* any other cluster: needs its own token source */
} cfg_role_t;

typedef struct {
    const char *file;
    sluice_config_t *cfg;
    sluice_config_source_t src;
    const char *origin; /* env var name or NULL */
    sluice_error_t *err;
    cfg_role_t role;
    /* A cluster: "clusters[1]", put in front of the key of every error and
     * warning; `entry` is its node (where "required" errors point). */
    const char *scope;
    const node_t *entry;
    /* Every error of the file, the environment and --set, the walk going
     * on after a bad field (NULL: the first error ends the load, as in a
     * cluster's entry).  Shared by pointer; see cfg_bad_text(). */
    struct cfg_bad_list *bad;
} ctx_t;

/* The errors of one load: how many, and each one in `list` (the caller's,
 * or NULL).  ctx->err keeps the first one's text. */
typedef struct cfg_bad_list {
    size_t n;
    sluice_errlist_t *list;
} cfg_bad_list_t;

/* The error `text` (already "<place>: <key>: <message>") of `c`: the first
 * into c->err, every one into c->bad's list (its path the key `key`, its
 * reason the whole text).  Returns SLUICE_ECONFIG, or SLUICE_ENOMEM. */
sluice_err cfg_fail(ctx_t *c, const char *key, const char *text);
/* True when `rc` is an error of a value that the walk may go on after
 * (SLUICE_ECONFIG with c->bad). */
bool cfg_go_on(const ctx_t *c, sluice_err rc);

/* SLUICE_ECONFIG "<file>:<line>:<col>: <key>: <message>" (or "environment
 * NAME: <key>: ..." / "--set <key>: ..."), n may be NULL; through
 * cfg_fail(). */
sluice_err cfg_bad(ctx_t *c, const node_t *n, const char *key, const char *fmt, ...)
    SLUICE_PRINTF(4, 5);
/* The same place prefix in front of a message that already starts with
 * "<key>: " (the text of a base/syntax.h error). */
sluice_err cfg_bad_text(ctx_t *c, const node_t *n, const char *text);
/* Append a warning to cfg->warnings. */
sluice_err cfg_warn(ctx_t *c, const node_t *n, const char *key, const char *msg);

const char *cfg_kind_word(const node_t *n); /* "a mapping", "a list", "a scalar" */
/* True for the "<required: ...>" placeholder that `sluice config init`
 * (config_init.c) writes, which every scalar kind refuses by name. */
bool cfg_is_placeholder(const char *s);
bool cfg_is_null(const node_t *n);
/* The value of `key` in mapping `m`, or NULL (also when m is not a mapping
 * and when the value is null). */
const node_t *cfg_map_get(const node_t *m, const char *key);
bool cfg_is_nonfinite(const char *s);
bool cfg_parse_long(const char *s, long *out);
bool cfg_name_ok(const char *s);    /* [A-Za-z0-9._-]{1,64}, not "." or ".." */
bool cfg_oneline_ok(const char *s); /* 1-4096 bytes, no control byte */
bool cfg_env_name_ok(const char *s);
bool cfg_bool_word(const char *s, bool *out);
bool cfg_sandbox_word(const char *s, sluice_sandbox_t *out);
/* nvidia | amd | none (job_launcher.gpu_vendor, gpu_series.<name>.gpu_vendor). */
bool cfg_gpu_vendor_word(const char *s);

/* Replace *slot with a copy of v. */
sluice_err cfg_set_str(ctx_t *c, char **slot, const char *v);
void cfg_strlist_clear(sluice_strlist_t *l);
sluice_err cfg_strlist_push(sluice_strlist_t *l, const char *s, size_t len);
/* A list from a sequence of scalars, or (env/flag only) a comma-separated
 * scalar; each item checked by `ok` when given.  Replaces *out. */
sluice_err cfg_get_list(ctx_t *c,
                        const node_t *n,
                        const char *key,
                        bool (*ok)(const char *),
                        const char *what,
                        sluice_strlist_t *out);
/* A block string or a list of shell lines.  Replaces *slot. */
sluice_err cfg_set_lines(ctx_t *c, const node_t *n, const char *key, sluice_strlist_t *slot);

/* ---- the layers of one model (config_walk.c) -------------------------- */

/* A new model holding the defaults; caller frees with sluice_config_free(). */
sluice_err cfg_new(sluice_config_t **out, sluice_error_t *err);
/* Apply one value (a node of the tree, or a scalar made from the
 * environment or --set) to one field. */
sluice_err cfg_apply(ctx_t *c, const field_t *f, const node_t *n);
/* Walk a mapping whose keys are below `prefix` ("" for the top level, whose
 * `clusters` key is skipped). */
sluice_err cfg_walk_map(ctx_t *c, const node_t *n, const char *prefix);
/* The environment and the --set overrides of `o`; with site_wide_only, the
 * per-cluster fields (cfg_field_per_cluster()) are left alone. */
sluice_err cfg_apply_env(ctx_t *c, const sluice_config_opts_t *o, bool site_wide_only);
sluice_err cfg_apply_flags(ctx_t *c, const sluice_config_opts_t *o, bool site_wide_only);

/* ---- clusters (config_clusters.c) ------------------------------------- */

/* The `clusters:` list of `root` (the tree `site` was walked from): when
 * it is there, one model per entry in site->cfg->priv->clusters (built
 * like the site, then the entry, then, for the first, the per-cluster
 * fields of the environment and --set), and `site` is the base
 * (CFG_ROLE_BASE); otherwise the site is the one cluster "default".  Run
 * after cfg_finalize() of the site. */
sluice_err cfg_clusters_build(ctx_t *site, const node_t *root, const sluice_config_opts_t *opts);

/* ---- tenants (config_tenants.c) --------------------------------------- */

/* The `tenants:` list of `root` into site->cfg->priv->tenants, checked
 * against the site's policy and every cluster's token sources.  Run after
 * cfg_clusters_build(). */
sluice_err cfg_tenants_build(ctx_t *site, const node_t *root);
/* Free a tenants array (NULL-safe). */
void cfg_tenants_free(sluice_tenant_t *t, size_t n);

/* ---- catalogues and checks --------------------------------------------- */

sluice_err cfg_set_execs(ctx_t *c, const node_t *n, const char *key);
sluice_err cfg_set_series(ctx_t *c, const node_t *n, const char *key);
/* The i-th command name of job_launcher.executables that sluice runs
 * ("srun"), or NULL past the last.  Static. */
const char *cfg_exec_used(size_t i);
/* The map field a key below it names ("job_launcher.executables.srun",
 * "gpu_series.a100.constraint"), or NULL. */
const field_t *cfg_entry_field(const char *key);
/* One entry of that map from the environment or --set: the executable
 * `key` names set to `value`, or one field of a series (the entry's other
 * fields kept; a new series needs its constraint first, fail-closed); the
 * other entries kept. */
sluice_err cfg_set_entry(ctx_t *c, const field_t *f, const char *key, const char *value);
void cfg_execs_free(sluice_executable_t *e, size_t n);
void cfg_series_free(sluice_gpu_series_t *s, size_t n);

/* Required fields (unless no_required; as c->role says) and cross-field
 * rules. */
sluice_err cfg_finalize(ctx_t *c, bool no_required);

#endif /* SLUICE_SITE_CONFIG_INT_H */
