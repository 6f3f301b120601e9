/* SPDX-License-Identifier: Apache-2.0 */
/* config_check.c - the checks that look at several site fields at once,
 * run after the file, the environment and --set have all been applied:
 * required fields (rest.user where a key mints the token), plain http
 * only to loopback, one JWT source, client certificate and key together,
 * the port range, the time cap, the image against the sandbox, and the
 * policy's default GPU series and image allow-list, the webhook URLs and
 * their secret.  What is required depends on the model (ctx_t.role): a
 * site with `clusters:` requires rest and storage of each cluster instead.
 *
 * Notes:
 * - An error names the place the offending field was set (file line,
 *   environment variable or --set), not the place of the check; a
 *   missing field of a cluster is named at its entry.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/syntax.h"
#include "base/urlsafe.h"

#include "config_int.h"
#include "webhook_url.h"

/* Host part of an http(s) URL (after "://", before port/path). */
static void url_host(const char *url, const char **host, size_t *n)
{
    const char *h = strstr(url, "://") + 3;
    const char *at, *end;

    end = h + strcspn(h, "/?#");
    at = memchr(h, '@', (size_t)(end - h));
    if (at)
        h = at + 1;
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(end - h));
        *host = h;
        *n = rb ? (size_t)(rb - h) + 1 : (size_t)(end - h);
        return;
    }
    *host = h;
    *n = strcspn(h, ":/?#");
}

/* Error about a field already set, at the place it was set; a cluster's
 * key is named "clusters[i].<path>". */
static sluice_err bad_at(ctx_t *c, const char *path, const char *fmt, ...) SLUICE_PRINTF(3, 4);

static sluice_err bad_at(ctx_t *c, const char *path, const char *fmt, ...)
{
    char msg[384];
    size_t i = cfg_field_index(path);
    sluice_config_priv_t *p = c->cfg->priv;
    char key[160];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(key, sizeof(key), "%s%s%s", c->scope ? c->scope : "", c->scope ? "." : "", path);
    switch ((sluice_config_source_t)p->src[i]) {
    case SLUICE_SRC_FILE:
        return sluice_errorf(c->err, SLUICE_ECONFIG, "%s:%zu:%zu: %s: %s", c->file, p->line[i] + 1,
                             p->col[i] + 1, key, msg);
    case SLUICE_SRC_ENV:
        return sluice_errorf(c->err, SLUICE_ECONFIG, "environment %s: %s: %s",
                             p->origin[i] ? p->origin[i] : "?", key, msg);
    case SLUICE_SRC_FLAG:
        return sluice_errorf(c->err, SLUICE_ECONFIG, "--set %s: %s", key, msg);
    default:
        return sluice_errorf(c->err, SLUICE_ECONFIG, "%s: %s: %s", c->file, key, msg);
    }
}

static bool is_set(const sluice_config_t *cfg, const char *path)
{
    return cfg->priv->src[cfg_field_index(path)] != SLUICE_SRC_DEFAULT;
}

/* policy.default_gpu_series names a series of the catalogue (which has a
 * constraint: config_catalog.c refuses one without); every entry of
 * policy.allowed_images is an absolute normalised path, a directory when it
 * ends with '/'. */
static sluice_err check_policy(ctx_t *c)
{
    const sluice_config_t *cfg = c->cfg;
    size_t i, n;

    if (cfg->policy.default_gpu_series) {
        for (i = 0; i < cfg->n_gpu_series; i++)
            if (strcmp(cfg->gpu_series[i].name, cfg->policy.default_gpu_series) == 0)
                break;
        if (i == cfg->n_gpu_series) {
            char known[200] = "";
            size_t used = 0;
            for (i = 0; i < cfg->n_gpu_series && used < sizeof(known) - 1; i++) {
                int w = snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
                                 cfg->gpu_series[i].name);
                if (w < 0)
                    break;
                used += (size_t)w;
            }
            return bad_at(c, "policy.default_gpu_series",
                          "\"%s\" is not a series of gpu_series (known: %s)",
                          cfg->policy.default_gpu_series, used ? known : "none");
        }
    }
    for (i = 0; i < cfg->policy.allowed_images.n; i++) {
        const char *e = cfg->policy.allowed_images.items[i];
        n = strlen(e);
        if (n > 1 && e[n - 1] == '/')
            n--;
        if (!syntax_path_plain(e, n))
            return bad_at(c, "policy.allowed_images",
                          "'%.64s': expected an absolute normalised path (a directory ends with "
                          "'/'; no '.', '..', ':', quote, '$' or '\\')",
                          e);
    }
    for (i = 0; i < cfg->policy.allowed_secret_env.n; i++) {
        char name[160];
        const char *e = cfg->policy.allowed_secret_env.items[i], *why;
        n = strlen(e);
        /* a prefix "NAME_*": its stem must start a valid name */
        snprintf(name, sizeof(name), "%.*s", (int)(n > 1 && e[n - 1] == '*' ? n - 1 : n), e);
        if ((why = syntax_envname_reason(name)) != NULL)
            return bad_at(c, "policy.allowed_secret_env",
                          "'%.64s': %s (a variable name, or a prefix ending in '*')", e, why);
    }
    return SLUICE_OK;
}

