/* SPDX-License-Identifier: Apache-2.0 */
/* auth_command.c - run the token command of a SLUICE_AUTH_COMMAND source
 * (rest.jwt_command) and take the token from its standard output.
 *
 * The command is an argv from the site file, run with posix_spawn(): no
 * shell, nothing from a request.  stdin is /dev/null; stdout (the token)
 * and stderr (kept for the error text) are pipes read with poll() until
 * both close and the child is reaped, or the deadline passes: then the
 * child's process group (it is made a group leader) is killed with
 * SIGKILL and reaped.
 *
 * Notes:
 * - The token never reaches an error or a log line: messages name argv[0],
 *   the exit status and the command's stderr (its first line, at most
 *   STDERR_SHOWN bytes, control bytes replaced and any token-shaped word
 *   replaced by "[redacted]").
 * - stdout is wiped before it is freed.
 */
#define _GNU_SOURCE 1 /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sluice/auth.h>

#include "auth.h"

extern char **environ;

#define STDERR_KEPT 4096
#define STDERR_SHOWN 300

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first non-empty line of `text`, printable, token-shaped words
 * replaced, into out (cap bytes). */
static void stderr_summary(const char *text, size_t len, char *out, size_t cap)
{
    size_t i = 0, n = 0;

    out[0] = '\0';
    while (i < len && (text[i] == '\n' || text[i] == '\r' || text[i] == ' ' || text[i] == '\t'))
        i++;
    while (i < len && text[i] != '\n' && n + 1 < cap && n < STDERR_SHOWN) {
        size_t w = i;
        while (w < len && text[w] != '\n' && text[w] != ' ' && text[w] != '\t' && text[w] != '"' &&
               text[w] != '\'' && text[w] != '=')
            w++;
        if (w > i && auth_token_shaped(text + i, w - i)) {
            n += (size_t)snprintf(out + n, cap - n, "[redacted]");
            if (n >= cap)
                n = cap - 1;
            i = w;
            continue;
        }
        out[n++] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? ' ' : text[i];
        out[n] = '\0';
        i++;
    }
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\r'))
        out[--n] = '\0';
}

/* Read what is there from fd into buf (len so far, cap bytes); past cap the
 * bytes are dropped and *over set.  Returns 0 at end of file, 1 otherwise. */
static int drain(int fd, char *buf, size_t *len, size_t cap, int *over)
{
    char tmp[4096];
    ssize_t r = read(fd, tmp, sizeof(tmp));

    if (r < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (r == 0)
        return 0;
    if (*len + (size_t)r > cap) {
        *over = 1;
        r = (ssize_t)(cap - *len);
    }
    memcpy(buf + *len, tmp, (size_t)r);
    *len += (size_t)r;
    wipe(tmp, sizeof(tmp));
    return 1;
}

/* Spawn argv with stdout and stderr on pipes; *pid_out, fds[0] stdout,
 * fds[1] stderr (read ends). */
static sluice_err spawn(const char *const *argv, pid_t *pid_out, int fds[2], sluice_error_t *err)
{
    int out[2] = {-1, -1}, errp[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    sluice_err rc = SLUICE_OK;
    int e;

    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        rc = sluice_errorf(err, SLUICE_EIO, "rest.jwt_command: pipe: %s", strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    /* Nothing else of the service's: its sockets (a listener, slurmrestd
     * connections), the store, staging directories are not the command's,
     * whether or not they were opened close-on-exec. */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    /* Its own process group (killed as a whole on timeout), the default
     * signal dispositions and an empty mask, whatever the caller's are. */
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    e = posix_spawn(pid_out, argv[0], &fa, &at, (char *const *)(uintptr_t)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (e != 0) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "rest.jwt_command: cannot run %s: %s", argv[0],
                           strerror(e));
        goto out;
    }
    fds[0] = out[0];
    fds[1] = errp[0];
    out[0] = errp[0] = -1;
out:
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0)
            close(out[i]);
        if (errp[i] >= 0)
            close(errp[i]);
    }
    return rc;
}

