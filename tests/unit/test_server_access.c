/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_access.c - the MHD-free access part of `sluice serve`
 * (src/serve/server_access.c) on its own: listen addresses, the tokens file and
 * bearer tokens, the Unix socket peer, TLS PEM files, socket modes. */
#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <criterion/criterion.h>

#include "base/wipe.h"
#include "serve/server_access.h"
#include "serve/server_util.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sluice-access-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(server_access, .init = setup, .fini = teardown, .timeout = 10);

static const char *write_file(const char *name, const char *text, mode_t mode)
{
    static char path[128];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    cr_assert_not_null(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, mode), 0);
    return path;
}

Test(server_access, listen_addresses_are_loopback_unless_tls)
{
    struct sockaddr_storage ss;
    sluice_error_t err = SLUICE_ERROR_INIT;
    int v6 = -1;

    cr_assert_eq(server_parse_listen("localhost:8080", 0, &ss, &v6, &err), SLUICE_OK);
    cr_assert_eq(v6, 0);
    cr_assert_eq(ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr), 0x7f000001u);
    cr_assert_eq(ntohs(((struct sockaddr_in *)&ss)->sin_port), 8080);
    cr_assert_eq(server_parse_listen("[::1]:9", 0, &ss, &v6, &err), SLUICE_OK);
    cr_assert_eq(v6, 1);
    cr_assert_eq(server_parse_listen("10.1.2.3:80", 0, &ss, &v6, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "10.1.2.3 is not a loopback address") != NULL, "%s", err.text);
    cr_assert_eq(server_parse_listen("10.1.2.3:80", 1, &ss, &v6, &err), SLUICE_OK);
    cr_assert_eq(server_parse_listen("127.0.0.1:70000", 0, &ss, &v6, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "bad port") != NULL, "%s", err.text);
    cr_assert_eq(server_parse_listen("127.0.0.1", 0, &ss, &v6, &err), SLUICE_EINVAL);
    cr_assert_eq(server_parse_listen("[::1]8", 0, &ss, &v6, &err), SLUICE_EINVAL);
    cr_assert_eq(server_parse_listen("example.org:80", 1, &ss, &v6, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "not a numeric address") != NULL, "%s", err.text);
}

/* server_authenticate with the value's C string length as its length. */
static const token_t *auth(sluice_server_t *s, const char *h)
{
    return server_authenticate(s, h, h ? strlen(h) : 0);
}

