/* SPDX-License-Identifier: Apache-2.0 */
/* render.c - launch + site (+ study) -> batch script + one job description
 * per pool.
 *
 * The script is built from fixed text plus values, and every value goes
 * through shquote_append(): nothing a caller sends can become shell syntax.
 * Trusted text is limited to the site's and the study's `setup` lines.
 *
 * Notes:
 * - Everything is checked before any output exists (fail-closed series,
 *   mounts, image, names); on error no render is returned.
 * - Multi-node pools with an additional_node_command run a fixed rank
 *   wrapper (`bash -c "$SLUICE_RANK_SH" sluice-rank ...`) whose only
 *   inputs are quoted argument words; it picks rank 0's command or the
 *   other ranks' command from SLURM_NODEID.  Under apptainer it runs
 *   outside the container (so it still sees SLURM_*), under enroot-pyxis
 *   inside it (srun enters the container first), which needs bash in the
 *   image.
 * - Under apptainer (--cleanenv) every exported workload variable is also
 *   exported as APPTAINERENV_<NAME>, which apptainer injects as <NAME>.
 * - srun and apptainer come from job_launcher.executables when set (quoted
 *   like any value), else from the job's PATH; render_job_path() is the one
 *   PATH of the script and of the REST environment (render_int.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sluice/render.h>

#include "base/buf.h"
#include "base/marker.h"
#include "launch.h"
#include "render_int.h"
#include "base/shquote.h"

#define SCRIPT_MAX (4u * 1024u * 1024u)

typedef struct {
    char *src; /* cluster-side */
    char *dst;
    bool rw;
} mount_t;

typedef struct {
    const char *name;
    const char *value; /* borrowed */
} var_t;

typedef struct {
    const sluice_config_t *cfg;
    const sluice_study_t *study;
    const sluice_launch_spec_t *s;
    const sluice_launch_t *l;
    const sluice_render_ctx_t *ctx;
    sluice_launch_profile profile;
    char *image; /* cluster-side, or NULL for profile none */
    mount_t *mounts;
    size_t n_mounts;
    char *workdir;      /* where the workload starts (container or host path) */
    char *host_workdir; /* the job's working directory on the host */
    char *job_path;     /* PATH of the script and of the REST environment */
    var_t *vars;
    size_t n_vars;
    sluice_error_t *err;
} rctx_t;

/* ---- small helpers ------------------------------------------------------- */

void sluice_render_sha8(const char *launch_id, char hex[9])
{
    marker_sha8(launch_id, hex);
}

char *sluice_render_job_name(const char *prefix,
                             const char *site,
                             const char *launch_id,
                             unsigned attempt)
{
    return marker_job_name_dup(prefix, site, launch_id, attempt);
}

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Length of `root` without trailing slashes ("/" counts as 0). */
static size_t root_len(const char *root)
{
    size_t n = strlen(root);

    while (n > 0 && root[n - 1] == '/')
        n--;
    return n;
}

