/* SPDX-License-Identifier: Apache-2.0 */
/* webhooks.c - the webhook delivery worker (webhooks.h): fill the outbox,
 * sign and post due deliveries, record the outcome, back off.
 *
 * Notes:
 * - A delivery is posted with the headers X-Sluice-Delivery (its id),
 *   X-Sluice-Event (the event's name), X-Sluice-Timestamp (unix seconds
 *   of this attempt) and X-Sluice-Signature: sha256=<hex of
 *   HMAC-SHA256(secret, "<timestamp>.<body>")>.  The body is the bytes the
 *   store queued; a retry posts the same bytes under a new timestamp.
 * - Backoff after the n-th failed attempt: retry_initial_s * 2^(n-1),
 *   at most retry_max_s, then "equal jitter" (a random point in its
 *   upper half), so receivers that come back are not hit by every sender
 *   at once.
 * - Every non-2xx answer and every transport failure is a failed attempt
 *   (also 4xx: the receiver may be misconfigured for a while).
 * - Only the oldest live delivery of a URL is due (store_webhooks.h), so
 *   a receiver sees one launch's transitions in order.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice/auth.h>
#include <sluice/leader.h>
#include <sluice/log.h>
#include <sluice/version.h>

#include "base/marker.h"
#include "base/wipe.h"
#include "site/config_model.h"
#include "site/webhook_url.h"
#include "transport/http.h"

#include "store/store_webhooks.h"
#include "webhooks.h"

#define N_CLIENTS 8         /* receivers with a client kept open */
#define DUE_BATCH 32        /* deliveries posted per pass */
#define IDLE_WAKE_MS 1000   /* look at the log at least this often */
#define MAX_RESPONSE 65536u /* a receiver's answer is read and dropped */

typedef struct {
    char *url;
    http_client_t *client;
    uint64_t used; /* pass counter, for eviction */
} client_slot_t;

struct webhooks {
    sluice_store_t *store;
    const sluice_config_t *cfg;
    unsigned char *secret;
    size_t secret_len;
    client_slot_t clients[N_CLIENTS];
    uint64_t uses;
    uint64_t rng;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, poked;
    sluice_leader_t *leader; /* replicas: deliver only while it leads (set before the thread) */
    bool full_logged;
    char last_store_error[160];
};

