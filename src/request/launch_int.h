/* SPDX-License-Identifier: Apache-2.0 */
/* launch_int.h - what the launch files share: the private launch struct,
 * the parse context and the typed getters of launch_get.c.
 *
 * Who owns what:
 *   launch.c          the request: top-level fields, env, secrets, mounts,
 *                     dependencies, public entry points, freeing
 *   launch_get.c      field readers over base/jdec.h, names
 *   launch_errors.c   every field error noted, document order, the first
 *   launch_pool.c     the native pools, series resolution, fan-out rule
 *   launch_nvflare.c  the NVFlare resource_spec/launcher_spec form
 *   launch_json.c     canonical JSON
 *   launch_webhook.c  the request's own webhook receiver (`webhook.url`)
 *   launch_cluster.c  the request's cluster (`cluster`)
 * The calls go one way: launch.c calls the others; launch_pool.c,
 * launch_nvflare.c, launch_webhook.c, launch_cluster.c and launch_json.c call only
 * launch_get.c, launch_errors.c and base/jdec.h (launch_webhook.c also
 * site/webhook_url.c).
 *
 * The request is walked with base/jdec.h cursors of the parse's decoder
 * (launch_ctx_t.d), whose errors are "<json path>: <reason>" and are noted
 * in the parse's collector.  Every reader returns SLUICE_OK or such an
 * error; strings they hand out are new (caller frees with free()) and
 * *out is set only on success.
 */
#ifndef SLUICE_REQUEST_LAUNCH_INT_H
#define SLUICE_REQUEST_LAUNCH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/jdec.h"

#include "launch.h"

struct sluice_launch {
    sluice_launch_spec_t spec;
    size_t n_secrets;
    char **secret_names;  /* sorted */
    char **secret_values; /* NULL when reloaded from the store */
};

typedef struct {
    const sluice_launch_policy_t *pol;
    unsigned flags;
    sluice_error_t *err;    /* the first error (document order, at the end) */
    sluice_errlist_t *list; /* every field error; never NULL while parsing */
    size_t first;           /* list->items[first..] are this parse's */
    /* The request's decoder (strict, the request's words, SLUICE_EINVAL):
     * it notes into err and list; d.n_errors counts the field errors noted
     * so far, d.oom says the walk stops. */
    jdec_t d;
} launch_ctx_t;

#define PATH_CAP JDEC_PATH_MAX /* a JSON path in an error; longer ones are cut */
#define ECHO_CAP JDEC_KEY_ECHO /* a value quoted into an error */

/* ---- strings and paths ------------------------------------------------- */

char *launch_strdup(const char *s); /* NULL for NULL or out of memory */
/* `s` cut to ECHO_CAP bytes with control bytes as '?', into dst[ECHO_CAP]. */
const char *launch_echo(char *dst, const char *s);
/* dst[PATH_CAP] = a + sep + b, cut when too long. */
void launch_path_join(char *dst, const char *a, const char *sep, const char *b);
bool launch_in_list(const char *const *keys, const char *k);
/* Only [a-z0-9] (and A-Z when upper) plus the bytes of `extra`. */
bool launch_charset_ok(const char *s, const char *extra, bool upper);
void launch_free_strv(char **v, size_t n); /* NULL-safe */

/* ---- errors ------------------------------------------------------------ */

/* launch_errors.c.  Note the field error "<path>: <reason>" in the list
 * (and, the first time, in c->err) and return SLUICE_EINVAL, or
 * SLUICE_ENOMEM when the list could not take it.  A field error at a
 * cursor is jdec_fail()'s. */
sluice_err launch_perr(launch_ctx_t *c, const char *path, const char *fmt, ...) SLUICE_PRINTF(3, 4);
sluice_err launch_oom(launch_ctx_t *c);
/* Note the error `e` of a base/syntax.h check of `path` (its "<path>: "
 * prefix dropped); rc is that check's return, handed back. */
