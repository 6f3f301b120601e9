/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_check.c - `sluice check`: preflight of the site configuration against
 * the real cluster through slurmrestd.
 *
 * Checks, in order (a check that cannot run because an earlier one failed
 * is reported "skipped"):
 *   identity      the Slurm user sluice acts as, and where it came from
 *                 (rest.user, or the token's own `sun` claim); FAIL (78)
 *                 when neither names one
 *   token-source  where the token comes from: rest.jwt_file, rest.jwt_command
 *                 (that it ran, the user its token names and its expiry),
 *                 a key that mints it, or $SLURM_JWT
 *   reachability  an HTTP answer from slurmrestd at rest.url
 *   tls           https: the handshake and verification passed
 *   version       the negotiated API version and the Slurm release
 *   token         an authenticated call (diag; never ping) succeeded
 *   deprecation   "warn" when the server's own OpenAPI document
 *                 (/openapi/v3) marks every operation of that version
 *                 deprecated (26.11: v0.0.43), naming the release that
 *                 removes it and the newer versions the server offers;
 *                 never a failure ("not checked" when unreadable)
 *   accounting    a slurmdbd job query answered (an empty answer is fine);
 *                 FAIL (69) when slurmrestd serves no /slurmdb/ URL at all
 *                 (its router's 404: no openapi/slurmdbd plugin loaded)
 *   partition     job_launcher.sbatch.partition exists on some node
 *   gpu:<series>  some node's features satisfy the series' constraint
 *                 ('&' and '|' of feature names; anything else "not checked")
 *   probe-job     (--probe-job only) a tiny job ran the configured srun and
 *                 found the container runtime, and srun's version is the
 *                 controller's (check_probe.c)
 *   tenants-staging, tenant:<name>/token, tenant:<name>/uid-contract,
 *   tenant:<name>/probe-job
 *                 a site with tenants: the process can give each tenant
 *                 its staging; each tenant's identity gets a token Slurm
 *                 accepts as its user; its user has a uid here; with
 *                 --probe-job a job of its own runs as that user and uid
 *                 (check_tenant.c)
 *
 * A site with `clusters:` gets these checks (from identity on) for each
 * cluster in turn, each row named "<cluster>/<check>" ("west/token"; the
 * JSON rows also carry "cluster"); with one cluster the rows are as they
 * always were.
 *
 * Exit codes: 0 all ok; otherwise the code of the first failing check:
 * 69 unavailable, 77 authentication, 78 configuration, 74 the probe's
 * staging directory could not be created; 66 the site file does not
 * exist; 64 usage.
 */
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/client.h>

#include "args.h"
#include "check_probe.h"
#include "check_tenant.h"
#include "cli.h"
#include "prepare.h"
#include "site/config_model.h"
#define MAX_ROWS 256

typedef struct {
    char name[96];
    char cluster[40];   /* "" with one cluster */
    const char *status; /* "ok", "FAIL", "not checked", "skipped" */
    char detail[400];
    int code; /* sysexit when failed */
} row_t;

typedef struct {
    row_t rows[MAX_ROWS];
    size_t n;
    const char *cluster; /* the cluster of the rows added now; "" with one */
} table_t;

static row_t *add(table_t *t, const char *name, const char *status, int code, const char *fmt, ...)
    SLUICE_PRINTF(5, 6);

static row_t *add(table_t *t, const char *name, const char *status, int code, const char *fmt, ...)
{
    const char *k = t->cluster ? t->cluster : "";
    row_t *r;
    va_list ap;

    if (t->n == MAX_ROWS)
        return NULL;
    r = &t->rows[t->n++];
    snprintf(r->cluster, sizeof(r->cluster), "%s", k);
    snprintf(r->name, sizeof(r->name), "%s%s%s", k, k[0] ? "/" : "", name);
    r->status = status;
    r->code = strcmp(status, "FAIL") == 0 ? code : 0;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
    va_end(ap);
    return r;
}

/* The uid contract (docs/operations.md): each staging directory is made
 * 0700 as sluice's uid, and the job runs as the Slurm user, so the two must
 * be one uid, unless sluice runs as root and hands staging to that user.
 * Known only where the user has an account on this host. */
static void uid_contract_row(table_t *t, const char *user)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    unsigned me = (unsigned)geteuid();
    int known = user[0] != '\0' && getpwnam_r(user, &pw, buf, sizeof(buf), &res) == 0 && res;

    if (me == 0 && known)
        add(t, "uid-contract", "ok", 0, "root: each staging directory is handed to %s (uid %u)",
            user, (unsigned)pw.pw_uid);
    else if (me == 0)
        add(t, "uid-contract", "warn", 0,
            "root, and %s has no account on this host: staging stays root's (0700), which a job "
            "running as %s cannot read",
            user, user);
    else if (!known)
        add(t, "uid-contract", "warn", 0,
            "sluice runs as uid %u and %s has no account on this host: staging is made 0700 as "
            "uid %u, so %s must be uid %u on the cluster (--probe-job proves it)",
            me, user, me, user, me);
    else if ((unsigned)pw.pw_uid == me)
        add(t, "uid-contract", "ok", 0, "sluice runs as %s (uid %u), the user the jobs run as",
            user, me);
    else
        add(t, "uid-contract", "FAIL", CLI_EX_NOPERM,
            "sluice runs as uid %u but the jobs run as %s (uid %u): staging is made 0700 as uid "
            "%u, so no job could read it; run sluice as %s (uid %u)",
            me, user, (unsigned)pw.pw_uid, me, user, (unsigned)pw.pw_uid);
}

/* Is `part` one of the comma-separated names in `list`? */
static int in_list(const char *list, const char *part)
{
    size_t n = strlen(part);
    const char *p = list;

    while (p != NULL && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, part, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

static int outcome_exit(sluice_outcome o)
{
    return o == SLUICE_OUTCOME_AUTH ? CLI_EX_NOPERM : CLI_EX_UNAVAILABLE;
}

/* Does the server deprecate the version sluice talks?  Its /openapi/v3 marks
 * every operation of a deprecated data parser; the version keeps working
 * until the release that removes it, so this only warns. */
static void deprecation_row(table_t *t, sluice_client_t *client, sluice_rest_version v)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_call_t call;
    sluice_rest_openapi_ops_t ops = {0, 0};
    json_t *doc = NULL;
    const char *name = sluice_rest_version_name(v);
    const char *removed = sluice_rest_version_removed_in(v);
    char newer[128] = "";

    if (sluice_client_openapi(client, &doc, &call, &err) != SLUICE_OK) {
        add(t, "deprecation", "not checked", 0, "the server's /openapi/v3 is not readable: %s",
            err.text);
        return;
    }
    if (sluice_rest_openapi_ops(doc, v, &ops, &err) != SLUICE_OK) {
        add(t, "deprecation", "not checked", 0, "%s", err.text);
    } else if (ops.operations == 0) {
        add(t, "deprecation", "not checked", 0, "the server's /openapi/v3 lists no operation of %s",
            name);
    } else if (ops.deprecated == 0) {
        add(t, "deprecation", "ok", 0, "%s is not deprecated by this server (/openapi/v3)", name);
    } else if (ops.deprecated < ops.operations) {
        add(t, "deprecation", "ok", 0,
            "%s is not deprecated by this server; %zu of its %zu operations are (/openapi/v3)",
            name, ops.deprecated, ops.operations);
    } else {
        for (int k = (int)v + 1; k < SLUICE_REST_VERSION_COUNT_; k++) {
            sluice_rest_openapi_ops_t o = {0, 0};
            size_t used = strlen(newer);
            if (sluice_rest_openapi_ops(doc, (sluice_rest_version)k, &o, NULL) == SLUICE_OK &&
                o.operations > o.deprecated)
                snprintf(newer + used, sizeof(newer) - used, "%s%s", used ? ", " : "",
                         sluice_rest_version_name((sluice_rest_version)k));
        }
        add(t, "deprecation", "warn", 0,
            "%s is deprecated by this server (/openapi/v3 marks all %zu of its operations); "
            "Slurm removes it in %s. %s%s%s",
            name, ops.operations, removed != NULL ? removed : "a later release",
            newer[0] ? "Newer versions it serves: " : "It serves no newer version sluice supports",
            newer, newer[0] ? "; set rest.api_version to one of them, or to auto" : "");
    }
    json_decref(doc);
}

/* Returns true when the token authenticated (later checks can use it). */
static bool cluster_checks(table_t *t, sluice_client_t *client, const sluice_config_t *cfg)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_call_t call;
    sluice_client_info_t info;
    sluice_rest_diag_t diag = {0};
    sluice_rest_jobs_t acct = {0};
    sluice_rest_nodes_t nodes = {0};
    const char *url = cfg->rest.url;
    int https = strncmp(url, "https://", 8) == 0;
    int64_t remaining = 0;
    time_t now = time(NULL);
    size_t i, k;
    bool authenticated = false;

    if (sluice_client_negotiate(client, &call, &err) != SLUICE_OK) {
        int answered = call.http_status != 0;
        int tls_fail = https && !answered && strstr(err.text, "(tls)") != NULL;

        if (!answered)
            add(t, "reachability", "FAIL", CLI_EX_UNAVAILABLE, "%s", err.text);
        else
            add(t, "reachability", "ok", 0, "%s answered (HTTP %ld)", url, call.http_status);
        if (tls_fail)
            add(t, "tls", "FAIL", CLI_EX_UNAVAILABLE, "TLS handshake or verification failed");
        else
            add(t, "tls", answered ? (https ? "ok" : "not checked") : "skipped", 0, "%s",
                https ? "" : "not used by this URL");
        if (call.outcome == SLUICE_OUTCOME_AUTH) {
            add(t, "version", "skipped", 0, "needs a token that authenticates");
            add(t, "token", "FAIL", CLI_EX_NOPERM, "%s", err.text);
        } else if (answered) {
            add(t, "version", "FAIL", CLI_EX_UNAVAILABLE, "%s", err.text);
            add(t, "token", "skipped", 0, "no supported API version");
        } else {
            add(t, "version", "skipped", 0, "server not reachable");
            add(t, "token", "skipped", 0, "server not reachable");
        }
        add(t, "deprecation", "skipped", 0, "earlier check failed");
        add(t, "accounting", "skipped", 0, "earlier check failed");
        add(t, "partition", "skipped", 0, "earlier check failed");
        return false;
    }
    sluice_client_info(client, &info);
    add(t, "reachability", "ok", 0, "%s answered", url);
    add(t, "tls", https ? "ok" : "not checked", 0, "%s",
        https ? (cfg->rest.tls_verify ? "verified" : "verification turned OFF (rest.tls_verify)")
              : "not used by this URL (loopback http or Unix socket)");
    add(t, "version", "ok", 0, "%s, Slurm %s%s%s", sluice_rest_version_name(info.version),
        info.release[0] ? info.release : "(release unknown)", info.cluster[0] ? ", cluster " : "",
        info.cluster);

    if (sluice_client_diag(client, &diag, &call, &err) != SLUICE_OK) {
        add(t, "token", "FAIL", outcome_exit(call.outcome), "%s", err.text);
        add(t, "deprecation", "skipped", 0, "needs a token that authenticates");
    } else {
        sluice_error_t e2 = SLUICE_ERROR_INIT;
        authenticated = true;
        if (sluice_auth_expiry(sluice_client_auth(client), NULL, &remaining, &e2) == SLUICE_OK)
            add(t, "token", "ok", 0, "authenticated as %s (diag); expires in %lld s",
                sluice_auth_user(sluice_client_auth(client)), (long long)remaining);
        else
            add(t, "token", "ok", 0, "authenticated as %s (diag)",
                sluice_auth_user(sluice_client_auth(client)));
        deprecation_row(t, client, info.version);
    }

    if (sluice_client_acct_find(client, "sluice-check-probe",
                                sluice_auth_user(sluice_client_auth(client)), (int64_t)now - 3600,
                                (int64_t)now, &acct, &call, &err) == SLUICE_OK ||
        call.outcome == SLUICE_OUTCOME_NOT_FOUND)
        add(t, "accounting", "ok", 0, "slurmdbd job query answered (HTTP %ld)", call.http_status);
    else if (call.not_served)
        /* The router's 404, not Slurm's "no such job": a 404 is no answer. */
        add(t, "accounting", "FAIL", CLI_EX_UNAVAILABLE,
            "no accounting: %s/slurmdb/%s/jobs/ answered HTTP %ld (unknown URL): slurmrestd "
            "serves no /slurmdb/ plugin (start it with openapi/slurmdbd too); sluice then "
            "cannot confirm that a job finished, nor that a lost submit left no job",
            url, sluice_rest_version_name(info.version), call.http_status);
    else
        add(t, "accounting", "FAIL", outcome_exit(call.outcome), "%s", err.text);

    if (sluice_client_nodes(client, &nodes, &call, &err) != SLUICE_OK) {
        add(t, "partition", "FAIL", outcome_exit(call.outcome), "nodes: %s", err.text);
        for (i = 0; i < cfg->n_gpu_series; i++) {
            char name[96];
            snprintf(name, sizeof(name), "gpu:%s", cfg->gpu_series[i].name);
            add(t, name, "skipped", 0, "node list unavailable");
        }
        goto out;
    }
    if (cfg->launcher.sbatch.partition == NULL) {
        add(t, "partition", "ok", 0, "none configured (the cluster's default partition)");
    } else {
        size_t hits = 0;
        for (k = 0; k < nodes.n_nodes; k++)
            if (nodes.nodes[k].partitions &&
                in_list(nodes.nodes[k].partitions, cfg->launcher.sbatch.partition))
                hits++;
        if (hits > 0)
            add(t, "partition", "ok", 0, "%s: %zu node%s", cfg->launcher.sbatch.partition, hits,
                hits == 1 ? "" : "s");
        else
            add(t, "partition", "FAIL", CLI_EX_CONFIG, "%s: no node is in this partition",
                cfg->launcher.sbatch.partition);
    }
    for (i = 0; i < cfg->n_gpu_series; i++) {
        const sluice_gpu_series_t *s = &cfg->gpu_series[i];
        char name[96];
        char list[256] = "";
        size_t hits = 0;
        int unsupported = 0;

        snprintf(name, sizeof(name), "gpu:%s", s->name);
        for (k = 0; k < nodes.n_nodes; k++) {
            int m = sluice_constraint_match(s->constraint, nodes.nodes[k].features);
            if (m < 0) {
                unsupported = 1;
                break;
            }
            if (m == 1) {
                size_t used = strlen(list);
                hits++;
                snprintf(list + used, sizeof(list) - used, "%s%s", used ? "," : "",
                         nodes.nodes[k].name ? nodes.nodes[k].name : "?");
            }
        }
        if (unsupported)
            add(t, name, "not checked", 0, "constraint \"%s\" uses syntax other than & and |",
                s->constraint);
        else if (hits > 0)
            add(t, name, "ok", 0, "\"%s\" satisfied by %s", s->constraint, list);
        else
            add(t, name, "FAIL", CLI_EX_CONFIG, "\"%s\": no node has these features",
                s->constraint);
    }
out:
    sluice_rest_diag_clear(&diag);
    sluice_rest_jobs_clear(&acct);
    sluice_rest_nodes_clear(&nodes);
    return authenticated;
}

static void probe_row(
    table_t *t, sluice_client_t *client, const sluice_config_t *cfg, bool tenants, long timeout_s)
{
    sluice_client_info_t info;
    check_probe_row_t row;

    memset(&row, 0, sizeof(row));
    sluice_client_info(client, &info);
    check_probe_job(client, cfg, &info, timeout_s, tenants, &row);
    add(t, "probe-job", row.status, row.code, "%s", row.detail);
}

static int print_table(const table_t *t, const char *format)
{
    int code = 0;
    size_t i;

    for (i = 0; i < t->n; i++)
        if (t->rows[i].code != 0 && code == 0)
            code = t->rows[i].code;
    if (strcmp(format, "json") == 0) {
        json_t *root = json_object();
        json_t *arr = json_array();
        char *text;

        for (i = 0; i < t->n; i++) {
            const row_t *r = &t->rows[i];
            json_t *row = json_pack("{s:s s:s s:s}", "check", r->name, "status", r->status,
                                    "detail", r->detail);
            /* Several clusters: "check" is "<cluster>/<check>", and the
             * cluster is a member of its own too. */
            if (row && r->cluster[0])
                json_object_set_new(row, "cluster", json_string(r->cluster));
            json_array_append_new(arr, row);
        }
        json_object_set_new(root, "ok", json_boolean(code == 0));
        json_object_set_new(root, "exit", json_integer(code));
        json_object_set_new(root, "checks", arr);
        text = json_dumps(root, JSON_INDENT(2));
        if (text)
            printf("%s\n", text);
        free(text);
        json_decref(root);
    } else {
        printf("%-24s %-12s %s\n", "CHECK", "STATUS", "DETAIL");
        for (i = 0; i < t->n; i++)
            printf("%-24s %-12s %s\n", t->rows[i].name, t->rows[i].status, t->rows[i].detail);
    }
    for (i = 0; i < t->n; i++)
        if (t->rows[i].code != 0)
            fprintf(stderr, "sluice check: %s failed: %s\n", t->rows[i].name, t->rows[i].detail);
    return code;
}

typedef struct {
    bool probe;
    long probe_timeout;
} check_opts_t;

static int check_option(int id, const char *v, void *arg)
{
    check_opts_t *c = arg;

    if (id == CLI_O_PROBE_JOB) {
        c->probe = true;
    } else if (id == CLI_O_PROBE_TIMEOUT) {
        return cli_duration("check", "--probe-timeout", v, 1, 3600, &c->probe_timeout);
    } else {
        return CLI_EX_SOFTWARE;
    }
    return CLI_EX_OK;
}

/* The token-source row: which source, and for a command that it ran. */
static void token_source_row(table_t *t, sluice_auth_t *auth)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *where = NULL;
    char user[SLUICE_TOKEN_USER_MAX] = "";
    char *tok = NULL;
    int64_t left = 0;

    switch (sluice_auth_source(auth, &where)) {
    case SLUICE_AUTH_TOKEN_FILE:
        add(t, "token-source", "ok", 0, "file %s (rest.jwt_file)", where);
        break;
    case SLUICE_AUTH_HS256_KEY:
    case SLUICE_AUTH_RS256_KEY:
        add(t, "token-source", "ok", 0, "minted from the key %s", where);
        break;
    case SLUICE_AUTH_ENV:
        add(t, "token-source", "ok", 0, "environment variable %s", where);
        break;
    case SLUICE_AUTH_COMMAND:
        if (sluice_auth_token(auth, &tok, &err) != SLUICE_OK ||
            sluice_auth_expiry(auth, NULL, &left, &err) != SLUICE_OK) {
            add(t, "token-source", "FAIL", CLI_EX_NOPERM, "%s", err.text);
            break;
        }
        if (sluice_token_user(tok, user, sizeof(user), NULL, &err) != SLUICE_OK)
            snprintf(user, sizeof(user), "(none)");
        add(t, "token-source", "ok", 0,
            "command %s (rest.jwt_command) ran %lu time(s); its token names user %s and "
            "expires in %lld s",
            where, sluice_auth_fetches(auth), user, (long long)left);
        break;
    default:
        add(t, "token-source", "not checked", 0, "unknown source");
        break;
    }
    if (tok != NULL) {
        memset(tok, 0, strlen(tok));
        free(tok);
    }
}