sluice_err
auth_run_command(const char *const *argv, long timeout_ms, char **out, sluice_error_t *err)
{
    char *obuf = NULL;
    char *tok = NULL;
    char ebuf[STDERR_KEPT];
    char shown[STDERR_SHOWN + 16];
    size_t olen = 0, elen = 0;
    int fds[2] = {-1, -1}, over = 0, eover = 0, status = 0, timed_out = 0;
    int64_t deadline;
    pid_t pid = -1;
    sluice_err rc;

    if (argv == NULL || argv[0] == NULL || argv[0][0] != '/')
        return sluice_errorf(err, SLUICE_EINVAL,
                             "rest.jwt_command: argv[0] must be an absolute "
                             "path");
    if (timeout_ms <= 0)
        timeout_ms = SLUICE_AUTH_COMMAND_TIMEOUT_MS;
    if ((obuf = malloc(SLUICE_AUTH_COMMAND_OUTPUT_MAX + 1)) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "rest.jwt_command: out of memory");
    if ((rc = spawn(argv, &pid, fds, err)) != SLUICE_OK)
        goto out;
    deadline = mono_ms() + timeout_ms;
    while (fds[0] >= 0 || fds[1] >= 0) {
        struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
        int64_t left = deadline - mono_ms();
        int n;

        if (left <= 0) {
            timed_out = 1;
            break;
        }
        n = poll(p, 2, (int)(left > 1000 ? 1000 : left));
        if (n < 0 && errno != EINTR) {
            rc = sluice_errorf(err, SLUICE_EIO, "rest.jwt_command: poll: %s", strerror(errno));
            goto out;
        }
        for (int i = 0; n > 0 && i < 2; i++) {
            if (fds[i] < 0 || p[i].revents == 0)
                continue;
            if (!drain(fds[i], i == 0 ? obuf : ebuf, i == 0 ? &olen : &elen,
                       i == 0 ? SLUICE_AUTH_COMMAND_OUTPUT_MAX : sizeof(ebuf),
                       i == 0 ? &over : &eover)) {
                close(fds[i]);
                fds[i] = -1;
            }
        }
    }
    /* Both pipes closed: wait for the exit, within the same deadline. */
    while (!timed_out) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            pid = -1;
            break;
        }
        if (w < 0 && errno != EINTR) {
            rc = sluice_errorf(err, SLUICE_EIO, "rest.jwt_command: waitpid: %s", strerror(errno));
            pid = -1;
            goto out;
        }
        if (mono_ms() >= deadline)
            timed_out = 1;
        else
            usleep(10000);
    }
    stderr_summary(ebuf, elen, shown, sizeof(shown));
    if (timed_out) {
        rc = sluice_errorf(err, SLUICE_EAUTH,
                           "rest.jwt_command: %s did not finish within %ld ms and was killed%s%s",
                           argv[0], timeout_ms, shown[0] ? ": " : "", shown);
        goto out;
    }
    if (WIFSIGNALED(status)) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "rest.jwt_command: %s was killed by signal %d%s%s",
                           argv[0], WTERMSIG(status), shown[0] ? ": " : "", shown);
        goto out;
    }
    if (WEXITSTATUS(status) != 0) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "rest.jwt_command: %s exited with status %d%s%s",
                           argv[0], WEXITSTATUS(status), shown[0] ? ": " : "", shown);
        goto out;
    }
    if (over) {
        rc = sluice_errorf(err, SLUICE_EAUTH,
                           "rest.jwt_command: %s printed more than %d bytes; refused", argv[0],
                           SLUICE_AUTH_COMMAND_OUTPUT_MAX);
        goto out;
    }
    obuf[olen] = '\0';
    if (olen == 0 || strspn(obuf, " \t\r\n") == olen) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "rest.jwt_command: %s printed no token%s%s", argv[0],
                           shown[0] ? ": " : "", shown);
        goto out;
    }
    if (memchr(obuf, '\0', olen) != NULL ||
        sluice_token_parse(obuf, olen, &tok, NULL) != SLUICE_OK ||
        auth_decode(tok, NULL, NULL, NULL) != SLUICE_OK) {
        rc = sluice_errorf(err, SLUICE_EAUTH,
                           "rest.jwt_command: the output of %s is not a JWT (raw token or "
                           "SLURM_JWT=<token>)",
                           argv[0]);
        goto out;
    }
    *out = tok;
    tok = NULL;
out:
    if (pid > 0) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    wipe(ebuf, sizeof(ebuf));
    wipe_str_free(tok);
    wipe_free(obuf, SLUICE_AUTH_COMMAND_OUTPUT_MAX + 1);
    return rc;
}
