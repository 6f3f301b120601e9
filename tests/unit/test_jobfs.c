/* SPDX-License-Identifier: Apache-2.0 */
/* test_jobfs.c - the job-owned tree rule (src/base/jobfs.h) against what a
 * workload can put in its own staging: a symlink to a file only the
 * service may read, a symlinked directory on the way, a FIFO, a hard link,
 * a file of another owner, "..", and a tree deeper than the walk.  Each
 * case is refused with a reason and nothing blocks; a removal never
 * follows a link out of the tree. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/jobfs.h"
#include "sluice_assert.h"

static char tmp[128], tree[200], outside[200];
static int tree_fd = -1;

static void put(const char *dir, const char *name, const char *text)
{
    char path[600];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    strcpy(tmp, "/tmp/sluice-jobfs-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(tree, sizeof(tree), "%s/tree", tmp);
    snprintf(outside, sizeof(outside), "%s/outside", tmp);
    cr_assert_eq(mkdir(tree, 0700), 0);
    cr_assert_eq(mkdir(outside, 0700), 0);
    put(outside, "secret", "SECRET-TOKEN\n");
    put(tree, "plain.log", "hello\n");
    tree_fd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cr_assert_geq(tree_fd, 0);
}

static void teardown(void)
{
    char cmd[256];

    if (tree_fd >= 0)
        close(tree_fd);
    snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", tmp, tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

TestSuite(jobfs, .init = setup, .fini = teardown, .timeout = 30);

static sluice_err try_read(const char *rel, char *buf, size_t cap, sluice_error_t *err)
{
    return jobfs_read_small(tree_fd, rel, buf, cap, NULL, NULL, err);
}

Test(jobfs, a_plain_file_of_the_tree_reads)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char buf[64];

    cr_assert_sluice_ok(try_read("plain.log", buf, sizeof(buf), &err), &err);
    cr_expect_str_eq(buf, "hello\n");
}

Test(jobfs, a_symlink_in_place_of_a_file_is_refused_never_followed)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char target[300], link[300], buf[64] = "";

    snprintf(target, sizeof(target), "%s/secret", outside);
    snprintf(link, sizeof(link), "%s/stdout.log", tree);
    cr_assert_eq(symlink(target, link), 0);
    cr_expect_eq(try_read("stdout.log", buf, sizeof(buf), &err), SLUICE_EPERM);
    cr_expect(strstr(err.text, "symbolic link") != NULL, "%s", err.text);
    cr_expect(strstr(err.text, "stdout.log") != NULL, "%s", err.text);
    cr_expect(strstr(buf, "SECRET") == NULL);
}

Test(jobfs, a_symlinked_directory_on_the_way_is_refused)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char link[300], buf[64] = "";
    int fd = -1;

    snprintf(link, sizeof(link), "%s/exit", tree);
    cr_assert_eq(symlink(outside, link), 0);
    cr_expect_eq(try_read("exit/secret", buf, sizeof(buf), &err), SLUICE_EPERM);
    cr_expect(strstr(buf, "SECRET") == NULL);
    cr_expect_eq(jobfs_open_dir(tree_fd, "exit", &fd, &err), SLUICE_EPERM);
    cr_expect_eq(fd, -1);
}

Test(jobfs, a_fifo_answers_at_once_and_is_refused)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[300], buf[64];

    snprintf(path, sizeof(path), "%s/stdout.log", tree);
    cr_assert_eq(mkfifo(path, 0600), 0);
    /* Without O_NONBLOCK this open would wait for a writer forever (the
     * suite's timeout would end it). */
    cr_expect_eq(try_read("stdout.log", buf, sizeof(buf), &err), SLUICE_EPERM);
    cr_expect(strstr(err.text, "FIFO") != NULL, "%s", err.text);
}

Test(jobfs, a_hard_link_is_refused)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char from[300], to[300], buf[64] = "";

    snprintf(from, sizeof(from), "%s/secret", outside);
    snprintf(to, sizeof(to), "%s/stdout.log", tree);
    cr_assert_eq(link(from, to), 0);
    cr_expect_eq(try_read("stdout.log", buf, sizeof(buf), &err), SLUICE_EPERM);
    cr_expect(strstr(err.text, "hard link") != NULL, "%s", err.text);
    cr_expect(strstr(buf, "SECRET") == NULL);
}