bool webhooks_enabled(const sluice_config_t *cfg)
{
    return cfg != NULL && (cfg->webhooks.url != NULL || cfg->webhooks.allow_request_urls);
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "scheme://host[:port]" of url into buf: what logs name. */
static const char *origin(const char *url, char *buf, size_t size)
{
    const char *a = strstr(url, "://");
    size_t n = a != NULL ? (size_t)(a + 3 - url) + strcspn(a + 3, "/") : strlen(url);

    snprintf(buf, size, "%.*s", (int)n, url);
    return buf;
}

/* xorshift64*: jitter only, no secret depends on it. */
static uint64_t next_rand(webhooks_t *w)
{
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return w->rng * 2685821657736338717ULL;
}

/* The delay before the next attempt after `failures` failed ones. */
static int64_t backoff_ms(webhooks_t *w, int64_t failures)
{
    int64_t d = w->cfg->webhooks.retry_initial_s * 1000, cap = w->cfg->webhooks.retry_max_s * 1000;
    int64_t i;

    for (i = 1; i < failures && d < cap; i++)
        d *= 2;
    if (d > cap)
        d = cap;
    return d / 2 + (int64_t)(next_rand(w) % (uint64_t)(d / 2 + 1));
}

static bool launch_url_ok(const char *url, void *arg)
{
    const sluice_config_t *cfg = arg;

    return cfg->webhooks.allow_request_urls &&
           webhook_url_problem(url, cfg->webhooks.allow_insecure_http) == NULL &&
           webhook_url_allowed(url, cfg->webhooks.request_url_prefixes.items,
                               cfg->webhooks.request_url_prefixes.n);
}

/* The client of `url` (kept for the next delivery), or NULL with err. */
static http_client_t *client_for(webhooks_t *w, const char *url, sluice_error_t *err)
{
    http_opts_t o;
    client_slot_t *slot = &w->clients[0];
    size_t i;

    w->uses++;
    for (i = 0; i < N_CLIENTS; i++) {
        if (w->clients[i].url != NULL && strcmp(w->clients[i].url, url) == 0) {
            w->clients[i].used = w->uses;
            return w->clients[i].client;
        }
        if (w->clients[i].used < slot->used)
            slot = &w->clients[i];
    }
    http_client_free(slot->client);
    free(slot->url);
    memset(slot, 0, sizeof(*slot));
    memset(&o, 0, sizeof(o));
    o.base_url = url;
    o.url_name = "webhook.url";
    o.insecure_name = "webhooks.allow_insecure_http";
    o.allow_insecure_http = w->cfg->webhooks.allow_insecure_http;
    o.timeouts[HTTP_CLASS_SUBMIT].connect_ms = w->cfg->webhooks.timeout_s * 1000;
    o.timeouts[HTTP_CLASS_SUBMIT].total_ms = w->cfg->webhooks.timeout_s * 1000;
    o.max_response = MAX_RESPONSE;
    o.exact_url = 1; /* the URL the prefix rule matched, sent as is */
    if (http_client_new(&slot->client, &o, err) != SLUICE_OK)
        return NULL;
    if ((slot->url = strdup(url)) == NULL) {
        http_client_free(slot->client);
        slot->client = NULL;
        sluice_errorf(err, SLUICE_ENOMEM, "webhooks: out of memory");
        return NULL;
    }
    slot->used = w->uses;
    return slot->client;
}

/* Post one delivery; 1 when the receiver took it (2xx), else 0 with the
 * reason in why[]. */
static int post(webhooks_t *w, const store_webhook_row_t *row, char *why, size_t whysize)
{
    char ts[24], hex[MARKER_SHA256_HEX_SIZE];
    char h_id[160], h_ev[96], h_ts[48], h_sig[96], h_ua[64];
    const char *hdrs[6] = {h_id, h_ev, h_ts, h_sig, h_ua, NULL};
    size_t blen = strlen(row->body), tlen;
    http_request_t req;
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    http_client_t *c;
    char *signed_text;
    int ok = 0;

    snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL));
    tlen = strlen(ts);
    if ((signed_text = malloc(tlen + 1 + blen + 1)) == NULL) {
        snprintf(why, whysize, "out of memory");
        return 0;
    }
    memcpy(signed_text, ts, tlen);
    signed_text[tlen] = '.';
    memcpy(signed_text + tlen + 1, row->body, blen + 1);
    if (!marker_hmac_sha256_hex(w->secret, w->secret_len, signed_text, tlen + 1 + blen, hex)) {
        free(signed_text);
        snprintf(why, whysize, "cannot compute the signature");
        return 0;
    }
    free(signed_text);
    snprintf(h_id, sizeof(h_id), "X-Sluice-Delivery: %s", row->delivery_id);
    snprintf(h_ev, sizeof(h_ev), "X-Sluice-Event: %s", row->event_name);
    snprintf(h_ts, sizeof(h_ts), "X-Sluice-Timestamp: %s", ts);
    snprintf(h_sig, sizeof(h_sig), "X-Sluice-Signature: sha256=%s", hex);
    snprintf(h_ua, sizeof(h_ua), "User-Agent: sluice/%s", sluice_version());
    if ((c = client_for(w, row->url, &err)) == NULL) {
        snprintf(why, whysize, "%s", err.text);
        return 0;
    }
    memset(&req, 0, sizeof(req));
    req.method = HTTP_POST;
    req.klass = HTTP_CLASS_SUBMIT;
    req.path = "";
    req.body = row->body;
    req.headers = hdrs;
    if (http_request(c, &req, &resp, &err) != SLUICE_OK)
        snprintf(why, whysize, "%s", err.text);
    else if (resp.status >= 200 && resp.status <= 299)
        ok = 1;
    else
        snprintf(why, whysize, "HTTP %ld", resp.status);
    http_response_free(&resp);
    return ok;
}

