/* SPDX-License-Identifier: Apache-2.0 */
/* test_staging_ops.c - the staging hooks on a real directory tree
 * (sluice_staging_ops_new): the archive keeps every attempt's logs,
 * peers.env holds names and addresses in variables the dependent's script
 * reads, a node without an address is never written, and a later attempt
 * gets the peers.env its predecessor had.  Launches are accepted through
 * the accept pipeline into a temporary store (flower-gpu golden site). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/accept.h>
#include <sluice/ops.h>
#include <sluice/sluice.h>

#include "fake_cluster.h"
#include "render_case.h"
#include "site/config_model.h"
#include "sluice_assert.h"

static char tmp[128];
static int64_t clock_ms = 1700000000000;
static fake_cluster_t fc;
static sluice_config_t *cfg;
static sluice_store_t *store;
static sluice_launcher_t *launcher;
static sluice_staging_ops_t ops;

static void setup(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_launcher_opts_t lo = SLUICE_LAUNCHER_OPTS_INIT;
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char site[512], root[300], state[200];
    const char *sets[1];

    strcpy(tmp, "/tmp/sluice-stgops-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(site, sizeof(site), "%s/tests/golden/render/flower-gpu/site.yaml", src ? src : ".");
    snprintf(root, sizeof(root), "storage.root=%s/storage", tmp);
    snprintf(state, sizeof(state), "%s/state", tmp);
    cr_assert_eq(mkdir(root + strlen("storage.root="), 0700), 0);
    sets[0] = root;
    co.path = site;
    co.overrides = sets;
    co.n_overrides = 1;
    cr_assert_sluice_ok(sluice_config_load(&co, &cfg, &err), &err);
    cr_assert_sluice_ok(sluice_store_open(&store, state, &err), &err);
    fake_cluster_init(&fc, &clock_ms, "sluice");
    lo.store = store;
    lo.cluster = fake_cluster_ops(&fc);
    lo.user = "sluice";
    lo.site = "site-1";
    cr_assert_sluice_ok(sluice_launcher_new(&launcher, &lo, &err), &err);
    cr_assert_sluice_ok(sluice_staging_ops_new(cfg, store, &ops, &err), &err);
}

static void teardown(void)
{
    char cmd[256];

    sluice_staging_ops_free(&ops);
    sluice_launcher_free(launcher);
    sluice_store_close(store);
    sluice_config_free(cfg);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

TestSuite(staging_ops, .init = setup, .fini = teardown, .timeout = 60);

/* Accept `json` through the accept pipeline; returns its staging directory
 * (the service's view) in `dir`. */
static void accept_json(const char *json, char *dir, size_t cap)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = SLUICE_ACCEPT_OPTS_INIT;
    sluice_accept_t *a = NULL;
    const sluice_render_t *r;

    o.getenv_fn = render_case_getenv;
    cr_assert_sluice_ok(sluice_accept(&a, NULL, NULL, launcher, cfg, json, strlen(json), &o, &err),
                        &err);
    r = sluice_accept_render(a);
    snprintf(dir, cap, "%s", r->staging_service);
    sluice_accept_free(a);
}

static void accept_pools(const char *id, const char *pools, const char *dep, char *dir, size_t cap)
{
    char json[2048];

    snprintf(json, sizeof(json),
             "{\"launch_id\": \"%s\", \"site\": \"site-1\", \"profile\": \"none\", "
             "\"time_limit\": 10, \"partition\": \"cpu\", \"command\": \"/bin/true\"%s%s%s, "
             "\"pools\": [%s]}",
             id, dep ? ", \"depends_on\": {\"launch_id\": \"" : "", dep ? dep : "",
             dep ? "\", \"condition\": \"after\"}" : "", pools);
    accept_json(json, dir, cap);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[600];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *path)
{
    return render_case_slurp(path, NULL);
}

#define POOL1 "{\"name\": \"main\", \"cpus_per_node\": 1, \"mem_per_node_mib\": 64}"

/* The store's row of a log (its status into *info) and its kept bytes
 * (NUL-terminated into buf). */
static void stored(const char *id,
                   const char *stream,
                   int attempt,
                   sluice_store_log_info_t *info,
                   char *buf,
                   size_t cap)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t n = 0;

    cr_assert_sluice_ok(sluice_store_get_log(store, id, stream, attempt, info, &err), &err);
    buf[0] = '\0';
    if (info->status == SLUICE_STORE_LOG_STORED)
        cr_assert_sluice_ok(sluice_store_read_log(store, id, stream, info->attempt, info->omitted,
                                                  buf, cap - 1, &n, &err),
                            &err);
    buf[n] = '\0';
}