/* webhooks: every URL follows webhook_url.h; a receiver needs the secret
 * that signs for it; request URLs need an allow-list. */
static sluice_err check_webhooks(ctx_t *c)
{
    const sluice_config_t *cfg = c->cfg;
    const char *why;
    size_t i;

    if (cfg->webhooks.url &&
        (why = webhook_url_problem(cfg->webhooks.url, cfg->webhooks.allow_insecure_http)) != NULL)
        return bad_at(c, "webhooks.url", "%s", why);
    for (i = 0; i < cfg->webhooks.request_url_prefixes.n; i++) {
        const char *e = cfg->webhooks.request_url_prefixes.items[i];
        if ((why = webhook_url_problem(e, cfg->webhooks.allow_insecure_http)) != NULL)
            return bad_at(c, "webhooks.request_url_prefixes", "'%.96s': %s", e, why);
    }
    if (cfg->webhooks.allow_request_urls && cfg->webhooks.request_url_prefixes.n == 0)
        return bad_at(c, "webhooks.allow_request_urls",
                      "needs webhooks.request_url_prefixes (the URL prefixes a request may "
                      "name; any URL would let a caller make the service post anywhere)");
    if ((cfg->webhooks.url || cfg->webhooks.allow_request_urls) && !cfg->webhooks.secret_file)
        return bad_at(c, cfg->webhooks.url ? "webhooks.url" : "webhooks.allow_request_urls",
                      "needs webhooks.secret_file (every delivery is signed)");
    if (cfg->webhooks.retry_initial_s > cfg->webhooks.retry_max_s)
        return bad_at(c, "webhooks.retry_initial_s",
                      "%lds is more than webhooks.retry_max_s (%lds)",
                      cfg->webhooks.retry_initial_s, cfg->webhooks.retry_max_s);
    return SLUICE_OK;
}

/* The leader's renewal must fit twice into its lease: one late renewal
 * never costs the lead. */
static sluice_err check_ha(ctx_t *c)
{
    const sluice_config_t *cfg = c->cfg;

    if (cfg->ha.renew_ms * 2 >= cfg->ha.lease_ms)
        return bad_at(c, "ha.renew_ms", "%ld ms must be less than half of ha.lease_ms (%ld ms)",
                      cfg->ha.renew_ms, cfg->ha.lease_ms);
    if (cfg->ha.replica_id != NULL && strlen(cfg->ha.replica_id) >= 128)
        return bad_at(c, "ha.replica_id", "at most 127 bytes");
    return SLUICE_OK;
}

/* The required fields of a cluster (an entry of `clusters:`), at the
 * entry: its own or inherited rest.url and storage.root; a token source of
 * its own for any but the first ($SLURM_JWT, like the environment, is the
 * first cluster's); rest.user where a key mints the token. */
static sluice_err check_cluster_required(ctx_t *c)
{
    const sluice_config_t *cfg = c->cfg;
    const char *mint = cfg->rest.jwt_key_file ? "rest.jwt_key_file" : "rest.jwt_rs256_key_file";

    /* c->src is SLUICE_SRC_FILE here: the errors point at the entry. */
    if (!cfg->rest.url)
        return cfg_bad(c, c->entry, "rest.url",
                       "required (set rest.url in this entry or at the top level)");
    if (!cfg->storage.root)
        return cfg_bad(c, c->entry, "storage.root",
                       "required (set storage.root in this entry or at the top level)");
    if (c->role == CFG_ROLE_OTHER && !cfg->rest.jwt_file && !cfg->rest.jwt_key_file &&
        !cfg->rest.jwt_rs256_key_file && cfg->rest.jwt_command.n == 0)
        return cfg_bad(c, c->entry, "rest.jwt_file",
                       "required: a cluster other than the first needs a token source "
                       "(rest.jwt_file, rest.jwt_key_file, rest.jwt_rs256_key_file or "
                       "rest.jwt_command, in this entry or at the top level); $SLURM_JWT is the "
                       "first cluster's only");
    if (!cfg->rest.user && !cfg->rest.jwt_file &&
        (cfg->rest.jwt_key_file || cfg->rest.jwt_rs256_key_file))
        return cfg_bad(c, c->entry, "rest.user",
                       "required when %s mints the token (it names this user; set rest.user in "
                       "this entry or at the top level)",
                       mint);
    return SLUICE_OK;
}

