/* SPDX-License-Identifier: Apache-2.0 */
/* accept.h - the accept pipeline, in one place for every program that takes
 * a launch request: the site's launch policy (for the request's study),
 * the strict parse, the render (once), the launch's secret values, and the
 * durable accept into the store through the launcher.
 *
 * `sluice serve` (POST /v1/launches), `sluice launch --wait` and the
 * benchmarks all go through here, so a request is judged and stored the
 * same way whoever sends it.
 *
 * One pass: the request is loaded once, parsed once (the launch model),
 * rendered once (the typed render), and its canonical form is built once
 * and serialised once (the store's column and hash come from that text).
 * The launcher gets the typed launch and render: nothing is parsed back.
 *
 * Notes:
 * - Secret values (the request's `secrets`, and the `secret_env` names of
 *   the request and the study read through the options' getenv) are held
 *   by the prepared launch in memory only, handed to the launcher (which
 *   keeps its own zeroed-on-free copy) and wiped when the prepared launch is
 *   freed.  They are never in an error text, a log line or the store: the
 *   canonical request lists them by name only.
 * - Two calls for callers that must do something between judging a request
 *   and storing it (`sluice launch` opens the store only for a valid
 *   request; the service answers a dry run): sluice_accept_prepare() then
 *   sluice_accept_commit().  sluice_accept() is both.
 */
#ifndef SLUICE_ACCEPT_H
#define SLUICE_ACCEPT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/config.h>
#include <sluice/error.h>
#include <sluice/launcher.h>
#include <sluice/render.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a request stopped; the stage of a failure says how to answer it
 * (a bad configuration, a bad request, a missing secret, the store). */
typedef enum {
    SLUICE_ACCEPT_STAGE_NONE = 0, /* did not stop: no failure */
    SLUICE_ACCEPT_STAGE_POLICY,   /* the site or study launch policy (cfg) */
    SLUICE_ACCEPT_STAGE_PARSE,    /* the request itself; the text starts with its JSON path */
    SLUICE_ACCEPT_STAGE_RENDER,   /* the request cannot be rendered for this site */
    SLUICE_ACCEPT_STAGE_SECRETS,  /* a secret_env name is not set (the text names it) */
    SLUICE_ACCEPT_STAGE_STORE     /* the launcher or the store refused or failed */
} sluice_accept_stage;

/* What sluice_accept_commit() did with the launch. */
typedef enum {
    SLUICE_ACCEPT_NONE = 0, /* not committed (yet) */
    SLUICE_ACCEPT_NEW,      /* stored now, with its `accepted` event */
    SLUICE_ACCEPT_EXISTED,  /* the same launch_id with the same request was there:
                               nothing new stored (idempotent repeat) */
    SLUICE_ACCEPT_CONFLICT  /* the same launch_id with a different request
                               (the call returns SLUICE_ECONFLICT) */
} sluice_accept_outcome;

/* Options; start from SLUICE_ACCEPT_OPTS_INIT.  Everything is borrowed for
 * the call (and, for the getenv and stat functions, until the prepared
 * launch is committed). */