/* Record the outcome of one attempt. */
static sluice_err
settle(webhooks_t *w, const store_webhook_row_t *row, int ok, const char *why, sluice_error_t *err)
{
    int64_t failures = row->attempts + 1, next;
    bool dead;
    char o[160];

    if (ok)
        return store_webhooks_delivered(w->store, row->id, err);
    dead = failures >= w->cfg->webhooks.max_attempts;
    next = dead ? 0 : now_ms() + backoff_ms(w, failures);
    origin(row->url, o, sizeof(o));
    if (dead)
        sluice_log(SLUICE_LOG_WARNING,
                   "webhook delivery %s (launch %s, %s) to %s failed %" PRId64
                   " times, the last: %s; kept as dead (a restart retries it)",
                   row->delivery_id, row->launch_id, row->event_name, o, failures, why);
    else
        sluice_log(failures == 1 ? SLUICE_LOG_WARNING : SLUICE_LOG_INFO,
                   "webhook delivery %s (launch %s, %s) to %s failed (attempt %" PRId64
                   "): %s; next attempt in %" PRId64 " ms",
                   row->delivery_id, row->launch_id, row->event_name, o, failures, why,
                   next - now_ms());
    return store_webhooks_failed(w->store, row->id, next, dead, why, err);
}

sluice_err webhooks_pass(webhooks_t *w, int64_t now, size_t *posted_out, sluice_error_t *err)
{
    store_webhook_fill_t f;
    store_webhook_row_t *rows = NULL;
    size_t n = 0, i, queued = 0, posted = 0;
    int64_t next = INT64_MAX;
    int full = 0;
    char why[512];
    sluice_err rc;

    if (now == 0)
        now = now_ms();
    memset(&f, 0, sizeof(f));
    f.site_url = w->cfg->webhooks.url;
    f.launch_url_ok = w->cfg->webhooks.allow_request_urls ? launch_url_ok : NULL;
    f.arg = (void *)(uintptr_t)w->cfg;
    f.queue_max = (size_t)w->cfg->webhooks.queue_max;
    f.now_ms = now;
    /* Catch up with a long log (many events that are no transitions)
     * without waiting a second per batch. */
    for (i = 0; i < 64; i++) {
        if ((rc = store_webhooks_fill(w->store, &f, &queued, &full, err)) != SLUICE_OK)
            return rc;
        if (!f.more)
            break;
    }
    if (full && !w->full_logged)
        sluice_log(SLUICE_LOG_WARNING,
                   "webhook queue full (webhooks.queue_max %ld deliveries): new transitions wait "
                   "in the event log until deliveries go",
                   w->cfg->webhooks.queue_max);
    w->full_logged = full;
    if ((rc = store_webhooks_due(w->store, now, DUE_BATCH, &rows, &n, &next, err)) != SLUICE_OK)
        return rc;
    for (i = 0; i < n && rc == SLUICE_OK; i++) {
        int ok;

        pthread_mutex_lock(&w->mu);
        ok = w->stop;
        pthread_mutex_unlock(&w->mu);
        if (ok)
            break;
        why[0] = '\0';
        ok = post(w, &rows[i], why, sizeof(why));
        posted++;
        rc = settle(w, &rows[i], ok, why, err);
    }
    store_webhook_rows_free(rows, n);
    if (posted_out != NULL)
        *posted_out = posted;
    return rc;
}

