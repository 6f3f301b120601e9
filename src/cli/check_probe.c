/* SPDX-License-Identifier: Apache-2.0 */
/* check_probe.c - `sluice check --probe-job`: submit a tiny job that shows
 * what a job of this site finds on the cluster (design.md, "Commands on
 * the cluster").
 *
 * Input: a negotiated client (the controller's release is known), the site
 * model, a time budget.  Output: one row, "probe-job".
 *
 * The job (sluice_render_probe()) runs the configured srun with --version
 * and as a one-task step that looks up the sandbox's container runtime on
 * the compute node, and writes its report into its staging directory.  The
 * row compares srun's version with slurmctld's: the same release series
 * (YY.MM) passes, an exact match says "matches".
 *
 * Notes:
 * - Everything goes through the library: the render, the staging
 *   directory (sluice_staging_create()), and the REST client's submit, get
 *   job and cancel.  No second REST client.
 * - The staging directory is <storage.root>/<site>/.probe-<tag>/ and is
 *   removed at the end, whatever happened; a job still queued when the
 *   budget runs out is cancelled first.
 */

#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice/auth.h>
#include <sluice/render.h>

#include "base/jobfs.h"
#include "request/staging.h"

#include "check_probe.h"
#include "cli.h"
#include "site/config_model.h"

#define REPORT_MAX (64 * 1024)

typedef struct {
    char srun[512];
    char runtime[512];
    char srun_path[512];
    char version[128];
    char version_err[256];
    char step_out[512];
    char step_err[256];
    long version_rc;
    long step_rc;
    long uid; /* `id -u` of the job; -1: not reported */
    bool missing;
    bool end;
} report_t;

static void set_row(check_probe_row_t *o, const char *status, int code, const char *fmt, ...)
    SLUICE_PRINTF(4, 5);

static void set_row(check_probe_row_t *o, const char *status, int code, const char *fmt, ...)
{
    va_list ap;

    o->status = status;
    o->code = strcmp(status, "FAIL") == 0 ? code : 0;
    va_start(ap, fmt);
    vsnprintf(o->detail, sizeof(o->detail), fmt, ap);
    va_end(ap);
}

static int outcome_exit(sluice_outcome o)
{
    return o == SLUICE_OUTCOME_AUTH ? CLI_EX_NOPERM : CLI_EX_UNAVAILABLE;
}

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts;

    if (s <= 0)
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void copy_value(char *dst, size_t cap, const char *v, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, v, len);
    dst[len] = '\0';
}

/* Lines "<key> <value>"; unknown keys are skipped. */
static void parse_report(const char *text, report_t *rep)
{
    const char *p = text;

    memset(rep, 0, sizeof(*rep));
    rep->version_rc = -1;
    rep->step_rc = -1;
    rep->uid = -1;
    while (*p) {
        size_t len = strcspn(p, "\n");
        size_t klen = strcspn(p, " \n");
        const char *v = p + klen + (p[klen] == ' ');
        size_t vlen = len > (size_t)(v - p) ? len - (size_t)(v - p) : 0;
        char num[32];

#define KEY(k) (klen == strlen(k) && strncmp(p, k, klen) == 0)
        if (KEY("srun"))
            copy_value(rep->srun, sizeof(rep->srun), v, vlen);
        else if (KEY("runtime-name"))
            copy_value(rep->runtime, sizeof(rep->runtime), v, vlen);
        else if (KEY("srun-path"))
            copy_value(rep->srun_path, sizeof(rep->srun_path), v, vlen);
        else if (KEY("srun-missing"))
            rep->missing = true;
        else if (KEY("srun-version"))
            copy_value(rep->version, sizeof(rep->version), v, vlen);
        else if (KEY("srun-version-err"))
            copy_value(rep->version_err, sizeof(rep->version_err), v, vlen);
        else if (KEY("step-out"))
            copy_value(rep->step_out, sizeof(rep->step_out), v, vlen);
        else if (KEY("step-err"))
            copy_value(rep->step_err, sizeof(rep->step_err), v, vlen);
        else if (KEY("end"))
            rep->end = true;
        else if (KEY("uid")) {
            copy_value(num, sizeof(num), v, vlen);
            rep->uid = num[0] >= '0' && num[0] <= '9' ? strtol(num, NULL, 10) : -1;
        } else if (KEY("srun-version-rc") || KEY("step-rc")) {
            copy_value(num, sizeof(num), v, vlen);
            *(KEY("step-rc") ? &rep->step_rc : &rep->version_rc) = strtol(num, NULL, 10);
        }
#undef KEY
        p += len + (p[len] == '\n');
    }
}