typedef struct {
    unsigned int version; /* SLUICE_ACCEPT_OPTS_VERSION: first, always */
    /* The study runtime (may be NULL): the request's `study` is looked up
     * in it.  A study it does not know (or any study, when there is no
     * runtime) is refused at the PARSE stage: SLUICE_EINVAL, "study:
     * unknown study ...". */
    const sluice_study_runtime_t *rt;
    /* Or a study runtime file re-read when it changes (wins over rt): a
     * file that is unusable now refuses requests that name a study at the
     * POLICY stage (SLUICE_ECONFIG naming the file); requests that name
     * none never look at it.  Borrowed until the prepared launch is freed. */
    sluice_study_source_t *studies;
    /* The environment that secret_env reads; NULL: getenv(3) of this
     * process.  (forward_env is read in the job, after setup.) */
    sluice_getenv_fn getenv_fn;
    void *getenv_arg;
    sluice_render_stat_fn stat_fn; /* image checks of the render; NULL: stat(2) */
    void *stat_arg;
    const char *caller; /* audit name on the `accepted` event, or NULL */
    /* Every rendered job is submitted held (`hold`: benchmarks that must
     * not run what they submit). */
    bool hold;
    /* Gather the secret values in sluice_accept_prepare() already (a
     * secret_env that is not set fails there, at the SECRETS stage, before
     * the caller opens anything); otherwise sluice_accept_commit() gathers
     * them, and a dry run never needs them. */
    bool read_secrets;
    /* Where every field error of the request goes (may be NULL): the PARSE
     * stage appends them all, in request order (sluice_launch_parse_all());
     * the error struct holds the first.  Errors of the other stages, and of
     * the request as a whole, are in the error struct only.  Caller-owned
     * (sluice_errlist_clear()). */
    sluice_errlist_t *errors;
    /* The cluster of a request that names none (`sluice launch --cluster`;
     * NULL: the site's first).  A request naming another one, or a name
     * the site does not know, is refused at the PARSE stage ("cluster: ..."). */
    const char *cluster;
} sluice_accept_opts_t;

/* Every field but `version` zero: each one's documented default. */
#define SLUICE_ACCEPT_OPTS_VERSION 1
#define SLUICE_ACCEPT_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_ACCEPT_OPTS_VERSION)

/* Initialise `opts` as SLUICE_ACCEPT_OPTS_INIT does, for `version`
 * (pass SLUICE_ACCEPT_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_accept_opts_init(sluice_accept_opts_t *opts,
                                              unsigned int version,
                                              sluice_error_t *err);

/* A request judged and rendered, ready to be committed. */
typedef struct sluice_accept sluice_accept_t;

/* Judge and render `request` (`len` bytes of JSON text, borrowed) for
 * `cfg` (borrowed; it must outlive *out): the launch policy of the site and
 * the request's study, the strict parse, the render at attempt 1, and the
 * canonical request and the render as JSON values.  No secret is read (unless
 * opts.read_secrets), nothing is written.  On success *out is a new prepared launch (caller
 * frees with sluice_accept_free()).  On failure `*failed_out` (may be NULL)
 * names the stage: POLICY (SLUICE_ECONFIG ...), PARSE (SLUICE_EINVAL,
 * SLUICE_ETOOBIG: the text starts with the field's JSON path), RENDER
 * (SLUICE_EINVAL, SLUICE_ECONFIG), and with opts.read_secrets SECRETS
 * (as sluice_accept_commit() says).  SLUICE_ENOMEM at any stage. */
SLUICE_API sluice_err sluice_accept_prepare(sluice_accept_t **out,
                                            sluice_accept_stage *failed_out,
                                            const sluice_config_t *cfg,
                                            const char *request,
                                            size_t len,
                                            const sluice_accept_opts_t *opts,
                                            sluice_error_t *err);

/* sluice_accept_prepare() of a request the caller has already loaded
 * (sluice_launch_load(): the service looks at the document before it is
 * judged).  `request` stays the caller's; its secret values are zeroed by
 * the parse, whatever the outcome.  A value that is not an object fails at
 * PARSE. */
SLUICE_API sluice_err sluice_accept_prepare_value(sluice_accept_t **out,
                                                  sluice_accept_stage *failed_out,
                                                  const sluice_config_t *cfg,
                                                  json_t *request,
                                                  const sluice_accept_opts_t *opts,
                                                  sluice_error_t *err);

/* Gather the launch's secret values and accept it through `launcher`
 * (borrowed): stored with its render and the event `accepted`, a durable
 * commit when this returns.  `*outcome_out` (may be NULL) is NEW or
 * EXISTED on success, CONFLICT with SLUICE_ECONFLICT.  On failure
 * `*failed_out` (may be NULL) is SECRETS (SLUICE_EINVAL naming the variable
 * that is not set, never a value), PARSE (SLUICE_EINVAL "depends_on.
 * launch_id: ...": the launch depended on is unknown to the store, or has
 * ended without meeting the condition; sluice_launcher_check_dependency())
 * or STORE (the launcher's codes:
 * SLUICE_ECONFLICT, SLUICE_ESTATE, SLUICE_ESTORE, ...).  A prepared launch
 * may be committed again (e.g. to another launcher); it stays the
 * caller's.  Thread-safe as sluice_launcher_accept() is. */