/* A launch that needed attempt 2 keeps attempt 1's stdout and stderr: in
 * the store, one row per attempt and stream, and on this host
 * artifacts/<id>/ holds the final attempt's, attempt-1/ the first's. */
Test(staging_ops, archive_keeps_every_attempts_logs)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char dir[512], art[512], path[700], launch_dir[512];
    char *text, buf[256];
    struct stat st;
    sluice_store_log_info_t info;

    accept_pools("twice", POOL1, NULL, dir, sizeof(dir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "twice", 1, NULL, NULL, 0, &err), &err);
    write_text(dir, "stdout.log", "attempt one out\n");
    write_text(dir, "stderr.log", "attempt one err\n");
    cr_assert_sluice_ok(ops.prepare(ops.arg, "twice", 2, NULL, NULL, 0, &err), &err);
    write_text(dir, "stdout.log", "attempt two out\n");
    write_text(dir, "stderr.log", "attempt two err\n");
    snprintf(art, sizeof(art), "%s/artifacts-twice", tmp);
    cr_assert_sluice_ok(ops.archive(ops.arg, "twice", 2, art, &err), &err);

    snprintf(path, sizeof(path), "%s/stdout.log", art);
    cr_assert_str_eq(text = slurp(path), "attempt two out\n");
    free(text);
    snprintf(path, sizeof(path), "%s/stderr.log", art);
    cr_assert_str_eq(text = slurp(path), "attempt two err\n");
    free(text);
    snprintf(path, sizeof(path), "%s/attempt-1/stdout.log", art);
    text = slurp(path);
    cr_assert_not_null(text, "attempt 1's stdout was not archived (%s)", path);
    cr_assert_str_eq(text, "attempt one out\n");
    free(text);
    snprintf(path, sizeof(path), "%s/attempt-1/stderr.log", art);
    cr_assert_str_eq(text = slurp(path), "attempt one err\n");
    free(text);
    snprintf(path, sizeof(path), "%s/attempt-2", art);
    cr_assert_neq(stat(path, &st), 0, "the final attempt is not repeated in attempt-2/");
    /* and the staging of every attempt is gone */
    snprintf(launch_dir, sizeof(launch_dir), "%s", dir);
    *strrchr(launch_dir, '/') = '\0';
    cr_assert_neq(stat(launch_dir, &st), 0, "%s removed", launch_dir);
    /* the store: the newest attempt first, every attempt by number */
    stored("twice", "stdout", -1, &info, buf, sizeof(buf));
    cr_expect_eq(info.attempt, 2);
    cr_expect_str_eq(buf, "attempt two out\n");
    stored("twice", "stderr", 2, &info, buf, sizeof(buf));
    cr_expect_str_eq(buf, "attempt two err\n");
    stored("twice", "stdout", 1, &info, buf, sizeof(buf));
    cr_expect_str_eq(buf, "attempt one out\n");
    cr_expect_eq(info.size, 16);
    cr_expect_eq(info.omitted, 0);
    stored("twice", "stderr", 1, &info, buf, sizeof(buf));
    cr_expect_str_eq(buf, "attempt one err\n");
    /* an archive tried again finds no staging and keeps what it stored */
    cr_assert_sluice_ok(ops.archive(ops.arg, "twice", 2, art, &err), &err);
    stored("twice", "stdout", -1, &info, buf, sizeof(buf));
    cr_expect_eq(info.status, SLUICE_STORE_LOG_STORED);
    cr_expect_str_eq(buf, "attempt two out\n");
}

/* Without an artifact directory (the launcher gives none with PostgreSQL:
 * a state directory per replica) the store's copy is the only one. */
Test(staging_ops, archive_without_an_artifact_dir_keeps_the_logs_in_the_store_only)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_log_info_t info;
    char dir[512], buf[64], launch_dir[512];
    struct stat st;

    accept_pools("nocopy", POOL1, NULL, dir, sizeof(dir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "nocopy", 1, NULL, NULL, 0, &err), &err);
    write_text(dir, "stdout.log", "only in the store\n");
    cr_assert_sluice_ok(ops.archive(ops.arg, "nocopy", 1, NULL, &err), &err);
    stored("nocopy", "stdout", -1, &info, buf, sizeof(buf));
    cr_expect_str_eq(buf, "only in the store\n");
    snprintf(launch_dir, sizeof(launch_dir), "%s", dir);
    *strrchr(launch_dir, '/') = '\0';
    cr_expect_neq(stat(launch_dir, &st), 0, "%s removed", launch_dir);
}