sluice_err launch_take(launch_ctx_t *c, const char *path, sluice_err rc, const sluice_error_t *e);
/* The walk must stop: out of memory, or an error that is not a field's. */
bool launch_fatal(const launch_ctx_t *c, sluice_err rc);
/* An error was noted at `prefix` or below it ("pools[1]" covers
 * "pools[1].nodes"): the checks that read that field are skipped. */
bool launch_failed(const launch_ctx_t *c, const char *prefix);
/* Sort this parse's errors in document order (paths looked up in `root`)
 * and put the first in c->err.  SLUICE_EINVAL when there is any. */
sluice_err launch_errors_finish(launch_ctx_t *c, json_t *root);
/* Go on after a field error (it is noted); return what stops the walk
 * (launch_fatal). */
#define LAUNCH_GO_ON(c, rc)                                                                        \
    do {                                                                                           \
        sluice_err go_on_rc_ = (rc);                                                               \
        if (launch_fatal((c), go_on_rc_))                                                          \
            return go_on_rc_;                                                                      \
    } while (0)

/* ---- field readers ----------------------------------------------------- */

/* Each reads the member `key` of the cursor `at` (key NULL: at's own
 * value), which belongs to c->d; an absent member is no error and leaves
 * *out as it was (the caller asks jdec_present() first where the field
 * is required).  Types, lengths and ranges are base/jdec.h's getters,
 * called directly; these add the request's own rules. */

/* An array of strings (arguments). */
sluice_err launch_want_args(
    launch_ctx_t *c, const jdec_cur_t *at, const char *key, char ***out, size_t *n_out);
/* [A-Za-z0-9._-]{1,max}; `path_safe` also refuses "." and "..". */
sluice_err launch_want_ident(
    launch_ctx_t *c, const jdec_cur_t *at, const char *key, size_t max, bool path_safe, char **out);
/* An absolute path, normalised (base/syntax.h). */
sluice_err launch_want_path(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out);
/* The absolute path of an image file; registry references are refused. */
sluice_err launch_want_image(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out);
/* Minutes (integer) or a Slurm time string (base/syntax.h), 1..365 days. */
sluice_err launch_want_time(launch_ctx_t *c, const jdec_cur_t *at, const char *key, uint32_t *out);
/* Seconds, never more than the site's pending_timeout. */
sluice_err launch_want_pending(launch_ctx_t *c,
                               const jdec_cur_t *at,
                               const char *key,
                               sluice_launch_spec_t *s);
/* A shell command line without ${secret:...} references. */
sluice_err
launch_want_node_command(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out);
/* A command (a program name or path, never empty) that does not start
 * with '-'. */
sluice_err launch_want_command(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out);
/* `secret_env` (or `secret_names`, `key` of the root) into out[0..*nout):
 * names only, sorted; for secret_env only what the policy lists
 * (launch_secrets.c). */
sluice_err launch_parse_secret_env(
    launch_ctx_t *c, const jdec_cur_t *root, const char *key, char ***out, size_t *nout);
/* `secrets` (name -> value, API only) into l's secret names and values,
 * sorted by name. */
sluice_err launch_parse_secrets(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_t *l);

/* ---- the other parts (each reads its member of the request's root) ----- */

sluice_err launch_parse_pools(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s);
/* Effective commands and the multi-node fan-out rule, for either form. */
sluice_err launch_finish_pools(launch_ctx_t *c, sluice_launch_spec_t *s);
sluice_err launch_parse_nvflare(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s);
/* `cluster`: one of policy.clusters (none listed: "default"); an unknown
 * name is a field error that lists the known ones. */
sluice_err launch_parse_cluster(launch_ctx_t *c,
                                const jdec_cur_t *root,
                                const sluice_launch_policy_t *pol,
                                char **out);

/* `webhook: {"url": ...}` against the policy's webhook_* fields. */
sluice_err launch_parse_webhook(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s);

#endif /* SLUICE_REQUEST_LAUNCH_INT_H */