SLUICE_API sluice_err sluice_accept_commit(sluice_accept_t *a,
                                           sluice_accept_outcome *outcome_out,
                                           sluice_accept_stage *failed_out,
                                           sluice_launcher_t *launcher,
                                           sluice_error_t *err);

/* sluice_accept_commit() without a launcher in this process: the launch is
 * stored for the supervisor that holds `store`'s lock in another process
 * (sluice_launcher_hand_over()), which submits it.  Refused at the SECRETS
 * stage (SLUICE_EINVAL) when the launch uses secret values (the request's
 * own or its secret_env names: they would live only in this process), and
 * at the PARSE stage when it depends on another launch (its supervisor
 * checks the partner).  Outcomes and the other failures as
 * sluice_accept_commit(). */
SLUICE_API sluice_err sluice_accept_hand_over(sluice_accept_t *a,
                                              sluice_store_t *store,
                                              sluice_accept_outcome *outcome_out,
                                              sluice_accept_stage *failed_out,
                                              sluice_error_t *err);

/* sluice_accept_prepare() then sluice_accept_commit(): the whole pipeline.
 * `*out` (may be NULL when the caller needs nothing back) receives the
 * prepared launch on success only (caller frees with sluice_accept_free()). */
SLUICE_API sluice_err sluice_accept(sluice_accept_t **out,
                                    sluice_accept_outcome *outcome_out,
                                    sluice_accept_stage *failed_out,
                                    sluice_launcher_t *launcher,
                                    const sluice_config_t *cfg,
                                    const char *request,
                                    size_t len,
                                    const sluice_accept_opts_t *opts,
                                    sluice_error_t *err);

/* Accessors; all borrowed, valid until sluice_accept_free(). */
SLUICE_API const char *sluice_accept_launch_id(const sluice_accept_t *a);
/* The cluster the launch runs on: its name (the request's `cluster`, else
 * the site's first) when the site has `clusters:`, NULL for a site without
 * (its one cluster). */
SLUICE_API const char *sluice_accept_cluster(const sluice_accept_t *a);
/* After a commit that created the launch: the launch and its events as a
 * read back of the store would give them then (render null), and the gseq
 * of its `accepted` event (`*version_out`); both outputs may be NULL.
 * Borrowed, valid until sluice_accept_free().  NULL when the commit found
 * the launch stored already (or had no memory to describe it): read it. */
SLUICE_API const json_t *sluice_accept_created_launch(const sluice_accept_t *a,
                                                      const json_t **events_out,
                                                      int64_t *version_out);
/* The study the request named (the runtime knows it; the version of a
 * study source's file it came from is held until sluice_accept_free()),
 * or NULL. */
SLUICE_API const sluice_study_t *sluice_accept_study(const sluice_accept_t *a);
/* The render (typed; `hold` already applied). */
SLUICE_API const sluice_render_t *sluice_accept_render(const sluice_accept_t *a);
/* The canonical request (sluice_launch_to_value(): no secret values) and
 * the render (sluice_render_to_json()) as handed to the launcher: borrowed
 * references, e.g. for a dry-run answer. */
SLUICE_API const json_t *sluice_accept_request_json(const sluice_accept_t *a);
SLUICE_API const json_t *sluice_accept_render_json(const sluice_accept_t *a);
/* The canonical request's one text (compact, keys sorted): what the store
 * keeps and hashes. */
SLUICE_API const char *sluice_accept_request_text(const sluice_accept_t *a);

/* Free everything (the launch's secret values are wiped).  NULL-safe. */
SLUICE_API void sluice_accept_free(sluice_accept_t *a);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_ACCEPT_H */