/* A log longer than store.log_max_bytes: the store keeps its last bytes
 * and says how many were cut; this host's copy is whole. */
Test(staging_ops, archive_keeps_the_tail_of_a_long_log_in_the_store)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_log_info_t info;
    char dir[512], art[512], path[700], *line, buf[8192];
    FILE *f;
    struct stat st;

    cfg->store.log_max_bytes = 4096;
    accept_pools("long", POOL1, NULL, dir, sizeof(dir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "long", 1, NULL, NULL, 0, &err), &err);
    snprintf(path, sizeof(path), "%s/stdout.log", dir);
    cr_assert_not_null(f = fopen(path, "w"));
    for (int i = 0; i < 1000; i++)
        fprintf(f, "line %04d of the job's output\n", i); /* 30 bytes a line */
    fclose(f);
    snprintf(art, sizeof(art), "%s/artifacts-long", tmp);
    cr_assert_sluice_ok(ops.archive(ops.arg, "long", 1, art, &err), &err);
    stored("long", "stdout", -1, &info, buf, sizeof(buf));
    cr_expect_eq(info.size, 30000);
    cr_expect_eq(info.omitted, 30000 - 4096);
    cr_expect_eq(strlen(buf), 4096);
    line = strstr(buf, "line 0999 of the job's output\n");
    cr_expect(line != NULL && line[30] == '\0', "the last line is kept: %s", buf + 4000);
    stored("long", "stderr", -1, &info, buf, sizeof(buf));
    cr_expect_eq(info.status, SLUICE_STORE_LOG_MISSING, "the job wrote no stderr.log");
    snprintf(path, sizeof(path), "%s/stdout.log", art);
    cr_expect(stat(path, &st) == 0 && st.st_size == 30000, "this host's copy is whole");
}

static void peers_two_components(sluice_peers_t *p, sluice_peer_component_t comp[2])
{
    static const sluice_peer_node_t sn[] = {{"tb1", "10.1.0.1"}};
    static const sluice_peer_node_t se[] = {{"tb2", "10.1.0.2"}, {"tb3", "10.1.0.3"}};

    comp[0].nodes = sn;
    comp[0].n_nodes = 1;
    comp[1].nodes = se;
    comp[1].n_nodes = 2;
    memset(p, 0, sizeof(*p));
    p->launch_id = "partner";
    p->job_id = 4242;
    p->components = comp;
    p->n_components = 2;
}

#define PARTNER_POOLS                                                                              \
    "{\"name\": \"supernode\", \"cpus_per_node\": 1, \"mem_per_node_mib\": 64}, "                  \
    "{\"name\": \"super-exec\", \"nodes\": 2, \"cpus_per_node\": 1, \"mem_per_node_mib\": 64}"

/* peers.env: the partner's launch and job, the first component's first
 * node (address and name) and every node, then the same per pool of the
 * partner; the dependent's script sources it with `set -u`. */