static void tenant_row(void *arg, const char *name, const char *status, int code, const char *text)
{
    add(arg, name, status, code, "%s", text);
}

/* Every check of one cluster (`cfg` is the site itself when it names no
 * clusters), each row named after the cluster when there are several; the
 * tenants of `site` on it. */
static void check_cluster(
    table_t *t, const sluice_config_t *site, sluice_config_t *cfg, bool probe, long probe_timeout)
{
    sluice_client_t *client = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char user[SLUICE_TOKEN_USER_MAX] = "";
    char source[128] = "";

    if (cli_identity(cfg, user, sizeof(user), source, sizeof(source), &err) == SLUICE_ECONFIG) {
        add(t, "identity", "FAIL", CLI_EX_CONFIG, "%s", err.text);
    } else if (sluice_client_new_from_config(&client, cfg, &err) != SLUICE_OK) {
        int code = err.code == SLUICE_EPERM || err.code == SLUICE_EAUTH ? CLI_EX_NOPERM
                   : err.code == SLUICE_EIO                             ? CLI_EX_NOPERM
                                                                        : CLI_EX_CONFIG;
        add(t, "token", "FAIL", code, "%s", err.text);
    } else {
        add(t, "identity", "ok", 0, "user %s from %s", user, source);
        token_source_row(t, sluice_client_auth(client));
        uid_contract_row(t, user);
        if (cluster_checks(t, client, cfg) && probe)
            probe_row(t, client, cfg, sluice_config_tenant_count(site) > 0, probe_timeout);
        else if (probe)
            add(t, "probe-job", "skipped", 0, "needs a token that authenticates");
        check_tenants(site, cfg, client, probe, probe_timeout, tenant_row, t);
    }
    sluice_client_free(client);
}