Test(server_access, bearer_tokens_match_whole_and_exactly)
{
    sluice_server_t *s = calloc(1, sizeof(*s));
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *path = write_file("tokens",
                                  "# callers\n"
                                  "alice 0123456789abcdef admin\n"
                                  "\n"
                                  "bob fedcba9876543210-bob\n",
                                  0600);
    const token_t *t;

    cr_assert_not_null(s);
    cr_assert_eq(server_load_tokens(s, path, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(s->n_tokens, 2);
    cr_assert_not_null(t = auth(s, "Bearer 0123456789abcdef"));
    cr_assert_str_eq(t->name, "alice");
    cr_assert_eq(t->admin, 1);
    cr_assert_not_null(t = auth(s, "Bearer fedcba9876543210-bob"));
    cr_assert_str_eq(t->name, "bob");
    cr_assert_eq(t->admin, 0);
    cr_assert_null(auth(s, "Bearer 0123456789abcde"));   /* a prefix */
    cr_assert_null(auth(s, "Bearer 0123456789abcdefX")); /* longer */
    cr_assert_null(auth(s, "Bearer 0123456789abcdeF"));  /* one byte off */
    cr_assert_null(auth(s, "0123456789abcdef"));         /* no scheme */
    cr_assert_null(auth(s, "Bearer "));
    cr_assert_null(auth(s, NULL));
    /* A NUL byte after the token (the value as sent is longer than its
     * text): refused. */
    cr_assert_null(server_authenticate(s, "Bearer 0123456789abcdef", 24));
    cr_assert_null(server_authenticate(s, "Bearer 0123456789abcdef", 28));
    server_access_free(s);
    free(s);
}

Test(server_access, tokens_file_errors_name_the_line_never_the_token)
{
    static const struct {
        const char *text;
        mode_t mode;
        sluice_err code;
        const char *says;
    } cases[] = {
        {"alice 0123456789abcdef\n", 0644, SLUICE_ECONFIG, "readable by group or others"},
        {"alice short-secret\n", 0600, SLUICE_EINVAL, "line 1: expected"},
        {"# c\nalice 0123456789abcdef owner\n", 0600, SLUICE_EINVAL, "line 2: role"},
        {"unix:root 0123456789abcdef\n", 0600, SLUICE_EINVAL, "line 1: caller"},
        {"alice 0123456789abcdef admin extra\n", 0600, SLUICE_EINVAL, "line 1: expected"},
        {"# nobody\n", 0600, SLUICE_EINVAL, "names no caller"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sluice_server_t *s = calloc(1, sizeof(*s));
        sluice_error_t err = SLUICE_ERROR_INIT;
        const char *path = write_file("tokens", cases[i].text, cases[i].mode);

        cr_assert_not_null(s);
        cr_assert_eq(server_load_tokens(s, path, &err), cases[i].code, "case %zu: %s", i, err.text);
        cr_assert(strstr(err.text, cases[i].says) != NULL, "case %zu: %s", i, err.text);
        cr_assert(strstr(err.text, "0123456789abcdef") == NULL, "case %zu: %s", i, err.text);
        cr_assert(strstr(err.text, "short-secret") == NULL, "case %zu: %s", i, err.text);
        server_access_free(s);
        free(s);
    }
}

/* The parser the reader and the fuzz target share (fuzz_tokens.c): a
 * buffer, with CRLF lines, a last line without its newline, a NUL byte and
 * a line over the limit. */
Test(server_access, the_tokens_text_parses_without_a_file)
{
    static const char text[] =
        "# c\r\nalice 0123456789abcdef admin\r\n\r\nbob fedcba9876543210-bob";
    static const char nul[] = "alice 0123456789abcdef\0admin\n";
    token_t t[MAX_TOKENS];
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *long_line;
    size_t n = 0;

    memset(t, 0, sizeof(t));
    cr_assert_eq(server_parse_tokens("x", text, strlen(text), t, &n, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(t[0].name, "alice");
    cr_assert_str_eq(t[0].token, "0123456789abcdef");
    cr_assert_eq(t[0].admin, 1);
    cr_assert_str_eq(t[1].token, "fedcba9876543210-bob");
    cr_assert_eq(t[1].admin, 0);
    server_tokens_free(t, n);
    n = 0;
    cr_assert_eq(server_parse_tokens("x", nul, sizeof(nul) - 1, t, &n, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "line 1: a NUL byte") != NULL, "%s", err.text);
    cr_assert_eq(n, 0);
    long_line = malloc(2048);
    cr_assert_not_null(long_line);
    memset(long_line, 'a', 2047);
    long_line[2047] = '\0';
    memcpy(long_line, "bob ", 4);
    cr_assert_eq(server_parse_tokens("x", long_line, 2047, t, &n, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "line 1 is too long") != NULL, "%s", err.text);
    free(long_line);
    cr_assert_eq(server_parse_tokens("x", "", 0, t, &n, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "tokens file x names no caller") != NULL, "%s", err.text);
}

Test(server_access, unix_peer_is_named_and_own_user_is_admin)
{
    struct passwd *pw = getpwuid(geteuid());
    caller_t who;
    char want[SLUICE_FSM_NAME_MAX];
    int sv[2];

    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    memset(&who, 0, sizeof(who));
    cr_assert_eq(server_peer_caller(sv[0], &who), 0);
    if (pw != NULL)
        snprintf(want, sizeof(want), "unix:%s", pw->pw_name);
    else
        snprintf(want, sizeof(want), "unix:uid-%u", (unsigned)geteuid());
    cr_assert_str_eq(who.name, want);
    cr_assert_eq(who.admin, 1);
    close(sv[0]);
    close(sv[1]);
    cr_assert_eq(server_peer_caller(-1, &who), -1);
}

Test(server_access, pem_files_are_checked_and_keys_kept_private)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *pem = NULL;
    size_t len = 0;
    const char *p;

    p = write_file("cert.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                   0644);
    cr_assert_eq(server_read_pem(p, 0, &pem, &len, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(len, strlen(pem));
    cr_assert(strstr(pem, "BEGIN CERTIFICATE") != NULL);
    free(pem);
    pem = NULL;
    p = write_file("key.pem",
                   "-----BEGIN PRIVATE KEY-----\nSECRETKEYBYTES\n-----END PRIVATE KEY-----\n",
                   0644);
    cr_assert_eq(server_read_pem(p, 1, &pem, &len, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "readable by others") != NULL, "%s", err.text);
    cr_assert_eq(chmod(p, 0600), 0);
    cr_assert_eq(server_read_pem(p, 1, &pem, &len, &err), SLUICE_OK, "%s", err.text);
    wipe(pem, len);
    cr_assert_eq(pem[0], '\0');
    free(pem);
    pem = NULL;
    p = write_file("enc.pem",
                   "-----BEGIN ENCRYPTED PRIVATE KEY-----\nSECRETKEYBYTES\n"
                   "-----END ENCRYPTED PRIVATE KEY-----\n",
                   0600);
    cr_assert_eq(server_read_pem(p, 1, &pem, &len, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "is encrypted") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "SECRETKEYBYTES") == NULL, "%s", err.text);
    p = write_file("notkey.pem", "hello\n", 0600);
    cr_assert_eq(server_read_pem(p, 1, &pem, &len, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "no PEM private key") != NULL, "%s", err.text);
    cr_assert_eq(server_read_pem(p, 0, &pem, &len, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "no PEM certificate") != NULL, "%s", err.text);
    cr_assert_null(pem);
}

/* The TLS key follows the tokens file's rule: owned by the service's user or
 * root (another user could swap a key in); a certificate may be anyone's. */
Test(server_access, a_tls_key_owned_by_another_user_is_refused)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *pem = NULL;
    size_t len = 0;
    const char *p;

    if (geteuid() != 0)
        cr_skip_test("needs root to give a file away");
    p = write_file("theirs.pem",
                   "-----BEGIN PRIVATE KEY-----\nSECRETKEYBYTES\n-----END PRIVATE KEY-----\n",
                   0600);
    cr_assert_eq(chown(p, 12345, 12345), 0, "%s", strerror(errno));
    cr_assert_eq(server_read_pem(p, 1, &pem, &len, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "owned by uid 12345") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "SECRETKEYBYTES") == NULL, "%s", err.text);
    cr_assert_null(pem);
    p = write_file("theirs-cert.pem",
                   "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", 0644);
    cr_assert_eq(chown(p, 12345, 12345), 0, "%s", strerror(errno));
    cr_assert_eq(server_read_pem(p, 0, &pem, &len, &err), SLUICE_OK, "%s", err.text);
    free(pem);
}

Test(server_access, unix_socket_mode_and_stale_files)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[128];
    struct stat st;
    int fd;

    snprintf(path, sizeof(path), "%s/api.sock", dir);
    cr_assert_eq(server_unix_listen(path, 0666, NULL, &err), -1);
    cr_assert(strstr(err.text, "accessible by others") != NULL, "%s", err.text);
    cr_assert_eq(server_unix_listen(path, 0460, NULL, &err), -1);
    cr_assert(strstr(err.text, "owner needs read and write") != NULL, "%s", err.text);
    cr_assert_geq(fd = server_unix_listen(path, 0660, NULL, &err), 0, "%s", err.text);
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISSOCK(st.st_mode));
    cr_assert_eq(st.st_mode & 0777, 0660);
    close(fd);
    /* a stale socket is replaced; a regular file is not */
    cr_assert_geq(fd = server_unix_listen(path, 0600, NULL, &err), 0, "%s", err.text);
    close(fd);
    write_file("plain", "x", 0600);
    snprintf(path, sizeof(path), "%s/plain", dir);
    cr_assert_eq(server_unix_listen(path, 0600, NULL, &err), -1);
    cr_assert(strstr(err.text, "is not a socket") != NULL, "%s", err.text);
}

/* A burst of connections waits in the kernel's accept queue, however slow
 * the accepts: with a queue of 128, the 130th SYN was dropped and its
 * client retried only a second later (200 event watchers opened at once
 * took 1 s).  300 connects to a listener that accepts nothing must all
 * complete their handshake; a dropped SYN would leave some pending for
 * the kernel's 1 s retry, well past the wait here. */
Test(server_access, a_burst_of_connections_is_queued_not_dropped)
{
    enum { N = 300 };
    struct sockaddr_storage ss;
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    sluice_error_t err = SLUICE_ERROR_INIT;
    int v6 = -1, lfd, fds[N], done = 0;
    long somax = 0;
    FILE *f = fopen("/proc/sys/net/core/somaxconn", "r");

    if (f != NULL) {
        if (fscanf(f, "%ld", &somax) != 1)
            somax = 0;
        fclose(f);
    }
    if (somax < N + 1)
        cr_skip_test("net.core.somaxconn is %ld: the kernel caps the queue below %d", somax, N);
    cr_assert_eq(server_parse_listen("127.0.0.1:0", 0, &ss, &v6, &err), SLUICE_OK);
    lfd = server_tcp_listen(&ss, v6, "127.0.0.1:0", &err);
    cr_assert(lfd >= 0, "%s", err.text);
    cr_assert_eq(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
    for (int i = 0; i < N; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        cr_assert(fds[i] >= 0);
        (void)connect(fds[i], (struct sockaddr *)&a, sizeof(a));
    }
    for (int round = 0; round < 50 && done < N; round++) {
        struct pollfd pf[N];
        for (int i = 0; i < N; i++) {
            pf[i].fd = fds[i];
            pf[i].events = POLLOUT;
            pf[i].revents = 0;
        }
        (void)poll(pf, N, 10);
        done = 0;
        for (int i = 0; i < N; i++) {
            int e = -1;
            socklen_t el = sizeof(e);
            if ((pf[i].revents & POLLOUT) &&
                getsockopt(fds[i], SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0)
                done++;
        }
    }
    for (int i = 0; i < N; i++)
        close(fds[i]);
    close(lfd);
    cr_assert_eq(done, N, "%d of %d connections completed their handshake in 500 ms", done, N);
}