Test(staging_ops, peers_env_holds_names_and_addresses_per_pool)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_peers_t p;
    sluice_peer_component_t comp[2];
    char pdir[512], ddir[512], path[700], cmd[1024], *text;
    FILE *sh;
    char out[512] = "";

    accept_pools("partner", PARTNER_POOLS, NULL, pdir, sizeof(pdir));
    accept_pools("dependent", POOL1, "partner", ddir, sizeof(ddir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "dependent", 1, NULL, NULL, 0, &err), &err);
    peers_two_components(&p, comp);
    cr_assert_sluice_ok(ops.write_peers(ops.arg, "dependent", 1, &p, &err), &err);
    snprintf(path, sizeof(path), "%s/peers.env", ddir);
    text = slurp(path);
    cr_assert_not_null(text);
    cr_assert_str_eq(text,
                     "# written by sluice when the partner launch ran: its job, and the names\n"
                     "# and addresses (NodeAddr) of its nodes (docs/rendering.md, peers.env)\n"
                     "SLUICE_PEER_LAUNCH_ID='partner'\n"
                     "SLUICE_PEER_JOB_ID=4242\n"
                     "SLUICE_PEER_HOST='10.1.0.1'\n"
                     "SLUICE_PEER_NODE='tb1'\n"
                     "SLUICE_PEER_NODES='tb1'\n"
                     "SLUICE_PEER_ADDRS='10.1.0.1'\n"
                     "SLUICE_PEER_SUPERNODE_HOST='10.1.0.1'\n"
                     "SLUICE_PEER_SUPERNODE_NODE='tb1'\n"
                     "SLUICE_PEER_SUPERNODE_NODES='tb1'\n"
                     "SLUICE_PEER_SUPERNODE_ADDRS='10.1.0.1'\n"
                     "SLUICE_PEER_SUPER_EXEC_HOST='10.1.0.2'\n"
                     "SLUICE_PEER_SUPER_EXEC_NODE='tb2'\n"
                     "SLUICE_PEER_SUPER_EXEC_NODES='tb2 tb3'\n"
                     "SLUICE_PEER_SUPER_EXEC_ADDRS='10.1.0.2 10.1.0.3'\n");
    free(text);
    /* what the rendered peers block does with it */
    snprintf(cmd, sizeof(cmd),
             "bash -c 'set -eu; . \"$0\"; printf \"%%s|%%s|%%s\" \"$SLUICE_PEER_HOST\" "
             "\"$SLUICE_PEER_SUPER_EXEC_ADDRS\" \"$SLUICE_PEER_LAUNCH_ID\"' '%s'",
             path);
    sh = popen(cmd, "r");
    cr_assert_not_null(sh);
    cr_assert_not_null(fgets(out, sizeof(out), sh));
    cr_assert_eq(pclose(sh), 0);
    cr_assert_str_eq(out, "10.1.0.1|10.1.0.2 10.1.0.3|partner");
}

/* A node without an address is never written (nor a name in its place):
 * the hook fails and leaves no peers.env. */
Test(staging_ops, peers_env_refuses_a_node_without_an_address)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_peers_t p;
    sluice_peer_component_t comp[2];
    static const sluice_peer_node_t bad[] = {{"tb2", "10.1.0.2"}, {"tb3", ""}};
    char pdir[512], ddir[512], path[700];
    struct stat st;

    accept_pools("partner", PARTNER_POOLS, NULL, pdir, sizeof(pdir));
    accept_pools("dependent", POOL1, "partner", ddir, sizeof(ddir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "dependent", 1, NULL, NULL, 0, &err), &err);
    peers_two_components(&p, comp);
    comp[1].nodes = bad;
    cr_assert_eq(ops.write_peers(ops.arg, "dependent", 1, &p, &err), SLUICE_EINVAL);
    snprintf(path, sizeof(path), "%s/peers.env", ddir);
    cr_assert_neq(stat(path, &st), 0, "no peers.env");
}

/* A later attempt of the dependent (after a confirmed absence) starts with
 * the peers.env of the attempt it superseded: the partner was handed on
 * once, and the new attempt waits for the same file. */
Test(staging_ops, a_new_attempt_keeps_peers_env)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_peers_t p;
    sluice_peer_component_t comp[2];
    char pdir[512], ddir[512], path[700], *a, *b;

    accept_pools("partner", PARTNER_POOLS, NULL, pdir, sizeof(pdir));
    accept_pools("dependent", POOL1, "partner", ddir, sizeof(ddir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "dependent", 1, NULL, NULL, 0, &err), &err);
    peers_two_components(&p, comp);
    cr_assert_sluice_ok(ops.write_peers(ops.arg, "dependent", 1, &p, &err), &err);
    snprintf(path, sizeof(path), "%s/peers.env", ddir);
    a = slurp(path);
    cr_assert_sluice_ok(ops.prepare(ops.arg, "dependent", 2, NULL, NULL, 0, &err), &err);
    b = slurp(path);
    cr_assert_not_null(b, "attempt 2 has peers.env");
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
}

/* ---- a workload that attacks its own staging (issue 27) ---------------- */

#define POOLS_AB                                                                                   \
    "{\"name\": \"a\", \"cpus_per_node\": 1, \"mem_per_node_mib\": 64}, "                          \
    "{\"name\": \"b\", \"cpus_per_node\": 1, \"mem_per_node_mib\": 64}"

