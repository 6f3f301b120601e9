/* SPDX-License-Identifier: Apache-2.0 */
/* test_staging_tenant.c - a tenant's staging belongs to the tenant's
 * Slurm user: the launch and attempt directories (0700) and secrets.env
 * (0600) are the tenant's, the site directory is the service's (0711),
 * another uid cannot enter a tenant's directory, and a process that
 * cannot chown refuses a site with tenants, naming why.
 *
 * The chown needs root: under CI=true a run as another user fails (it
 * must not pass without checking anything); elsewhere it is skipped. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/ops.h>
#include <sluice/store.h>

#include "ci_guard.h"
#include "config_case.h"

#define OTHER_UID 65533 /* no tenant's: another workload */

static char tmp[128], root[200], state[200];

static void setup(void)
{
    strcpy(tmp, "/tmp/sluice-stagetn-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    cr_assert_eq(chmod(tmp, 0755), 0);
    snprintf(root, sizeof(root), "%s/root", tmp);
    snprintf(state, sizeof(state), "%s/state", tmp);
    cr_assert_eq(mkdir(root, 0755), 0);
    cr_assert_eq(mkdir(state, 0700), 0);
}

static void teardown(void)
{
    char cmd[200];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", tmp);
}

TestSuite(staging_tenant, .init = setup, .fini = teardown, .timeout = 30);

/* A site whose tenant ta runs as `user`, rest.user being `site_user`. */
static sluice_config_t *site(const char *user, const char *site_user)
{
    char yaml[1024];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    snprintf(yaml, sizeof(yaml),
             "rest:\n  url: https://rest.example:6820\n  user: %s\n  jwt_file: /run/jwt\n"
             "storage:\n  root: %s\njob_launcher:\n  sandbox: none\n"
             "tenants:\n  - name: ta\n    callers: [ca]\n    slurm_user: %s\n"
             "    identity: proxy\n",
             site_user, root, user);
    cr_assert_eq(config_case_load(yaml, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    return cfg;
}

static json_t *render_of(const char *sha8)
{
    char dir[400];

    snprintf(dir, sizeof(dir), "%s/default/%s/attempt-1", root, sha8);
    return json_pack("{s:{s:s}, s:s, s:s, s:i}", "staging", "service", dir, "script",
                     "#!/bin/sh\ntrue\n", "sha8", sha8, "attempt", 1);
}

static sluice_err prepare(sluice_staging_ops_t *ops, const char *id, const char *sha8)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_secret_t s = {.name = "TOKEN", .value = "v-secret"};
    json_t *r = render_of(sha8);
    sluice_err rc = ops->prepare(ops->arg, id, 1, r, &s, 1, &err);

    json_decref(r);
    if (rc != SLUICE_OK)
        cr_log_info("prepare %s: %s", id, err.text);
    return rc;
}

static void stat_of(const char *rel, struct stat *st)
{
    char p[500];

    snprintf(p, sizeof(p), "%s/%s", root, rel);
    cr_assert_eq(lstat(p, st), 0, "%s: %s", p, strerror(errno));
}

/* In a child running as `uid` (no capabilities): 0 when `path` opens as
 * a directory, else errno. */
static int open_as(uid_t uid, const char *rel)
{
    char p[500];
    pid_t pid;
    int status = 0;

    snprintf(p, sizeof(p), "%s/%s", root, rel);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd;
        if (setgid(uid) != 0 || setuid(uid) != 0)
            _exit(120);
        fd = open(p, O_RDONLY | O_DIRECTORY);
        _exit(fd >= 0 ? 0 : errno);
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

Test(staging_tenant, the_tenant_owns_its_staging_and_another_uid_cannot_enter)
{
    struct passwd *pw = getpwnam("nobody");
    sluice_config_t *cfg;
    sluice_store_t *store = NULL;
    sluice_staging_ops_t ops;
    sluice_error_t err = SLUICE_ERROR_INIT;
    struct stat st;

    if (geteuid() != 0)
        ci_guard_missing("root", "giving staging to a tenant's uid needs chown");
    cr_assert_not_null(pw, "a local user nobody");
    cfg = site("nobody", "root");
    cr_assert_eq(sluice_store_open(&store, state, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_staging_ops_new(cfg, store, &ops, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_staging_ops_use_tenants(&ops, cfg, &err), SLUICE_OK, "%s", err.text);

    cr_assert_eq(prepare(&ops, "ta~s1", "aaaa1111"), SLUICE_OK);
    stat_of("default", &st);
    cr_assert_eq(st.st_uid, 0, "the site directory is the service's");
    cr_assert_eq(st.st_mode & 07777, 0711);
    stat_of("default/aaaa1111", &st);
    cr_assert_eq(st.st_uid, pw->pw_uid, "the launch directory is the tenant's");
    cr_assert_eq(st.st_mode & 07777, 0700);
    stat_of("default/aaaa1111/attempt-1", &st);
    cr_assert_eq(st.st_uid, pw->pw_uid);
    cr_assert_eq(st.st_mode & 07777, 0700);
    stat_of("default/aaaa1111/attempt-1/exit", &st);
    cr_assert_eq(st.st_uid, pw->pw_uid);
    stat_of("default/aaaa1111/attempt-1/secrets.env", &st);
    cr_assert_eq(st.st_uid, pw->pw_uid, "secrets.env is the tenant's");
    cr_assert_eq(st.st_mode & 07777, 0600);
    stat_of("default/aaaa1111/attempt-1/job.sh", &st);
    cr_assert_eq(st.st_uid, pw->pw_uid);

    cr_assert_eq(open_as(pw->pw_uid, "default/aaaa1111/attempt-1"), 0, "the tenant enters");
    cr_assert_eq(open_as(OTHER_UID, "default/aaaa1111"), EACCES, "another uid does not");
    cr_assert_eq(open_as(OTHER_UID, "default"), EACCES, "nor lists the site directory");

    /* the default tenant's launch: rest.user's (root here) */
    cr_assert_eq(prepare(&ops, "s2", "bbbb2222"), SLUICE_OK);
    stat_of("default/bbbb2222", &st);
    cr_assert_eq(st.st_uid, 0);
    /* a tenant the site does not have: nothing is made */
    cr_assert_neq(prepare(&ops, "zz~s3", "cccc3333"), SLUICE_OK);
    {
        char p[400];
        snprintf(p, sizeof(p), "%s/default/cccc3333", root);
        cr_assert_neq(access(p, F_OK), 0, "nothing made for an unknown tenant");
    }
    sluice_staging_ops_free(&ops);
    sluice_store_close(store);
    sluice_config_free(cfg);
}

/* A site directory made before tenants (the job user's, 0700) would keep
 * every tenant's job out: refused at the start, naming the fix. */
Test(staging_tenant, a_site_directory_tenants_cannot_pass_is_refused)
{
    sluice_config_t *cfg;
    sluice_store_t *store = NULL;
    sluice_staging_ops_t ops;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char p[400];

    if (geteuid() != 0)
        ci_guard_missing("root", "giving staging to a tenant's uid needs chown");
    cfg = site("nobody", "root");
    snprintf(p, sizeof(p), "%s/default", root);
    cr_assert_eq(mkdir(p, 0700), 0);
    cr_assert_eq(sluice_store_open(&store, state, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_staging_ops_new(cfg, store, &ops, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_staging_ops_use_tenants(&ops, cfg, &err), SLUICE_ECONFIG);
    cr_assert_not_null(strstr(err.text, "chmod 0711"), "%s", err.text);
    cr_assert_eq(chmod(p, 0711), 0);
    cr_assert_eq(sluice_staging_ops_use_tenants(&ops, cfg, &err), SLUICE_OK, "%s", err.text);
    /* a storage root every user may write (no sticky bit) */
    cr_assert_eq(chmod(root, 0777), 0);
    cr_assert_eq(sluice_staging_ops_use_tenants(&ops, cfg, &err), SLUICE_ECONFIG);
    cr_assert_not_null(strstr(err.text, "sticky"), "%s", err.text);
    cr_assert_eq(chmod(root, 01777), 0);
    cr_assert_eq(sluice_staging_ops_use_tenants(&ops, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(chmod(root, 0755), 0);
    sluice_staging_ops_free(&ops);
    sluice_store_close(store);
    sluice_config_free(cfg);
}

/* A tenant user unknown on this host: the prepare fails, no directory is
 * left the service's. */
Test(staging_tenant, an_unknown_tenant_user_fails_the_prepare)
{
    sluice_config_t *cfg;
    sluice_store_t *store = NULL;
    sluice_staging_ops_t ops;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char p[400];

    if (geteuid() != 0)
        ci_guard_missing("root", "giving staging to a tenant's uid needs chown");
    cfg = site("no-such-user-x", "root");
    cr_assert_eq(sluice_store_open(&store, state, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_staging_ops_new(cfg, store, &ops, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_staging_ops_use_tenants(&ops, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_neq(prepare(&ops, "ta~u1", "dddd4444"), SLUICE_OK);
    snprintf(p, sizeof(p), "%s/default/dddd4444", root);
    cr_assert_neq(access(p, F_OK), 0, "no service-owned launch directory");
    sluice_staging_ops_free(&ops);
    sluice_store_close(store);
    sluice_config_free(cfg);
}

/* Without the privilege to chown, a site with tenants is refused (at
 * startup: the supervisor makes the staging table); a site without is
 * not.  Run in a child that dropped root. */
Test(staging_tenant, without_chown_a_site_with_tenants_is_refused)
{
    sluice_config_t *cfg = site("nobody", "root");
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    pid_t pid;
    int status = 0;

    cr_assert_eq(chmod(state, 0777), 0);
    cr_assert_eq(chmod(tmp, 0777), 0);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        sluice_staging_ops_t ops;
        if (geteuid() == 0 && (setgid(OTHER_UID) != 0 || setuid(OTHER_UID) != 0))
            _exit(10);
        if (sluice_store_open(&store, state, &err) != SLUICE_OK ||
            sluice_staging_ops_new(cfg, store, &ops, &err) != SLUICE_OK)
            _exit(11);
        if (sluice_staging_ops_use_tenants(&ops, cfg, &err) != SLUICE_EPERM)
            _exit(12);
        if (strstr(err.text, "CAP_CHOWN") == NULL || strstr(err.text, "tenant") == NULL)
            _exit(13);
        _exit(0);
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status));
    cr_assert_eq(WEXITSTATUS(status), 0, "child step %d failed", WEXITSTATUS(status));
    sluice_config_free(cfg);
}