/* True when `path` is `root` or below it. */
static bool under(const char *root, const char *path)
{
    size_t n;

    if (!root || !root[0])
        return false;
    n = root_len(root);
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* `path` with the prefix `from` replaced by `to` (path is under `from`). */
static char *reroot(const char *from, const char *to, const char *path)
{
    buf_t b = BUF_INIT;
    const char *rest = path + root_len(from);

    buf_init(&b, 0);
    if (buf_append(&b, to, root_len(to)) != SLUICE_OK || buf_puts(&b, rest) != SLUICE_OK ||
        (b.len == 0 && buf_puts(&b, "/") != SLUICE_OK)) {
        buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}

static const char *cluster_root(const sluice_config_t *cfg)
{
    return cfg->storage.cluster_root && cfg->storage.cluster_root[0] ? cfg->storage.cluster_root
                                                                     : cfg->storage.root;
}

/* Service-side path -> cluster-side path (unchanged outside the root). */
static char *to_cluster(const sluice_config_t *cfg, const char *path)
{
    if (under(cfg->storage.root, path))
        return reroot(cfg->storage.root, cluster_root(cfg), path);
    return strdup(path);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Split a shell-free command line on blanks into a new argv. */
static char **split_words(const char *line, size_t *n_out)
{
    char **v = NULL;
    size_t n = 0;
    const char *p = line;

    while (*p) {
        const char *start;
        char **nv;

        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        nv = realloc(v, (n + 2) * sizeof(*v));
        if (!nv)
            goto fail;
        v = nv;
        if ((v[n] = strndup(start, (size_t)(p - start))) == NULL)
            goto fail;
        v[++n] = NULL;
    }
    *n_out = n;
    if (!v)
        v = calloc(1, sizeof(*v));
    return v;
fail:
    while (n > 0)
        free(v[--n]);
    free(v);
    return NULL;
}

static void free_words(char **v, size_t n)
{
    size_t i;

    for (i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- commands and PATH of the job (render_int.h) ------------------------- */

const char *render_srun(const sluice_config_t *cfg)
{
    return sluice_config_executable(cfg, "srun");
}

const char *render_apptainer(const sluice_config_t *cfg)
{
    const char *p = sluice_config_executable(cfg, "apptainer");

    if (!p)
        p = sluice_config_executable(cfg, "singularity");
    return p ? p : "apptainer";
}

char *render_job_path(const sluice_config_t *cfg)
{
    const char *srun = render_srun(cfg);
    const char *p = RENDER_DEFAULT_PATH;
    buf_t b = BUF_INIT;
    size_t dir_len;

    if (cfg->launcher.job_path)
        return strdup(cfg->launcher.job_path);
    if (!srun)
        return strdup(RENDER_DEFAULT_PATH);
    /* Config checked it: absolute, normalised, no ':'. */
    dir_len = (size_t)(strrchr(srun, '/') - srun);
    if (dir_len == 0)
        dir_len = 1;
    while (*p) {
        size_t len = strcspn(p, ":");
        if (len == dir_len && strncmp(p, srun, len) == 0)
            return strdup(RENDER_DEFAULT_PATH);
        p += len + (p[len] == ':');
    }
    buf_init(&b, 0);
    if (buf_printf(&b, "%.*s:%s", (int)dir_len, srun, RENDER_DEFAULT_PATH) != SLUICE_OK) {
        buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}

/* "TRAINER" from "trainer", "-" -> "_". */
static void pool_var(const char *pool, char *out, size_t outsz)
{
    size_t i;

    for (i = 0; pool[i] && i + 1 < outsz; i++)
        out[i] = pool[i] == '-' ? '_' : (char)toupper((unsigned char)pool[i]);
    out[i] = '\0';
}

/* ---- checks and resolution ----------------------------------------------- */

static sluice_err resolve_image(rctx_t *c)
{
    const char *img = c->s->image;
    const char *svc;
    char *tmp = NULL;
    int st;

    if (c->profile == SLUICE_LAUNCH_PROFILE_NONE) {
        if (img)
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "image: profile none runs commands directly and takes no image");
        return SLUICE_OK;
    }
    if (!img && c->study && c->study->image)
        img = c->study->image;
    if (!img)
        img = c->cfg->launcher.image;
    if (!img)
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: profile %s needs an image (none in the request, the study "
                             "or the site)",
                             sluice_launch_profile_name(c->profile));
    if (img[0] != '/' || strstr(img, "://") != NULL)
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: expected an absolute path to a .sqsh or .sif file; registry "
                             "references are refused");
    if (strstr(img, "/../") || has_suffix(img, "/..") || strpbrk(img, ":,\n"))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: expected a normalised path without '..', ':' or ','");
    if (!has_suffix(img, ".sqsh") && !has_suffix(img, ".sif"))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: expected a .sqsh or .sif file (profile %s)",
                             sluice_launch_profile_name(c->profile));
    /* Check where the service can see it. */
    svc = img;
    if (!under(c->cfg->storage.root, img) && under(cluster_root(c->cfg), img)) {
        if ((tmp = reroot(cluster_root(c->cfg), c->cfg->storage.root, img)) == NULL)
            return sluice_errorf(c->err, SLUICE_ENOMEM, "image: out of memory");
        svc = tmp;
    }
    if (c->ctx->stat_fn) {
        st = c->ctx->stat_fn(svc, c->ctx->stat_arg);
    } else {
        struct stat sb;
        st = (stat(svc, &sb) == 0 && S_ISREG(sb.st_mode)) ? 0 : -1;
    }
    free(tmp);
    if (st != 0)
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: %s does not exist or is not a regular file", img);
    if ((c->image = to_cluster(c->cfg, img)) == NULL)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "image: out of memory");
    return SLUICE_OK;
}

static bool forbidden_target(const char *t)
{
    static const char *const bad[] = {"/proc", "/sys", "/dev", NULL};
    size_t i;

    if (strcmp(t, "/") == 0)
        return true;
    for (i = 0; bad[i]; i++)
        if (under(bad[i], t))
            return true;
    return false;
}

static bool normalised(const char *p)
{
    return p[0] == '/' && !strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../") &&
           !has_suffix(p, "/..") && !has_suffix(p, "/.") && (strlen(p) == 1 || !has_suffix(p, "/"));
}

static sluice_err add_mount(rctx_t *c, const char *what, const char *src, const char *dst, bool rw)
{
    size_t i;
    mount_t *nm;
    char *csrc = NULL;

    if (!normalised(src) || !normalised(dst))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: expected absolute normalised paths (no '.', '..' or '//')", what);
    if (strpbrk(src, ":,") || strpbrk(dst, ":,"))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: paths may not contain ':' or ',' (they separate mount lists)",
                             what);
    for (i = 0; src[i]; i++)
        if ((unsigned char)src[i] < 0x20 || src[i] == 0x7f)
            return sluice_errorf(c->err, SLUICE_EINVAL, "%s: control byte in path", what);
    for (i = 0; dst[i]; i++)
        if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
            return sluice_errorf(c->err, SLUICE_EINVAL, "%s: control byte in path", what);
    if (forbidden_target(dst))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: target %s is not allowed (/, /proc, /sys, /dev)", what, dst);
    if ((csrc = to_cluster(c->cfg, src)) == NULL)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    for (i = 0; i < c->n_mounts; i++) {
        if (under(c->mounts[i].src, csrc) || under(csrc, c->mounts[i].src)) {
            free(csrc);
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "%s: source %s overlaps the source %s of another mount", what, src,
                                 c->mounts[i].src);
        }
        /* A repeated target (a request mount onto a study dataset's
         * /data/<study>/<dataset>) would let the later bind hide the other. */
        if (strcmp(c->mounts[i].dst, dst) == 0) {
            free(csrc);
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "%s: target %s is already used by another mount", what, dst);
        }
    }
    nm = realloc(c->mounts, (c->n_mounts + 1) * sizeof(*nm));
    if (!nm) {
        free(csrc);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    }
    c->mounts = nm;
    nm[c->n_mounts].src = csrc;
    nm[c->n_mounts].dst = strdup(dst);
    nm[c->n_mounts].rw = rw;
    if (!nm[c->n_mounts].src || !nm[c->n_mounts].dst) {
        free(nm[c->n_mounts].src);
        free(nm[c->n_mounts].dst);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    }
    c->n_mounts++;
    return SLUICE_OK;
}