/* The exits of launch `id` (pools a and b), by pool name. */
static size_t read_exits(const char *id, sluice_pool_exit_t out[4])
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t n = 0;

    cr_assert_sluice_ok(ops.read_pool_exits(ops.arg, id, 1, out, 4, &n, &err), &err);
    return n;
}

static const sluice_pool_exit_t *exit_of(const sluice_pool_exit_t *pe, size_t n, const char *pool)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(pe[i].name, pool) == 0)
            return &pe[i];
    cr_assert_fail("no exit read for pool %s", pool);
    return NULL;
}

/* What a workload writes into exit/<pool> is input: a status 0-255 is
 * taken, anything else is the pool's failure with its status unknown and
 * the text (printable, cut) kept for the reason; never an exit code out of
 * range (on main at 1ccc315, 999 became exit_code 999 and the launcher
 * refused the event every cycle). */
Test(staging_ops, an_exit_file_without_a_status_is_a_failure_of_unknown_status)
{
    static const struct {
        const char *text, *raw;
        bool unknown;
        int exit_code, signal;
    } cases[] = {
        {"999\n", "999", true, 0, 0},
        {"-1\n", "-1", true, 0, 0},
        {"256\n", "256", true, 0, 0},
        {"3 extra\n", "3 extra", true, 0, 0},
        {"\x1b[31mred\x01\n", "?[31mred?", true, 0, 0},
        {"12345678901234567890123456789\n", "12345678901234567890...", true, 0, 0},
        {"", "", true, 0, 0},
        {"7\n", "", false, 7, 0},
        {"0", "", false, 0, 0},
        {"255\n", "", false, 255, 0},
        {"137\n", "", false, 0, 9},
    };
    char dir[512], exitdir[600];
    sluice_error_t err = SLUICE_ERROR_INIT;

    accept_pools("garbage", POOLS_AB, NULL, dir, sizeof(dir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "garbage", 1, NULL, NULL, 0, &err), &err);
    snprintf(exitdir, sizeof(exitdir), "%s/exit", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sluice_pool_exit_t pe[4];
        const sluice_pool_exit_t *a;
        size_t n;

        write_text(exitdir, "a", cases[i].text);
        write_text(exitdir, "b", "0\n");
        n = read_exits("garbage", pe);
        cr_assert_eq(n, 2, "case %zu", i);
        a = exit_of(pe, n, "a");
        cr_expect_eq(a->unknown, cases[i].unknown, "case %zu", i);
        cr_expect_eq(a->exit_code, cases[i].exit_code, "case %zu", i);
        cr_expect_eq(a->signal, cases[i].signal, "case %zu", i);
        cr_expect_str_eq(a->raw, cases[i].raw, "case %zu", i);
        cr_expect_not(exit_of(pe, n, "b")->unknown);
    }
}

/* A symlink to a file the service can read, or a FIFO, in place of an exit
 * file: never followed, never waited on (the suite's timeout would end a
 * blocked open), and the pool's status is unknown. */