static void *worker(void *arg)
{
    webhooks_t *w = arg;
    sluice_error_t err = SLUICE_ERROR_INIT;

    for (;;) {
        struct timespec until;
        size_t posted = 0;
        int64_t wake;
        bool follower;

        pthread_mutex_lock(&w->mu);
        if (w->stop) {
            pthread_mutex_unlock(&w->mu);
            break;
        }
        w->poked = false;
        follower = w->leader != NULL && sluice_leader_epoch(w->leader) <= 0;
        pthread_mutex_unlock(&w->mu);
        if (follower) {
            posted = 0; /* the leader's worker delivers; look again later */
        } else if (webhooks_pass(w, 0, &posted, &err) != SLUICE_OK) {
            if (strcmp(err.text, w->last_store_error) != 0)
                sluice_log(SLUICE_LOG_WARNING, "webhooks: %s (retrying every second)", err.text);
            snprintf(w->last_store_error, sizeof(w->last_store_error), "%s", err.text);
            posted = 0;
        } else {
            w->last_store_error[0] = '\0';
        }
        if (posted > 0)
            continue; /* more may be due: the next head of each URL */
        wake = now_ms() + IDLE_WAKE_MS;
        until.tv_sec = (time_t)(wake / 1000);
        until.tv_nsec = (long)(wake % 1000) * 1000000L;
        pthread_mutex_lock(&w->mu);
        while (!w->stop && !w->poked)
            if (pthread_cond_timedwait(&w->cv, &w->mu, &until) == ETIMEDOUT)
                break;
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

/* The secret: the key file's bytes without trailing whitespace. */
static sluice_err read_secret(webhooks_t *w, sluice_error_t *err)
{
    const char *path = w->cfg->webhooks.secret_file;
    sluice_err rc;

    if (path == NULL)
        return sluice_errorf(err, SLUICE_ECONFIG, "webhooks.secret_file: required");
    rc = sluice_key_load(path, w->cfg->rest.strict_permissions, &w->secret, &w->secret_len, err);
    if (rc != SLUICE_OK) {
        sluice_error_prefix(err, "webhooks.secret_file");
        return rc;
    }
    while (w->secret_len > 0 && strchr(" \t\r\n", w->secret[w->secret_len - 1]) != NULL)
        w->secret[--w->secret_len] = '\0';
    if (w->secret_len < 16)
        return sluice_errorf(err, SLUICE_EAUTH,
                             "webhooks.secret_file %s: the secret is shorter than 16 bytes", path);
    return SLUICE_OK;
}

sluice_err webhooks_start(webhooks_t *w, sluice_leader_t *leader, sluice_error_t *err)
{
    if (w == NULL || w->started)
        return SLUICE_OK;
    w->leader = leader; /* before the thread: it never runs unfenced */
    if ((errno = pthread_create(&w->thread, NULL, worker, w)) != 0)
        return sluice_errorf(err, SLUICE_ENOMEM, "webhooks: cannot start the worker: %s",
                             strerror(errno));
    w->started = true;
    return SLUICE_OK;
}

sluice_err webhooks_new(webhooks_t **out,
                        sluice_store_t *store,
                        const sluice_config_t *cfg,
                        bool thread,
                        sluice_error_t *err)
{
    webhooks_t *w = NULL;
    size_t revived = 0;
    sluice_err rc;

    if (out == NULL || store == NULL || cfg == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "webhooks: out, store and cfg are required");
    *out = NULL;
    if (!webhooks_enabled(cfg))
        return SLUICE_OK;
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "webhooks: out of memory");
    w->store = store;
    w->cfg = cfg;
    w->rng = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)w;
    if (w->rng == 0)
        w->rng = 1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if ((rc = read_secret(w, err)) != SLUICE_OK ||
        (rc = store_webhooks_start(store, 0, &revived, err)) != SLUICE_OK)
        goto out;
    if (revived > 0)
        sluice_log(SLUICE_LOG_NOTICE, "webhooks: %zu dead deliveries get a new round of attempts",
                   revived);
    if (thread && (rc = webhooks_start(w, NULL, err)) != SLUICE_OK)
        goto out;
    *out = w;
    w = NULL;
out:
    webhooks_free(w);
    return rc;
}

void webhooks_poke(webhooks_t *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    w->poked = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void webhooks_free(webhooks_t *w)
{
    size_t i;

    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (w->started)
        pthread_join(w->thread, NULL);
    for (i = 0; i < N_CLIENTS; i++) {
        http_client_free(w->clients[i].client);
        free(w->clients[i].url);
    }
    if (w->secret != NULL)
        wipe_free(w->secret, w->secret_len);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