sluice_err cfg_finalize(ctx_t *c, bool no_required)
{
    sluice_config_t *cfg = c->cfg;
    const char *tok_set[4];
    int n_jwt = 0;
    sluice_err rc;

    if (!no_required && (c->role == CFG_ROLE_FIRST || c->role == CFG_ROLE_OTHER)) {
        if ((rc = check_cluster_required(c)) != SLUICE_OK)
            return rc;
    } else if (!no_required && c->role == CFG_ROLE_BASE) {
        /* The rest and storage of a site with clusters are checked in each
         * cluster; the sandbox is the site's. */
        if (cfg->launcher.sandbox == SLUICE_SANDBOX_UNSET)
            return sluice_errorf(c->err, SLUICE_ECONFIG,
                                 "%s: job_launcher.sandbox: required (enroot-pyxis, apptainer or "
                                 "none; or FORGE_SLURM_RUNTIME_PROFILE)",
                                 c->file);
    } else if (!no_required) {
        if (!cfg->rest.url)
            return sluice_errorf(c->err, SLUICE_ECONFIG,
                                 "%s: rest.url: required (set rest.url, FORGE_SLURM_REST_URL or "
                                 "--set rest.url=...)",
                                 c->file);
        if (!cfg->storage.root)
            return sluice_errorf(c->err, SLUICE_ECONFIG,
                                 "%s: storage.root: required (set storage.root, "
                                 "FORGE_STORAGE_ROOT or --set storage.root=...)",
                                 c->file);
        if (cfg->launcher.sandbox == SLUICE_SANDBOX_UNSET)
            return sluice_errorf(c->err, SLUICE_ECONFIG,
                                 "%s: job_launcher.sandbox: required (enroot-pyxis, apptainer or "
                                 "none; or FORGE_SLURM_RUNTIME_PROFILE)",
                                 c->file);
        /* The Slurm identity: rest.user, or the token's own user.  A
         * minted token has no user of its own (design.md, "Identity"). */
        if (!cfg->rest.user && !cfg->rest.jwt_file &&
            (cfg->rest.jwt_key_file || cfg->rest.jwt_rs256_key_file))
            return sluice_errorf(
                c->err, SLUICE_ECONFIG,
                "%s: rest.user: required when %s mints the token (it names "
                "this user; set rest.user, FORGE_SLURM_REST_USER or --set "
                "rest.user=...)",
                c->file, cfg->rest.jwt_key_file ? "rest.jwt_key_file" : "rest.jwt_rs256_key_file");
    }
    if (cfg->rest.url && strncmp(cfg->rest.url, "http://", 7) == 0 &&
        !cfg->rest.allow_insecure_http) {
        const char *h;
        size_t hn;
        url_host(cfg->rest.url, &h, &hn);
        if (!urlsafe_host_is_loopback(h, hn))
            return bad_at(c, "rest.url",
                          "expected an https://, http:// (loopback) or unix:/ URL (plain http to "
                          "another host needs rest.allow_insecure_http: true)");
    }
    if (cfg->rest.jwt_file)
        tok_set[n_jwt++] = "rest.jwt_file";
    if (cfg->rest.jwt_key_file)
        tok_set[n_jwt++] = "rest.jwt_key_file";
    if (cfg->rest.jwt_rs256_key_file)
        tok_set[n_jwt++] = "rest.jwt_rs256_key_file";
    if (cfg->rest.jwt_command.n > 0)
        tok_set[n_jwt++] = "rest.jwt_command";
    if (n_jwt > 1)
        return bad_at(c, tok_set[1],
                      "%s and %s are both set: set only one token source (rest.jwt_file, "
                      "rest.jwt_key_file, rest.jwt_rs256_key_file or rest.jwt_command)",
                      tok_set[0], tok_set[1]);
    if (cfg->rest.jwt_kid && !cfg->rest.jwt_rs256_key_file)
        return bad_at(c, "rest.jwt_kid",
                      "only with rest.jwt_rs256_key_file (it names the key of the tokens sluice "
                      "mints with it)");
    if ((cfg->rest.client_cert != NULL) != (cfg->rest.client_key != NULL))
        return bad_at(c, cfg->rest.client_cert ? "rest.client_cert" : "rest.client_key",
                      "rest.client_cert and rest.client_key go together");
    if (cfg->storage.root && !cfg->storage.cluster_root &&
        !(cfg->storage.cluster_root = cfg_dup(cfg->storage.root)))
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    if (cfg->launcher.internal_port >= cfg->launcher.port_range_lo &&
        cfg->launcher.internal_port <= cfg->launcher.port_range_hi) {
        if (is_set(cfg, "job_launcher.multi_node_port_range"))
            return bad_at(c, "job_launcher.multi_node_port_range",
                          "must not contain job_launcher.internal_port (%ld)",
                          cfg->launcher.internal_port);
        cfg->launcher.port_range_lo = 30400;
        cfg->launcher.port_range_hi = 31399;
    }
    if (cfg->policy.max_time_minutes &&
        cfg->launcher.sbatch.time_minutes > cfg->policy.max_time_minutes)
        return bad_at(c, "job_launcher.sbatch_directives.time",
                      "%ld minutes is more than policy.max_time_minutes (%ld)",
                      cfg->launcher.sbatch.time_minutes, cfg->policy.max_time_minutes);
    if (cfg->launcher.image && cfg->launcher.sandbox == SLUICE_SANDBOX_NONE)
        return bad_at(c, "job_launcher.image", "not allowed when job_launcher.sandbox is none");
    if ((rc = check_webhooks(c)) != SLUICE_OK || (rc = check_ha(c)) != SLUICE_OK)
        return rc;
    return check_policy(c);
}