Test(staging_ops, an_exit_file_swapped_for_a_symlink_or_fifo_is_unknown)
{
    char dir[512], path[700], secret[600];
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_pool_exit_t pe[4];
    size_t n;

    accept_pools("swapped", POOLS_AB, NULL, dir, sizeof(dir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "swapped", 1, NULL, NULL, 0, &err), &err);
    write_text(tmp, "secret", "42\n");
    snprintf(secret, sizeof(secret), "%s/secret", tmp);
    snprintf(path, sizeof(path), "%s/exit/a", dir);
    cr_assert_eq(symlink(secret, path), 0);
    snprintf(path, sizeof(path), "%s/exit/b", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    snprintf(path, sizeof(path), "%s/exit/.first", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    n = read_exits("swapped", pe);
    cr_assert_eq(n, 2);
    cr_expect(exit_of(pe, n, "a")->unknown);
    cr_expect_eq(exit_of(pe, n, "a")->exit_code, 0, "42 was read through the symlink");
    cr_expect_str_eq(exit_of(pe, n, "a")->raw, "(not a file)");
    cr_expect(exit_of(pe, n, "b")->unknown);
    cr_expect_not(exit_of(pe, n, "a")->first);
}

/* The archive copies a log only when it is the job's own regular file: a
 * symlink to another file is not copied (the artifact does not exist, and
 * the store's row says the log was refused, so the log route answers 410
 * with the reason), a FIFO does not block, and the removal of the staging
 * tree never follows a link out of it. */
Test(staging_ops, archive_neither_follows_nor_waits_on_what_the_job_planted)
{
    char dir[512], art[512], path[700], secret[600], outside[600], launch_dir[512], buf[64];
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_log_info_t info;
    struct stat st;

    accept_pools("planted", POOL1, NULL, dir, sizeof(dir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "planted", 1, NULL, NULL, 0, &err), &err);
    write_text(tmp, "secret", "SECRET-TOKEN\n");
    snprintf(secret, sizeof(secret), "%s/secret", tmp);
    snprintf(path, sizeof(path), "%s/stdout.log", dir);
    cr_assert_eq(symlink(secret, path), 0);
    snprintf(path, sizeof(path), "%s/stderr.log", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    /* a directory link out of the tree, with a file behind it */
    snprintf(outside, sizeof(outside), "%s/outside", tmp);
    cr_assert_eq(mkdir(outside, 0700), 0);
    write_text(outside, "keep", "keep\n");
    snprintf(path, sizeof(path), "%s/escape", dir);
    cr_assert_eq(symlink(outside, path), 0);

    snprintf(art, sizeof(art), "%s/artifacts-planted", tmp);
    cr_assert_sluice_ok(ops.archive(ops.arg, "planted", 1, art, &err), &err);
    snprintf(path, sizeof(path), "%s/stdout.log", art);
    cr_expect_neq(lstat(path, &st), 0, "a symlinked log is not archived");
    snprintf(path, sizeof(path), "%s/stderr.log", art);
    cr_expect_neq(lstat(path, &st), 0, "a FIFO log is not archived");
    snprintf(launch_dir, sizeof(launch_dir), "%s", dir);
    *strrchr(launch_dir, '/') = '\0';
    cr_expect_neq(stat(launch_dir, &st), 0, "%s removed", launch_dir);
    snprintf(path, sizeof(path), "%s/keep", outside);
    cr_expect_eq(stat(path, &st), 0, "the file behind the link is kept");
    cr_expect_eq(stat(secret, &st), 0, "the symlink's target is kept");
    stored("planted", "stdout", -1, &info, buf, sizeof(buf));
    cr_expect_eq(info.status, SLUICE_STORE_LOG_REFUSED);
    cr_expect(strstr(info.note, "symbolic link") != NULL, "%s", info.note);
    stored("planted", "stderr", -1, &info, buf, sizeof(buf));
    cr_expect_eq(info.status, SLUICE_STORE_LOG_REFUSED);
    cr_expect(strstr(info.note, "not a regular file") != NULL, "%s", info.note);
}

/* The attempt directory swapped for a symlink to another directory: the
 * hooks refuse it instead of reading (exit files) or writing (peers.env)
 * through it. */
Test(staging_ops, a_symlinked_attempt_directory_is_refused)
{
    char dir[512], moved[600], outside[600];
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_pool_exit_t pe[4];
    sluice_peers_t p;
    sluice_peer_component_t comp[2];
    size_t n = 9;

    accept_pools("partner", PARTNER_POOLS, NULL, dir, sizeof(dir));
    accept_pools("linked", POOLS_AB, "partner", dir, sizeof(dir));
    cr_assert_sluice_ok(ops.prepare(ops.arg, "linked", 1, NULL, NULL, 0, &err), &err);
    snprintf(outside, sizeof(outside), "%s/outside", tmp);
    cr_assert_eq(mkdir(outside, 0700), 0);
    cr_assert_eq(mkdir(strcat(strcpy(moved, outside), "/exit"), 0700), 0);
    write_text(moved, "a", "0\n");
    snprintf(moved, sizeof(moved), "%s.moved", dir);
    cr_assert_eq(rename(dir, moved), 0);
    cr_assert_eq(symlink(outside, dir), 0);
    cr_expect_eq(ops.read_pool_exits(ops.arg, "linked", 1, pe, 4, &n, &err), SLUICE_EPERM);
    cr_expect_eq(n, 0);
    peers_two_components(&p, comp);
    cr_expect_eq(ops.write_peers(ops.arg, "linked", 1, &p, &err), SLUICE_EPERM);
    snprintf(moved, sizeof(moved), "%s/peers.env", outside);
    cr_expect_neq(access(moved, F_OK), 0, "nothing written through the link");
}