int cmd_check(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    check_opts_t co = {false, CHECK_PROBE_TIMEOUT_S};
    sluice_config_opts_t opts = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    table_t *t = NULL;
    size_t i, n;
    int rc = CLI_EX_OK;

    if (!cli_parse(spec, argc, argv, &a, check_option, &co, &rc))
        return rc;
    cli_config_opts(&opts, a.site.config_path, a.site.sets, a.site.n_sets);
    if (opts.path != NULL && (rc = cli_check_input(spec, "site file", opts.path)) != CLI_EX_OK)
        return rc;
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return CLI_EX_SOFTWARE;
    opts.errors = &errs;
    if (sluice_config_load(&opts, &cfg, &err) != SLUICE_OK) {
        cli_config_no_file(&opts, &err);
        add(t, "config", "FAIL", CLI_EX_CONFIG, "%s", err.text);
        /* every error of the site file in the one run, a row each */
        for (i = 1; i < errs.n; i++)
            add(t, "config", "FAIL", CLI_EX_CONFIG, "%s", errs.items[i].reason);
        if (errs.dropped > 0)
            add(t, "config", "FAIL", CLI_EX_CONFIG, "%zu more errors not shown", errs.dropped);
    } else {
        cli_log_site(cfg);
        add(t, "config", "ok", 0, "%s", opts.path ? opts.path : "(no site file)");
        n = sluice_config_cluster_count(cfg);
        for (i = 0; i < n; i++) {
            /* The clusters are cfg's (this command owns it); identity
             * completes each one's rest.user from its token, as for cfg. */
            sluice_config_t *k = (sluice_config_t *)(uintptr_t)sluice_config_cluster_at(cfg, i);
            t->cluster = n > 1 ? sluice_config_cluster_name(k) : "";
            check_cluster(t, cfg, k, co.probe, co.probe_timeout);
        }
    }
    rc = print_table(t, a.json ? "json" : "text");
    sluice_config_free(cfg);
    sluice_errlist_clear(&errs);
    free(t);
    return rc;
}