/* The last blank-separated word of `s` ("slurm 24.11.5" -> "24.11.5"). */
static const char *last_word(const char *s)
{
    const char *w = strrchr(s, ' ');

    return w ? w + 1 : s;
}

/* Length of the release series: "24.11" of "24.11.5". */
static size_t series_len(const char *v)
{
    const char *dot = strchr(v, '.');

    if (dot)
        dot = strchr(dot + 1, '.');
    return dot ? (size_t)(dot - v) : strlen(v);
}

/* The report (or stderr.log) into buf: the probe's staging is the job
 * user's, so it is read by the job-owned tree rule (base/jobfs.h); -1 when
 * it is not there or the rule refuses it. */
static ssize_t read_file_at(int dirfd, const char *name, char *buf, size_t cap)
{
    size_t have = 0;

    if (jobfs_read_small(dirfd, name, buf, cap, &have, NULL, NULL) != SLUICE_OK)
        return -1;
    return (ssize_t)have;
}

/* First line of a file of the staging directory, or "". */
static void first_line(int dirfd, const char *name, char *out, size_t cap)
{
    if (read_file_at(dirfd, name, out, cap) < 0)
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

/* Remove <storage.root>/<site>/.probe-<tag>/ (the parent of the attempt). */
static void remove_staging(const sluice_render_t *r)
{
    char dir[4200], name[256];
    char *slash;
    int site = -1;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_err rc;

    snprintf(dir, sizeof(dir), "%s", r->staging_service);
    if ((slash = strrchr(dir, '/')) != NULL)
        *slash = '\0';
    /* relative to the site directory, never following a link */
    rc = staging_open_above(r->staging_service, 2, &site, name, sizeof(name), &err);
    if (rc != SLUICE_OK) {
        if (rc != SLUICE_ENOTFOUND)
            fprintf(stderr, "sluice check: cannot remove the probe's staging %s: %s\n", dir,
                    err.text);
        return;
    }
    if (jobfs_remove_tree(site, name) != 0)
        fprintf(stderr, "sluice check: cannot remove the probe's staging %s: %s\n", dir,
                strerror(errno));
    close(site);
}

static const char *env_of(const sluice_jobdesc_t *d, const char *name)
{
    size_t i;

    for (i = 0; i < d->n_env; i++)
        if (strcmp(d->env[i].name, name) == 0)
            return d->env[i].value;
    return "";
}

/* The row from a complete report. */
static void judge(const report_t *rep,
                  const sluice_render_t *r,
                  const sluice_client_info_t *info,
                  check_probe_row_t *out)
{
    const char *ver = last_word(rep->version);
    const char *ctl = info->release;
    const char *path = rep->srun_path[0] ? rep->srun_path : rep->srun;
    char runtime_note[600] = "";

    if (rep->missing) {
        set_row(out, "FAIL", CLI_EX_CONFIG, "srun %s not found by the job (PATH %s)", rep->srun,
                env_of(&r->jobs[0], "PATH"));
        return;
    }
    if (rep->version_rc != 0 || !ver[0]) {
        set_row(out, "FAIL", CLI_EX_CONFIG, "srun %s --version failed (exit %ld): %s", path,
                rep->version_rc, rep->version_err[0] ? rep->version_err : "no output");
        return;
    }
    if (ctl[0] && (series_len(ver) != series_len(ctl) || strncmp(ver, ctl, series_len(ctl)) != 0)) {
        set_row(out, "FAIL", CLI_EX_CONFIG, "version mismatch: srun %s is %s, slurmctld is %s%s%s",
                path, ver, ctl, rep->step_rc != 0 ? "; its one-task step failed: " : "",
                rep->step_rc != 0 ? rep->step_err : "");
        return;
    }
    if (rep->step_rc != 0) {
        set_row(out, "FAIL", CLI_EX_UNAVAILABLE,
                "srun %s %s: the one-task step failed (exit %ld): %s", path, ver, rep->step_rc,
                rep->step_err[0] ? rep->step_err : "no message");
        return;
    }
    if (strncmp(rep->step_out, "runtime-missing ", 16) == 0) {
        set_row(out, "FAIL", CLI_EX_CONFIG, "srun %s %s; container runtime %s not found on %s",
                path, ver, rep->runtime, rep->step_out + 16);
        return;
    }
    if (strncmp(rep->step_out, "runtime ", 8) == 0) {
        const char *node = rep->step_out + 8;
        size_t nlen = strcspn(node, " ");
        snprintf(runtime_note, sizeof(runtime_note), "; %s on %.*s",
                 node[nlen] ? node + nlen + 1 : "", (int)nlen, node);
    }
    if (!ctl[0])
        set_row(out, "not checked", 0, "srun %s %s; slurmrestd reported no Slurm release%s", path,
                ver, runtime_note);
    else if (strcmp(ver, ctl) == 0)
        set_row(out, "ok", 0, "srun %s %s matches slurmctld %s%s", path, ver, ctl, runtime_note);
    else
        set_row(out, "ok", 0, "srun %s %s is the release series of slurmctld %s%s", path, ver, ctl,
                runtime_note);
}

/* A tenant's probe (user set): the job must be Slurm's job of `user`, and
 * the uid it ran as the uid `user` has on this host (the uid contract:
 * its staging was given to that uid).  Appends to an "ok" row, or makes
 * it a failure. */
static void
judge_user(const report_t *rep, const char *user, const char *job_user, check_probe_row_t *out)
{
    struct passwd pw, *res = NULL;
    char buf[4096], ok_text[sizeof(out->detail)];

    if (strcmp(job_user, user) != 0) {
        set_row(out, "FAIL", CLI_EX_NOPERM, "the probe job ran as Slurm user %s, not %s",
                job_user[0] ? job_user : "(unknown)", user);
        return;
    }
    if (getpwnam_r(user, &pw, buf, sizeof(buf), &res) != 0 || res == NULL) {
        set_row(out, "FAIL", CLI_EX_CONFIG,
                "%s has no account on this host: its staging cannot be given to it", user);
        return;
    }
    if (rep->uid < 0) {
        set_row(out, "FAIL", CLI_EX_UNAVAILABLE, "the probe job reported no uid");
        return;
    }
    if ((uid_t)rep->uid != pw.pw_uid) {
        set_row(out, "FAIL", CLI_EX_NOPERM,
                "uid contract: %s is uid %u on this host but its job ran as uid %ld: the "
                "staging given to uid %u would not be its job's",
                user, (unsigned)pw.pw_uid, rep->uid, (unsigned)pw.pw_uid);
        return;
    }
    if (strcmp(out->status, "FAIL") == 0)
        return;
    snprintf(ok_text, sizeof(ok_text), "%s", out->detail);
    set_row(out, out->status, 0, "job of Slurm user %s, uid %ld as on this host; %s", user,
            rep->uid, ok_text);
}

void check_probe_job(sluice_client_t *client,
                     const sluice_config_t *cfg,
                     const sluice_client_info_t *info,
                     long timeout_s,
                     bool tenants,
                     check_probe_row_t *out)
{
    check_probe_job_as(client, cfg, info, timeout_s, NULL, NULL, tenants, out);
}

void check_probe_job_as(sluice_client_t *client,
                        const sluice_config_t *cfg,
                        const sluice_client_info_t *info,
                        long timeout_s,
                        const char *user,
                        const char *account,
                        bool tenants,
                        check_probe_row_t *out)
{
    char job_user[SLUICE_TOKEN_USER_MAX] = "";
    sluice_render_t *r = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_call_t call;
    sluice_rest_submit_t sub;
    sluice_rest_jobs_t jobs;
    sluice_job_base base = SLUICE_JOB_BASE_UNKNOWN;
    char tag[17], reason[128] = "", line[256];
    char *text = NULL;
    report_t rep;
    struct timespec now;
    double deadline;
    bool ended = false, gone = false, staged = false;
    int dirfd = -1, exit_code = 0;
    uint64_t id;

    memset(&sub, 0, sizeof(sub));
    memset(&jobs, 0, sizeof(jobs));
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(tag, sizeof(tag), "%08lx",
             ((unsigned long)getpid() * 2654435761UL ^ (unsigned long)now.tv_nsec ^
              (unsigned long)now.tv_sec) &
                 0xffffffffUL);
    if (sluice_render_probe(cfg, tag, &r, &err) != SLUICE_OK) {
        set_row(out, "FAIL", CLI_EX_CONFIG, "render: %s", err.text);
        goto out;
    }
    if (account != NULL) { /* the tenant's own account, as its launches */
        char *a = strdup(account);
        if (a == NULL) {
            set_row(out, "FAIL", CLI_EX_SOFTWARE, "out of memory");
            goto out;
        }
        free(r->jobs[0].account);
        r->jobs[0].account = a;
    }
    /* On a site with tenants every staging, the site's probe's too, is made
     * by the tenants' rule: the site directory stays passable (0711). */
    if (staging_create_as(cfg, r, user, tenants || user != NULL, false, true, &dirfd, NULL, &err) !=
        SLUICE_OK) {
        set_row(out, "FAIL", CLI_EX_IOERR, "%s", err.text);
        goto out;
    }
    staged = true;
    if (sluice_client_submit(client, r->jobs, 1, &sub, &call, &err) != SLUICE_OK) {
        set_row(out, "FAIL",
                call.outcome == SLUICE_OUTCOME_REJECTED ? CLI_EX_CONFIG
                                                        : outcome_exit(call.outcome),
                "submit of %s: %s", r->jobs[0].name, err.text);
        goto out;
    }
    id = sub.job_id;
    deadline = mono_s() + (double)timeout_s;
    for (;;) {
        sluice_rest_jobs_clear(&jobs);
        memset(&jobs, 0, sizeof(jobs));
        if (sluice_client_get_job(client, id, &jobs, &call, &err) == SLUICE_OK && jobs.n_jobs > 0) {
            base = jobs.jobs[0].base;
            snprintf(job_user, sizeof(job_user), "%s",
                     jobs.jobs[0].user_name ? jobs.jobs[0].user_name : "");
            exit_code = jobs.jobs[0].has_exit ? jobs.jobs[0].exit_code : 0;
            snprintf(reason, sizeof(reason), "%s",
                     jobs.jobs[0].state_reason && strcmp(jobs.jobs[0].state_reason, "None") != 0
                         ? jobs.jobs[0].state_reason
                         : "");
            if (sluice_job_is_final(base, jobs.jobs[0].flags)) {
                ended = true;
                break;
            }
        } else if (call.outcome == SLUICE_OUTCOME_NOT_FOUND) {
            gone = true; /* done and already purged from the controller */
            break;
        }
        if (mono_s() >= deadline)
            break;
        sleep_s(deadline - mono_s() < 1.0 ? deadline - mono_s() : 1.0);
    }
    if (!ended && !gone) {
        sluice_error_t cerr = SLUICE_ERROR_INIT;
        bool cancelled = sluice_client_cancel(client, id, NULL, &call, &cerr) == SLUICE_OK;
        set_row(out, "FAIL", CLI_EX_UNAVAILABLE,
                "timeout: job %llu still %s%s%s%s after %ld s; %s%s", (unsigned long long)id,
                sluice_job_base_name(base), reason[0] ? " (" : "", reason, reason[0] ? ")" : "",
                timeout_s, cancelled ? "cancelled" : "cancel failed: ", cancelled ? "" : cerr.text);
        goto out;
    }
    if ((text = malloc(REPORT_MAX)) == NULL) {
        set_row(out, "FAIL", CLI_EX_SOFTWARE, "out of memory");
        goto out;
    }
    if (read_file_at(dirfd, SLUICE_PROBE_REPORT, text, REPORT_MAX) < 0) {
        first_line(dirfd, "stderr.log", line, sizeof(line));
        if (ended && base != SLUICE_JOB_COMPLETED)
            set_row(out, "FAIL", CLI_EX_UNAVAILABLE, "job %llu failed: %s (exit %d)%s%s",
                    (unsigned long long)id, sluice_job_base_name(base), exit_code,
                    line[0] ? ": " : "", line);
        else
            set_row(out, "FAIL", CLI_EX_CONFIG,
                    "job %llu ended but wrote no %s in %s: is storage.cluster_root (%s) the "
                    "directory storage.root (%s) is on the cluster?",
                    (unsigned long long)id, SLUICE_PROBE_REPORT, r->staging_cluster,
                    cfg->storage.cluster_root ? cfg->storage.cluster_root : cfg->storage.root,
                    cfg->storage.root);
        goto out;
    }
    parse_report(text, &rep);
    if (!rep.end) {
        set_row(out, "FAIL", CLI_EX_UNAVAILABLE, "job %llu ended %s before its report was complete",
                (unsigned long long)id, ended ? sluice_job_base_name(base) : "(gone)");
        goto out;
    }
    judge(&rep, r, info, out);
    if (user != NULL)
        judge_user(&rep, user, job_user, out);
out:
    if (dirfd >= 0)
        close(dirfd);
    if (staged)
        remove_staging(r);
    free(text);
    sluice_rest_jobs_clear(&jobs);
    sluice_rest_submit_clear(&sub);
    sluice_render_free(r);
}