static sluice_err resolve_mounts(rctx_t *c)
{
    sluice_err rc;
    size_t i, n_ds = c->study ? c->study->n_datasets : 0;
    char what[96];

    if (c->profile == SLUICE_LAUNCH_PROFILE_NONE && (c->s->n_mounts > 0 || n_ds > 0))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: profile none has no mount namespace; mounts and datasets need "
                             "apptainer or enroot-pyxis",
                             c->s->n_mounts > 0 ? "mounts" : "study.datasets");
    for (i = 0; i < c->s->n_mounts; i++) {
        snprintf(what, sizeof(what), "mounts[%zu]", i);
        if ((rc = add_mount(c, what, c->s->mounts[i].source, c->s->mounts[i].target,
                            c->s->mounts[i].rw)) != SLUICE_OK)
            return rc;
    }
    for (i = 0; i < n_ds; i++) {
        const sluice_dataset_t *d = &c->study->datasets[i];
        snprintf(what, sizeof(what), "study.datasets.%.64s", d->name);
        if ((rc = add_mount(c, what, d->source, d->target, !d->read_only)) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static sluice_err add_var(rctx_t *c, const char *what, const char *name, const char *value)
{
    const char *why = launch_envname_check(name);
    var_t *nv;

    if (why)
        return sluice_errorf(c->err, SLUICE_EINVAL, "%s: \"%s\" %s", what, name, why);
    nv = realloc(c->vars, (c->n_vars + 1) * sizeof(*nv));
    if (!nv)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    c->vars = nv;
    nv[c->n_vars].name = name;
    nv[c->n_vars].value = value;
    c->n_vars++;
    return SLUICE_OK;
}

static sluice_err resolve_env(rctx_t *c)
{
    const sluice_strlist_t *fw = &c->cfg->launcher.forward_env;
    sluice_err rc;
    size_t i;

    for (i = 0; i < fw->n; i++) {
        const char *v =
            c->ctx->getenv_fn ? c->ctx->getenv_fn(fw->items[i], c->ctx->getenv_arg) : NULL;
        const char *why = launch_envname_check(fw->items[i]);
        if (why)
            return sluice_errorf(c->err, SLUICE_ECONFIG, "job_launcher.forward_env: \"%s\" %s",
                                 fw->items[i], why);
        if (v && (rc = add_var(c, "job_launcher.forward_env", fw->items[i], v)) != SLUICE_OK)
            return rc;
    }
    for (i = 0; c->study && i < c->study->n_env; i++)
        if ((rc = add_var(c, "study.env", c->study->env_names[i], c->study->env_values[i])) !=
            SLUICE_OK)
            return rc;
    for (i = 0; i < c->s->n_env; i++)
        if ((rc = add_var(c, "env", c->s->env[i].name, c->s->env[i].value)) != SLUICE_OK)
            return rc;
    return SLUICE_OK;
}

/* Secret names: the request's secrets, its secret_env, the study's. */
static sluice_err collect_secret_names(rctx_t *c, sluice_render_t *r)
{
    size_t n = sluice_launch_secret_count(c->l) + c->s->n_secret_env +
               (c->study ? c->study->n_secret_env : 0);
    size_t i, j, k = 0;

    r->secret_names = calloc(n + 1, sizeof(char *));
    if (!r->secret_names)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "secrets: out of memory");
    for (i = 0; i < sluice_launch_secret_count(c->l); i++)
        r->secret_names[k++] = xstrdup(sluice_launch_secret_name(c->l, i));
    for (i = 0; i < c->s->n_secret_env; i++)
        r->secret_names[k++] = xstrdup(c->s->secret_env[i]);
    for (i = 0; c->study && i < c->study->n_secret_env; i++)
        r->secret_names[k++] = xstrdup(c->study->secret_env[i].name);
    r->n_secret_names = k;
    for (i = 0; i < k; i++) {
        const char *why;
        if (!r->secret_names[i])
            return sluice_errorf(c->err, SLUICE_ENOMEM, "secrets: out of memory");
        if ((why = launch_envname_check(r->secret_names[i])) != NULL)
            return sluice_errorf(c->err, SLUICE_EINVAL, "secrets: \"%s\" %s", r->secret_names[i],
                                 why);
        for (j = 0; j < i; j++)
            if (strcmp(r->secret_names[i], r->secret_names[j]) == 0)
                return sluice_errorf(c->err, SLUICE_EINVAL, "secrets: \"%s\" is given twice",
                                     r->secret_names[i]);
        for (j = 0; j < c->n_vars; j++)
            if (strcmp(r->secret_names[i], c->vars[j].name) == 0)
                return sluice_errorf(c->err, SLUICE_EINVAL,
                                     "secrets: \"%s\" collides with an environment variable of "
                                     "the same name",
                                     r->secret_names[i]);
    }
    return SLUICE_OK;
}

/* Site constraint AND series constraint; each side in parentheses when it
 * holds an OR, so that '&' cannot bind into it. */
static char *join_constraint(const char *site, const char *series)
{
    buf_t b = BUF_INIT;
    bool ok = true;

    buf_init(&b, 0);
    if (site && site[0] && series && series[0]) {
        bool ps = strchr(site, '|') != NULL, pc = strchr(series, '|') != NULL;
        ok = buf_printf(&b, "%s%s%s&%s%s%s", ps ? "(" : "", site, ps ? ")" : "", pc ? "(" : "",
                        series, pc ? ")" : "") == SLUICE_OK;
    } else if (site && site[0]) {
        ok = buf_puts(&b, site) == SLUICE_OK;
    } else if (series && series[0]) {
        ok = buf_puts(&b, series) == SLUICE_OK;
    } else {
        return NULL;
    }
    if (!ok) {
        buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}

/* ---- the script ---------------------------------------------------------- */

/* The rank wrapper: fixed text, no value inside.  Arguments: the count and
 * words of a prefix (the container launcher, may be 0), the count and
 * words of rank 0's command, then the other ranks' command. */
static const char rank_wrapper[] =
    "set -eu\n"
    "np=$1; shift; pre=(\"${@:1:$np}\"); shift \"$np\"\n"
    "nc=$1; shift; cmd=(\"${@:1:$nc}\"); shift \"$nc\"\n"
    "r=${SLURM_NODEID:-0}\n"
    "export SLUICE_NODE_RANK=\"$r\" NVFL_NODE_RANK=\"$r\"\n"
    "export APPTAINERENV_SLUICE_NODE_RANK=\"$r\" APPTAINERENV_NVFL_NODE_RANK=\"$r\"\n"
    "if [ \"$r\" = 0 ] || [ \"$#\" -eq 0 ]; then exec ${pre[@]+\"${pre[@]}\"} \"${cmd[@]}\"; fi\n"
    "exec ${pre[@]+\"${pre[@]}\"} \"$@\"\n";

static const char script_functions[] =
    "sluice_die() {\n"
    "    local code=$1\n"
    "    shift\n"
    "    printf 'sluice: %s\\n' \"$*\" >&2\n"
    "    exit \"$code\"\n"
    "}\n"
    "sluice_export() {\n"
    "    export \"$1=$2\"\n"
    "    if [ \"$SLUICE_PROFILE\" = apptainer ]; then export \"APPTAINERENV_$1=$2\"; fi\n"
    "}\n";

static const char host_function[] =
    "# First host of a Slurm hostlist: scontrol when present, else pure bash\n"
    "# (\"node[03-05,9]\" -> \"node03\").\n"
    "sluice_first_host() {\n"
    "    local l=$1 pre rest inner hs\n"
    "    if [ -z \"$l\" ]; then return 0; fi\n"
    "    if command -v scontrol >/dev/null 2>&1 && hs=$(scontrol show hostnames \"$l\" "
    "2>/dev/null); then\n"
    "        printf '%s\\n' \"${hs%%$'\\n'*}\"\n"
    "        return 0\n"
    "    fi\n"
    "    pre=${l%%[[,]*}\n"
    "    rest=${l:${#pre}}\n"
    "    if [ \"${rest:0:1}\" != \"[\" ]; then\n"
    "        printf '%s\\n' \"$pre\"\n"
    "        return 0\n"
    "    fi\n"
    "    inner=${rest:1}\n"
    "    inner=${inner%%]*}\n"
    "    inner=${inner%%,*}\n"
    "    inner=${inner%%-*}\n"
    "    printf '%s%s\\n' \"$pre\" \"$inner\"\n"
    "}\n";

static const char step_function[] =
    "# Run one pool's step; record its exit status in exit/<pool>.  TERM is\n"
    "# passed on to srun, which stops the step's tasks.\n"
    "sluice_step() {\n"
    "    local pool=$1 rc=0 child\n"
    "    shift\n"
    "    \"$@\" &\n"
    "    child=$!\n"
    "    trap 'kill -TERM \"$child\" 2>/dev/null || true' TERM\n"
    "    wait \"$child\" || rc=$?\n"
    "    while kill -0 \"$child\" 2>/dev/null; do\n"
    "        rc=0\n"
    "        wait \"$child\" || rc=$?\n"
    "    done\n"
    "    printf '%s\\n' \"$rc\" >\"$SLUICE_STAGING/exit/$pool\"\n"
    "    return \"$rc\"\n"
    "}\n";

/* exit/.first ("<pool> <code>") is sluice's record of the pool that failed
 * first on its own.  It is written only while the script itself has not
 * been signalled: after an outside cancel every pool reads 143 or 137, and
 * none of them failed.  exit/.signalled (empty) is the TERM/INT trap's own
 * record: the script was signalled, so a pool that exits 1 on its way out
 * (a workload that handles SIGTERM) did not fail on its own. */
static const char wait_block[] =
    "SLUICE_FIRST_RC=0\n"
    "SLUICE_FIRST_POOL=\n"
    "sluice_stopped=0\n"
    "sluice_signalled=0\n"
    "sluice_record_first() {\n"
    "    SLUICE_FIRST_POOL=$1\n"
    "    SLUICE_FIRST_RC=$2\n"
    "    if [ \"$sluice_signalled\" = 0 ]; then\n"
    "        printf '%s %s\\n' \"$1\" \"$2\" >\"$SLUICE_STAGING/exit/.first\"\n"
    "    fi\n"
    "}\n"
    "sluice_scan() {\n"
    "    local p rc\n"
    "    for p in \"${SLUICE_POOLS[@]}\"; do\n"
    "        if [ -z \"$SLUICE_FIRST_POOL\" ] && [ -s \"$SLUICE_STAGING/exit/$p\" ]; then\n"
    "            rc=$(<\"$SLUICE_STAGING/exit/$p\")\n"
    "            if [ \"$rc\" != 0 ]; then sluice_record_first \"$p\" \"$rc\"; fi\n"
    "        fi\n"
    "    done\n"
    "}\n"
    "sluice_alive() {\n"
    "    local pid\n"
    "    for pid in \"${SLUICE_PIDS[@]}\"; do\n"
    "        if kill -0 \"$pid\" 2>/dev/null; then return 0; fi\n"
    "    done\n"
    "    return 1\n"
    "}\n"
    "trap 'sluice_signalled=1; { : >\"$SLUICE_STAGING/exit/.signalled\"; } 2>/dev/null || true; "
    "kill -TERM \"${SLUICE_PIDS[@]}\" 2>/dev/null || true' TERM INT\n"
    "while sluice_alive; do\n"
    "    wait -n 2>/dev/null || true\n"
    "    sluice_scan\n"
    "    if [ -n \"$SLUICE_FIRST_POOL\" ] && [ \"$SLUICE_STOP_ON_FAILURE\" = 1 ] &&\n"
    "        [ \"$sluice_stopped\" = 0 ]; then\n"
    "        sluice_stopped=1\n"
    "        printf 'sluice: pool %s failed (exit %s); stopping the other pools\\n' \\\n"
    "            \"$SLUICE_FIRST_POOL\" \"$SLUICE_FIRST_RC\" >&2\n"
    "        kill -TERM \"${SLUICE_PIDS[@]}\" 2>/dev/null || true\n"
    "    fi\n"
    "done\n"
    "wait || true\n"
    "sluice_scan\n"
    "for sluice_p in \"${SLUICE_POOLS[@]}\"; do\n"
    "    if [ -z \"$SLUICE_FIRST_POOL\" ] && [ ! -s \"$SLUICE_STAGING/exit/$sluice_p\" ]; then\n"
    "        printf '1\\n' >\"$SLUICE_STAGING/exit/$sluice_p\"\n"
    "        sluice_record_first \"$sluice_p\" 1\n"
    "    fi\n"
    "done\n"
    "if [ \"$SLUICE_FIRST_RC\" != 0 ]; then\n"
    "    printf 'sluice: pool %s failed with exit code %s\\n' \"$SLUICE_FIRST_POOL\" "
    "\"$SLUICE_FIRST_RC\" >&2\n"
    "    exit \"$SLUICE_FIRST_RC\"\n"
    "fi\n"
    "exit 0\n";

#define P(s)                                                                                       \
    do {                                                                                           \
        if ((rc = buf_puts(b, (s))) != SLUICE_OK)                                                  \
            goto out;                                                                              \
    } while (0)
#define PF(...)                                                                                    \
    do {                                                                                           \
        if ((rc = buf_printf(b, __VA_ARGS__)) != SLUICE_OK)                                        \
            goto out;                                                                              \
    } while (0)
#define Q(s)                                                                                       \
    do {                                                                                           \
        if ((rc = shquote_append(b, (s))) != SLUICE_OK)                                            \
            goto out;                                                                              \
    } while (0)

/* `sluice_export NAME 'value'` */
static sluice_err emit_export(buf_t *b, const char *indent, const char *name, const char *value)
{
    sluice_err rc;

    PF("%ssluice_export %s ", indent, name);
    Q(value);
    P("\n");
out:
    return rc;
}

/* ` 'word'` for each word. */
static sluice_err emit_words(buf_t *b, char *const *w, size_t n)
{
    sluice_err rc = SLUICE_OK;
    size_t i;

    for (i = 0; i < n; i++) {
        P(" ");
        Q(w[i]);
    }
out:
    return rc;
}

/* Container launcher words for apptainer. */
static sluice_err apptainer_words(
    rctx_t *c, const sluice_launch_pool_t *p, const char *staging, char ***out, size_t *n_out)
{
    char **w = calloc(16 + 2 * c->n_mounts, sizeof(char *));
    size_t n = 0, i;
    buf_t m = BUF_INIT;

    if (!w)
        return SLUICE_ENOMEM;
    buf_init(&m, 0);
    w[n++] = strdup(render_apptainer(c->cfg));
    w[n++] = strdup("exec");
    w[n++] = strdup("--containall");
    w[n++] = strdup("--cleanenv");
    w[n++] = strdup("--no-home");
    w[n++] = strdup("--pwd");
    w[n++] = strdup(c->workdir);
    w[n++] = strdup("--bind");
    if (buf_printf(&m, "%s:%s", staging, staging) != SLUICE_OK)
        goto fail;
    w[n++] = buf_take(&m);
    for (i = 0; i < c->n_mounts; i++) {
        w[n++] = strdup("--bind");
        if (buf_printf(&m, "%s:%s:%s", c->mounts[i].src, c->mounts[i].dst,
                       c->mounts[i].rw ? "rw" : "ro") != SLUICE_OK)
            goto fail;
        w[n++] = buf_take(&m);
    }
    if (p->gpus_per_node > 0)
        w[n++] = strdup("--nv");
    w[n++] = strdup(c->image);
    for (i = 0; i < n; i++)
        if (!w[i])
            goto fail;
    *out = w;
    *n_out = n;
    return SLUICE_OK;
fail:
    buf_free(&m);
    free_words(w, n);
    return SLUICE_ENOMEM;
}

static sluice_err emit_pyxis_opts(rctx_t *c, buf_t *b, const char *staging)
{
    sluice_err rc;
    buf_t m = BUF_INIT;
    size_t i;

    buf_init(&m, 0);
    if ((rc = buf_printf(&m, "--container-image=%s", c->image)) != SLUICE_OK)
        goto out;
    P(" \\\n        ");
    Q(buf_str(&m));
    buf_reset(&m);
    if ((rc = buf_printf(&m, "--container-mounts=%s:%s", staging, staging)) != SLUICE_OK)
        goto out;
    for (i = 0; i < c->n_mounts; i++)
        if ((rc = buf_printf(&m, ",%s:%s%s", c->mounts[i].src, c->mounts[i].dst,
                             c->mounts[i].rw ? "" : ":ro")) != SLUICE_OK)
            goto out;
    P(" \\\n        ");
    Q(buf_str(&m));
    buf_reset(&m);
    if ((rc = buf_printf(&m, "--container-workdir=%s", c->workdir)) != SLUICE_OK)
        goto out;
    P(" \\\n        ");
    Q(buf_str(&m));
    P(" \\\n        --no-container-entrypoint --no-container-mount-home --container-readonly");
out:
    buf_free(&m);
    return rc;
}

static sluice_err emit_pool(rctx_t *c, buf_t *b, const sluice_render_t *r, size_t k)
{
    const sluice_launch_pool_t *p = &c->s->pools[k];
    sluice_err rc = SLUICE_OK;
    char var[64];
    char num[32];
    char **pre = NULL, **add = NULL;
    size_t n_pre = 0, n_add = 0;
    bool multi = p->nodes > 1;
    bool wrapper = multi && p->additional_node_command != NULL;
    uint32_t step_nodes = (multi && !wrapper) ? 1 : p->nodes;

    pool_var(p->name, var, sizeof(var));
    PF("\n# pool %s: component %zu, %u node(s), one task per node\n(\n", p->name, k, p->nodes);
    if ((rc = emit_export(b, "    ", "SLUICE_POOL", p->name)) != SLUICE_OK)
        goto out;
    snprintf(num, sizeof(num), "%u", p->nodes);
    if ((rc = emit_export(b, "    ", "SLUICE_NNODES", num)) != SLUICE_OK ||
        (rc = emit_export(b, "    ", "NVFL_NNODES", num)) != SLUICE_OK)
        goto out;
    PF("    sluice_export SLUICE_MASTER_ADDR \"$SLUICE_POOL_%s_HOST\"\n", var);
    PF("    sluice_export NVFL_MASTER_ADDR \"$SLUICE_POOL_%s_HOST\"\n", var);
    snprintf(num, sizeof(num), "%u", r->master_port);
    if ((rc = emit_export(b, "    ", "SLUICE_MASTER_PORT", num)) != SLUICE_OK ||
        (rc = emit_export(b, "    ", "NVFL_MASTER_PORT", num)) != SLUICE_OK)
        goto out;
    if (!wrapper) {
        if ((rc = emit_export(b, "    ", "SLUICE_NODE_RANK", "0")) != SLUICE_OK ||
            (rc = emit_export(b, "    ", "NVFL_NODE_RANK", "0")) != SLUICE_OK)
            goto out;
    }
    PF("    sluice_step %s ", p->name);
    if (render_srun(c->cfg))
        Q(render_srun(c->cfg));
    else
        P("srun");
    if (c->s->n_pools > 1)
        PF(" --het-group=%zu", k);
    PF(" --nodes=%u --ntasks=%u --ntasks-per-node=1", step_nodes, step_nodes);
    if (p->cpus_per_node > 0)
        PF(" --cpus-per-task=%u", p->cpus_per_node);
    if (step_nodes > 1)
        P(" --kill-on-bad-exit=1");
    if (c->profile == SLUICE_LAUNCH_PROFILE_NONE) {
        P(" \\\n        ");
        Q("--chdir");
        P(" ");
        Q(c->workdir);
    } else if (c->profile == SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS) {
        if ((rc = emit_pyxis_opts(c, b, r->staging_cluster)) != SLUICE_OK)
            goto out;
    } else if ((rc = apptainer_words(c, p, r->staging_cluster, &pre, &n_pre)) != SLUICE_OK) {
        goto out;
    }
    P(" \\\n       ");
    if (wrapper) {
        if ((add = split_words(p->additional_node_command, &n_add)) == NULL) {
            rc = SLUICE_ENOMEM;
            goto out;
        }
        PF(" bash -c \"$SLUICE_RANK_SH\" sluice-rank '%zu'", n_pre);
        if ((rc = emit_words(b, pre, n_pre)) != SLUICE_OK)
            goto out;
        PF(" \\\n        '%zu' ", p->n_args + 1);
        Q(p->command);
        if ((rc = emit_words(b, p->args, p->n_args)) != SLUICE_OK)
            goto out;
        P(" \\\n       ");
        if ((rc = emit_words(b, add, n_add)) != SLUICE_OK)
            goto out;
    } else {
        if ((rc = emit_words(b, pre, n_pre)) != SLUICE_OK)
            goto out;
        if (n_pre > 0)
            P(" \\\n       ");
        P(" ");
        Q(p->command);
        if ((rc = emit_words(b, p->args, p->n_args)) != SLUICE_OK)
            goto out;
    }
    P("\n) &\nSLUICE_PIDS+=(\"$!\")\n");
out:
    free_words(pre, n_pre);
    free_words(add, n_add);
    return rc;
}

static sluice_err emit_script(rctx_t *c, sluice_render_t *r, char **out)
{
    buf_t bb = BUF_INIT, *b = &bb;
    sluice_err rc = SLUICE_OK;
    const sluice_launch_spec_t *s = c->s;
    char num[32];
    size_t i, k;
    uint32_t wait_s = c->ctx->peers_wait_s ? c->ctx->peers_wait_s : SLUICE_RENDER_PEERS_WAIT_S;
    bool any_wrapper = false;
    const sluice_strlist_t *setup_site = &c->cfg->launcher.setup;
    const sluice_strlist_t *setup_study =
        (c->study && c->study->has_setup) ? &c->study->setup : NULL;

    buf_init(b, SCRIPT_MAX);
    P("#!/bin/bash\n");
    PF("# Batch script of sluice launch %s, attempt %u (rendered once; do not edit).\n",
       r->launch_id, r->attempt);
    P("# Steps: requeue guard, identity, peers, environment, secrets, setup,\n"
      "# component hosts, one srun step per pool, exit status per pool.\n"
      "# See docs/rendering.md.\n");
    P("set -euo pipefail\nset +x\numask 077\n");
    P("export PATH=");
    Q(c->job_path);
    P(" LANG=");
    Q(RENDER_LANG);
    P("\n");
    P("SLUICE_STAGING=");
    Q(r->staging_cluster);
    P("\nSLUICE_PROFILE=");
    Q(sluice_launch_profile_name(c->profile));
    PF("\nSLUICE_STOP_ON_FAILURE=%d\n", c->ctx->keep_going ? 0 : 1);
    P("export HOME=\"$SLUICE_STAGING\"\n");
    P(script_functions);

    if (!s->requeue) {
        P("\n# 1. Requeue is off for this launch: a requeued job must not run twice.\n");
        P("if [ \"${SLURM_RESTART_COUNT:-0}\" != 0 ]; then\n");
        PF("    sluice_die %d \"job was requeued (SLURM_RESTART_COUNT=$SLURM_RESTART_COUNT) but "
           "requeue is off for this launch; refusing to run twice\"\n",
           SLUICE_RENDER_EXIT_REQUEUED);
        P("fi\n");
    } else {
        P("\n# 1. Requeue is on for this launch: a run starts with none of the exit\n"
          "# files (exit/<pool>, .first, .signalled) of the run before it.\n");
        P("rm -rf -- \"$SLUICE_STAGING/exit\"\n");
    }

    P("\n# 2. Identity of the launch.\n");
    if ((rc = emit_export(b, "", "SLUICE_LAUNCH_ID", r->launch_id)) != SLUICE_OK)
        goto out;
    snprintf(num, sizeof(num), "%u", r->attempt);
    if ((rc = emit_export(b, "", "SLUICE_ATTEMPT", num)) != SLUICE_OK ||
        (rc = emit_export(b, "", "SLUICE_RUN_ID", r->run_id)) != SLUICE_OK ||
        (rc = emit_export(b, "", "NVFL_RUN_ID", r->run_id)) != SLUICE_OK)
        goto out;
    P("sluice_export SLUICE_STAGING \"$SLUICE_STAGING\"\n");

    if (s->depends_on && s->depends_condition == SLUICE_LAUNCH_DEP_AFTER) {
        P("\n# 3. This launch starts after launch ");
        Q(s->depends_on);
        PF(": wait (at most %u s) for the\n# peers.env that sluice writes when that launch "
           "runs, then load it.\n",
           wait_s);
        PF("sluice_deadline=$((SECONDS + %u))\n", wait_s);
        P("while [ ! -f \"$SLUICE_STAGING/peers.env\" ]; do\n");
        P("    if [ \"$SECONDS\" -ge \"$sluice_deadline\" ]; then\n");
        PF("        sluice_die %d \"peers.env did not appear in $SLUICE_STAGING within %u s\"\n",
           SLUICE_RENDER_EXIT_PEERS, wait_s);
        P("    fi\n    sleep 2\ndone\n");
        P(". \"$SLUICE_STAGING/peers.env\"\n");
        P("for sluice_n in ${!SLUICE_PEER_@}; do sluice_export \"$sluice_n\" \"${!sluice_n}\"; "
          "done\n");
    }

    if (c->n_vars > 0) {
        P("\n# 4. Environment: the site's forward_env (captured at render time), the\n"
          "# study's env, the request's env.  Nothing else of the service leaks in.\n");
        for (i = 0; i < c->n_vars; i++)
            if ((rc = emit_export(b, "", c->vars[i].name, c->vars[i].value)) != SLUICE_OK)
                goto out;
    }

    if (r->n_secret_names > 0) {
        P("\n# 5. Secrets: written by sluice at submit time (0600); loaded with tracing\n"
          "# off and deleted before anything else runs.\n");
        P("if [ ! -f \"$SLUICE_STAGING/secrets.env\" ]; then\n");
        PF("    sluice_die %d \"secrets.env is missing in $SLUICE_STAGING (secrets "
           "unavailable)\"\n",
           SLUICE_RENDER_EXIT_SECRETS);
        P("fi\n");
        P("{ sluice_xtrace=${-//[^x]/}; set +x; } 2>/dev/null\n");
        P(". \"$SLUICE_STAGING/secrets.env\"\n");
        P("rm -f -- \"$SLUICE_STAGING/secrets.env\"\n");
        P("for sluice_n in");
        if ((rc = emit_words(b, r->secret_names, r->n_secret_names)) != SLUICE_OK)
            goto out;
        P("; do\n    sluice_export \"$sluice_n\" \"${!sluice_n}\"\ndone\n");
        P("if [ -n \"$sluice_xtrace\" ]; then set -x; fi\n");
    }

    if (setup_site->n > 0 || (setup_study && setup_study->n > 0)) {
        P("\n# 6. Setup lines of the site and the study (trusted shell).\nset +u\n");
        for (i = 0; i < setup_site->n; i++)
            PF("%s\n", setup_site->items[i]);
        for (i = 0; setup_study && i < setup_study->n; i++)
            PF("%s\n", setup_study->items[i]);
        P("set -u\n");
    }

    P("\n# 7. First host of every component.\n");
    P(host_function);
    for (k = 0; k < s->n_pools; k++) {
        char var[64];
        pool_var(s->pools[k].name, var, sizeof(var));
        if (s->n_pools > 1)
            PF("SLUICE_POOL_%s_HOST=$(sluice_first_host "
               "\"${SLURM_JOB_NODELIST_HET_GROUP_%zu:-}\")\n",
               var, k);
        else
            PF("SLUICE_POOL_%s_HOST=$(sluice_first_host \"${SLURM_JOB_NODELIST:-}\")\n", var);
        PF("if [ -z \"$SLUICE_POOL_%s_HOST\" ]; then\n", var);
        PF("    sluice_die %d \"no host known for pool %s\"\nfi\n", SLUICE_RENDER_EXIT_HOSTS,
           s->pools[k].name);
        PF("sluice_export SLUICE_POOL_%s_HOST \"$SLUICE_POOL_%s_HOST\"\n", var, var);
        if (s->pools[k].nodes > 1 && s->pools[k].additional_node_command)
            any_wrapper = true;
    }

    P("\n# 8. One step per pool; each records its exit status in exit/<pool>.\n");
    P("mkdir -p -- \"$SLUICE_STAGING/exit\"\n");
    P(step_function);
    if (any_wrapper) {
        P("# Rank wrapper of multi-node pools: rank 0 runs the command, the other\n"
          "# ranks the pool's additional_node_command.\nSLUICE_RANK_SH=");
        Q(rank_wrapper);
        P("\n");
    }
    P("SLUICE_POOLS=(");
    for (k = 0; k < s->n_pools; k++)
        PF("%s%s", k ? " " : "", s->pools[k].name);
    P(")\nSLUICE_PIDS=()\n");
    for (k = 0; k < s->n_pools; k++)
        if ((rc = emit_pool(c, b, r, k)) != SLUICE_OK)
            goto out;

    P("\n# 9. Wait; stop the other pools when one fails (unless keep_going); exit\n"
      "# with the first failing code.\n");
    P(wait_block);
    if ((*out = buf_take(b)) == NULL)
        rc = SLUICE_ENOMEM;
out:
    buf_free(b);
    if (rc != SLUICE_OK && rc != SLUICE_ENOMEM && rc != SLUICE_ETOOBIG)
        rc = SLUICE_ENOMEM;
    return rc;
}

#undef P
#undef PF
#undef Q

/* ---- job descriptions ---------------------------------------------------- */

static const char *first_set(const char *a, const char *b, const char *c2)
{
    if (a && a[0])
        return a;
    if (b && b[0])
        return b;
    return (c2 && c2[0]) ? c2 : NULL;
}

static sluice_err fill_jobdesc(rctx_t *c, sluice_render_t *r, size_t k, sluice_jobdesc_t *d)
{
    const sluice_launch_pool_t *p = &c->s->pools[k];
    const sluice_config_t *cfg = c->cfg;
    const sluice_study_t *st = c->study;
    char buf[64];
    buf_t t = BUF_INIT;
    sluice_err rc = SLUICE_OK;
    uint32_t tl = c->s->time_limit ? c->s->time_limit : (uint32_t)cfg->launcher.sbatch.time_minutes;

    buf_init(&t, 0);
    d->name = marker_job_name_dup(cfg->job_name_prefix, c->s->site, c->s->launch_id, r->attempt);
    d->comment = marker_comment_dup(c->s->launch_id, r->attempt);
    d->partition = xstrdup(
        first_set(c->s->partition, st ? st->partition : NULL, cfg->launcher.sbatch.partition));
    d->account =
        xstrdup(first_set(c->s->account, st ? st->account : NULL, cfg->launcher.sbatch.account));
    d->qos = xstrdup(first_set(c->s->qos, st ? st->qos : NULL, cfg->launcher.sbatch.qos));
    d->reservation = xstrdup(first_set(cfg->launcher.sbatch.reservation, NULL, NULL));
    d->time_limit = tl;
    d->nodes = p->nodes;
    d->tasks_per_node = 1;
    d->cpus_per_task = p->cpus_per_node;
    d->mem_per_node_mib = p->mem_per_node_mib;
    d->gpus_per_node = p->gpus_per_node;
    if (p->gpus_per_node > 0)
        d->gres_name = strdup(p->gres ? p->gres : "gpu");
    d->constraint = join_constraint(cfg->launcher.sbatch.constraint, p->constraint);
    d->workdir = strdup(c->host_workdir);
    if (buf_printf(&t, "%s/stdout.log", r->staging_cluster) != SLUICE_OK)
        goto nomem;
    d->std_out = buf_take(&t);
    if (buf_printf(&t, "%s/stderr.log", r->staging_cluster) != SLUICE_OK)
        goto nomem;
    d->std_err = buf_take(&t);
    d->hold = false;
    if (k == 0 && c->ctx->dependency_job_id > 0 && c->s->depends_on) {
        if (buf_printf(&t, "%s:%llu", sluice_launch_dep_name(c->s->depends_condition),
                       (unsigned long long)c->ctx->dependency_job_id) != SLUICE_OK)
            goto nomem;
        d->dependency = buf_take(&t);
    }
    d->requeue = c->s->requeue;
    d->signal = xstrdup(c->s->signal);
    d->exclusive = c->s->exclusive;
    if (!d->name || !d->comment || !d->workdir || !d->std_out || !d->std_err)
        goto nomem;
    if ((rc = sluice_jobdesc_setenv(d, "PATH", c->job_path, c->err)) != SLUICE_OK ||
        (rc = sluice_jobdesc_setenv(d, "LANG", RENDER_LANG, c->err)) != SLUICE_OK ||
        (rc = sluice_jobdesc_setenv(d, "HOME", r->staging_cluster, c->err)) != SLUICE_OK)
        goto out;
    (void)buf;
    goto out;
nomem:
    rc = sluice_errorf(c->err, SLUICE_ENOMEM, "pools[%zu]: out of memory", k);
out:
    buf_free(&t);
    return rc;
}

/* ---- entry points -------------------------------------------------------- */

static sluice_err check_pools(rctx_t *c)
{
    size_t i, j;
    char vi[64], vj[64];

    for (i = 0; i < c->s->n_pools; i++) {
        const sluice_launch_pool_t *p = &c->s->pools[i];
        if (p->gpu_series) {
            const sluice_gpu_series_t *gs = sluice_config_gpu_series(c->cfg, p->gpu_series);
            if (!gs || !gs->constraint || !gs->constraint[0])
                return sluice_errorf(c->err, SLUICE_EINVAL,
                                     "pools[%zu] (%s): GPU series \"%s\" has no Slurm constraint "
                                     "in the site catalogue; refused (fail-closed)",
                                     i, p->name, p->gpu_series);
        }
        if (p->nodes > 1 && !p->additional_node_command && c->profile != SLUICE_LAUNCH_PROFILE_NONE)
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "pools[%zu] (%s): %u nodes without additional_node_command "
                                 "(application-owned fan-out) needs the profile none",
                                 i, p->name, p->nodes);
        pool_var(p->name, vi, sizeof(vi));
        for (j = 0; j < i; j++) {
            pool_var(c->s->pools[j].name, vj, sizeof(vj));
            if (strcmp(vi, vj) == 0)
                return sluice_errorf(c->err, SLUICE_EINVAL,
                                     "pools[%zu] (%s): name gives the same variable "
                                     "SLUICE_POOL_%s_HOST as pool %s",
                                     i, p->name, vi, c->s->pools[j].name);
        }
    }
    return SLUICE_OK;
}

static uint32_t pick_port(const sluice_config_t *cfg, const char *launch_id)
{
    unsigned char md[MARKER_SHA256_LEN];
    long lo = cfg->launcher.port_range_lo, hi = cfg->launcher.port_range_hi;
    uint32_t h;

    if (lo <= 0 || hi < lo) {
        lo = 29400;
        hi = 30399;
    }
    (void)marker_sha256(launch_id, strlen(launch_id), md); /* zeros on failure */
    h = ((uint32_t)md[4] << 24) | ((uint32_t)md[5] << 16) | ((uint32_t)md[6] << 8) | md[7];
    return (uint32_t)lo + h % (uint32_t)(hi - lo + 1);
}

void sluice_render_free(sluice_render_t *r)
{
    size_t i;

    if (!r)
        return;
    free(r->launch_id);
    free(r->sha8);
    free(r->run_id);
    free(r->staging_service);
    free(r->staging_cluster);
    free(r->script);
    for (i = 0; r->jobs && i < r->n_jobs; i++)
        sluice_jobdesc_clear(&r->jobs[i]);
    free(r->jobs);
    for (i = 0; r->pool_names && i < r->n_jobs; i++)
        free(r->pool_names[i]);
    free(r->pool_names);
    for (i = 0; r->secret_names && i < r->n_secret_names; i++)
        free(r->secret_names[i]);
    free(r->secret_names);
    for (i = 0; r->files && i < r->n_files; i++) {
        free(r->files[i].name);
        free(r->files[i].content);
    }
    free(r->files);
    free(r);
}

sluice_err sluice_render(const sluice_config_t *cfg,
                         const sluice_study_t *study,
                         const sluice_launch_t *launch,
                         const sluice_render_ctx_t *ctx,
                         sluice_render_t **out,
                         sluice_error_t *err)
{
    static const sluice_render_ctx_t zero_ctx;
    rctx_t c;
    sluice_render_t *r = NULL;
    sluice_err rc = SLUICE_OK;
    buf_t t = BUF_INIT;
    char hex[9];
    size_t i;

    if (!cfg || !launch || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "render: missing argument");
    memset(&c, 0, sizeof(c));
    c.cfg = cfg;
    c.study = study;
    c.l = launch;
    c.s = sluice_launch_spec(launch);
    c.ctx = ctx ? ctx : &zero_ctx;
    c.err = err;
    buf_init(&t, 0);
    if (!cfg->storage.root || cfg->storage.root[0] != '/')
        return sluice_errorf(err, SLUICE_ECONFIG, "storage.root: needed to render a launch");
    if (strcmp(c.s->site, cfg->site_name) != 0)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "site: the request names site \"%s\" but this service serves \"%s\"",
                             c.s->site, cfg->site_name);
    if (study && c.s->study && strcmp(study->name, c.s->study) != 0)
        return sluice_errorf(err, SLUICE_EINVAL, "study: runtime given for \"%s\", not \"%s\"",
                             study->name, c.s->study);
    c.profile = c.s->effective_profile == SLUICE_LAUNCH_PROFILE_UNSET ? SLUICE_LAUNCH_PROFILE_NONE
                                                                      : c.s->effective_profile;
    if (c.s->time_limit == 0 && cfg->policy.max_time_minutes > 0 &&
        cfg->launcher.sbatch.time_minutes == 0)
        (void)0;
    if (cfg->policy.max_time_minutes > 0 &&
        c.s->time_limit > (uint32_t)cfg->policy.max_time_minutes)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "time_limit: %u minutes is more than the site allows (%ld)",
                             c.s->time_limit, cfg->policy.max_time_minutes);

    if ((r = calloc(1, sizeof(*r))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
    r->attempt = c.ctx->attempt ? c.ctx->attempt : 1;
    r->launch_id = strdup(c.s->launch_id);
    sluice_render_sha8(c.s->launch_id, hex);
    r->sha8 = strdup(hex);
    if (c.ctx->run_id) {
        r->run_id = strdup(c.ctx->run_id);
    } else if (buf_printf(&t, "%s.%u", c.s->launch_id, r->attempt) == SLUICE_OK) {
        r->run_id = buf_take(&t);
    }
    if (buf_printf(&t, "%.*s/%s/%s/attempt-%u", (int)root_len(cfg->storage.root), cfg->storage.root,
                   c.s->site, hex, r->attempt) == SLUICE_OK)
        r->staging_service = buf_take(&t);
    if (buf_printf(&t, "%.*s/%s/%s/attempt-%u", (int)root_len(cluster_root(cfg)), cluster_root(cfg),
                   c.s->site, hex, r->attempt) == SLUICE_OK)
        r->staging_cluster = buf_take(&t);
    r->master_port = pick_port(cfg, c.s->launch_id);
    if (!r->launch_id || !r->sha8 || !r->run_id || !r->staging_service || !r->staging_cluster) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }

    if ((rc = check_pools(&c)) != SLUICE_OK || (rc = resolve_image(&c)) != SLUICE_OK ||
        (rc = resolve_mounts(&c)) != SLUICE_OK || (rc = resolve_env(&c)) != SLUICE_OK ||
        (rc = collect_secret_names(&c, r)) != SLUICE_OK)
        goto out;

    /* Working directory: the request's (translated when on the storage
     * root), else the staging directory. */
    if (c.s->workdir) {
        if (!normalised(c.s->workdir) || strpbrk(c.s->workdir, ":,")) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "workdir: expected an absolute normalised path without ':' or ','");
            goto out;
        }
        c.workdir = c.profile == SLUICE_LAUNCH_PROFILE_NONE ? to_cluster(cfg, c.s->workdir)
                                                            : strdup(c.s->workdir);
    } else {
        c.workdir = strdup(r->staging_cluster);
    }
    c.host_workdir = strdup(
        c.profile == SLUICE_LAUNCH_PROFILE_NONE && c.workdir ? c.workdir : r->staging_cluster);
    if (!c.workdir || !c.host_workdir) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }

    if ((c.job_path = render_job_path(cfg)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }
    r->n_jobs = c.s->n_pools;
    r->jobs = calloc(r->n_jobs, sizeof(*r->jobs));
    r->pool_names = calloc(r->n_jobs, sizeof(char *));
    if (!r->jobs || !r->pool_names) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }
    for (i = 0; i < r->n_jobs; i++) {
        if ((r->pool_names[i] = strdup(c.s->pools[i].name)) == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
            goto out;
        }
        if ((rc = fill_jobdesc(&c, r, i, &r->jobs[i])) != SLUICE_OK)
            goto out;
    }
    if ((rc = emit_script(&c, r, &r->script)) != SLUICE_OK) {
        rc = sluice_errorf(err, rc, "render: the batch script %s",
                           rc == SLUICE_ETOOBIG ? "exceeds 4 MiB" : "could not be built");
        goto out;
    }
    if ((r->jobs[0].script = strdup(r->script)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }
    /* A copy of the script in staging, for people reading a job's files. */
    r->files = calloc(1, sizeof(*r->files));
    if (!r->files || (r->files[0].name = strdup("job.sh")) == NULL ||
        (r->files[0].content = strdup(r->script)) == NULL) {
        if (r->files)
            free(r->files[0].name);
        free(r->files);
        r->files = NULL;
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }
    r->files[0].mode = 0600;
    r->n_files = 1;
    *out = r;
    r = NULL;
out:
    buf_free(&t);
    sluice_render_free(r);
    for (i = 0; i < c.n_mounts; i++) {
        free(c.mounts[i].src);
        free(c.mounts[i].dst);
    }
    free(c.mounts);
    free(c.vars);
    free(c.image);
    free(c.workdir);
    free(c.host_workdir);
    free(c.job_path);
    return rc;
}