Test(jobfs, a_file_of_another_owner_is_refused)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[300], buf[64];

    if (geteuid() != 0)
        cr_skip_test("needs root to give a file another owner");
    put(tree, "foreign", "x\n");
    snprintf(path, sizeof(path), "%s/foreign", tree);
    cr_assert_eq(chown(path, 54321, 54321), 0);
    cr_expect_eq(try_read("foreign", buf, sizeof(buf), &err), SLUICE_EPERM);
    cr_expect(strstr(err.text, "uid 54321") != NULL, "%s", err.text);
    /* the directory's owner is the expected one: a tree handed to a job
     * user, and that user's file in it, reads */
    cr_assert_eq(fchown(tree_fd, 54321, 54321), 0);
    cr_expect_eq(try_read("foreign", buf, sizeof(buf), &err), SLUICE_OK, "%s", err.text);
}

Test(jobfs, dot_dot_and_empty_components_are_refused)
{
    static const char *const bad[] = {
        "../outside/secret", "a/../../x", "./plain.log", "a//b", "/etc/passwd",
        "plain.log/",        "",          ".."};
    sluice_error_t err = SLUICE_ERROR_INIT;
    char buf[64];
    int fd;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(try_read(bad[i], buf, sizeof(buf), &err), SLUICE_EPERM, "'%s': %s", bad[i],
                     err.text);
        cr_expect_neq(jobfs_open_dir(tree_fd, bad[i][0] ? bad[i] : "..", &fd, &err), SLUICE_OK,
                      "'%s'", bad[i]);
    }
}

Test(jobfs, a_long_file_is_read_in_part_and_says_so)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char buf[8];
    size_t len = 0;
    bool more = false;

    put(tree, "long", "0123456789abcdef");
    cr_assert_sluice_ok(jobfs_read_small(tree_fd, "long", buf, sizeof(buf), &len, &more, &err),
                        &err);
    cr_expect_eq(len, 7);
    cr_expect_str_eq(buf, "0123456");
    cr_expect(more);
    cr_assert_sluice_ok(jobfs_read_small(tree_fd, "plain.log", buf, sizeof(buf), &len, &more, &err),
                        &err);
    cr_expect_not(more);
}

Test(jobfs, removal_never_follows_a_link_out_of_the_tree)
{
    char path[300], link[300];
    struct stat st;
    int parent = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    cr_assert_geq(parent, 0);
    snprintf(path, sizeof(path), "%s/sub", tree);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(link, sizeof(link), "%s/sub/escape", tree);
    cr_assert_eq(symlink(outside, link), 0);
    snprintf(link, sizeof(link), "%s/sub/file-link", tree);
    snprintf(path, sizeof(path), "%s/secret", outside);
    cr_assert_eq(symlink(path, link), 0);
    snprintf(path, sizeof(path), "%s/fifo", tree);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_expect_eq(jobfs_remove_tree(parent, "tree"), 0, "%s", strerror(errno));
    cr_expect_neq(stat(tree, &st), 0, "the tree is gone");
    snprintf(path, sizeof(path), "%s/secret", outside);
    cr_expect_eq(stat(path, &st), 0, "the file behind the links is still there");
    cr_expect_eq(jobfs_remove_tree(parent, "tree"), 0, "a tree already gone is success");
    close(parent);
}

Test(jobfs, removal_stops_at_the_depth_limit)
{
    char path[4096];
    size_t len;
    int parent = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    cr_assert_geq(parent, 0);
    len = (size_t)snprintf(path, sizeof(path), "%s", tree);
    for (int i = 0; i < JOBFS_MAX_DEPTH + 3; i++) {
        len += (size_t)snprintf(path + len, sizeof(path) - len, "/d");
        cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
    }
    errno = 0;
    cr_expect_eq(jobfs_remove_tree(parent, "tree"), -1);
    cr_expect_eq(errno, ELOOP);
    close(parent);
}