json_t *sluice_render_to_json(const sluice_render_t *r)
{
    json_t *o = json_object(), *a;
    size_t i;
    int bad = 0;

    if (!o)
        return NULL;
    bad |= json_object_set_new(o, "launch_id", json_string(r->launch_id));
    bad |= json_object_set_new(o, "attempt", json_integer(r->attempt));
    bad |= json_object_set_new(o, "sha8", json_string(r->sha8));
    bad |= json_object_set_new(o, "run_id", json_string(r->run_id));
    bad |= json_object_set_new(
        o, "staging",
        json_pack("{s:s s:s}", "service", r->staging_service, "cluster", r->staging_cluster));
    bad |= json_object_set_new(o, "master_port", json_integer(r->master_port));
    a = json_array();
    for (i = 0; a && i < r->n_jobs; i++)
        bad |= json_array_append_new(a, json_string(r->pool_names[i]));
    bad |= json_object_set_new(o, "pools", a);
    a = json_array();
    for (i = 0; a && i < r->n_secret_names; i++)
        bad |= json_array_append_new(a, json_string(r->secret_names[i]));
    bad |= json_object_set_new(o, "secret_names", a);
    a = json_array();
    for (i = 0; a && i < r->n_files; i++)
        bad |= json_array_append_new(
            a, json_pack("{s:s s:i}", "name", r->files[i].name, "mode", (int)r->files[i].mode));
    bad |= json_object_set_new(o, "files", a);
    bad |= json_object_set_new(o, "script", json_string(r->script));
    a = json_array();
    for (i = 0; a && i < r->n_jobs; i++)
        bad |= json_array_append_new(a, sluice_jobdesc_to_json(&r->jobs[i]));
    bad |= json_object_set_new(o, "jobs", a);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}
