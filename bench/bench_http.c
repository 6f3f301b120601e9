/* SPDX-License-Identifier: Apache-2.0 */
/* bench_http.c - see bench_http.h. */
#include "bench_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define ANSWER_MAX (256 * 1024)

struct bench_conn {
    int fd;
    uint16_t port;
    const char *token; /* borrowed */
    size_t len;
    char buf[ANSWER_MAX];
};

bench_conn_t *bench_conn_new(uint16_t port, const char *token)
{
    bench_conn_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    c->fd = -1;
    c->port = port;
    c->token = token;
    return c;
}

static void conn_close(bench_conn_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->len = 0;
}

void bench_conn_free(bench_conn_t *c)
{
    if (c == NULL)
        return;
    conn_close(c);
    free(c);
}

static int conn_open(bench_conn_t *c)
{
    struct sockaddr_in a;
    int one = 1;

    if (c->fd >= 0)
        return 0;
    c->len = 0;
    if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(c->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        conn_close(c);
        return -1;
    }
    return 0;
}

/* Case-insensitive strstr. */
static const char *find_ci(const char *hay, const char *needle)
{
    size_t nl = strlen(needle);

    for (; *hay; hay++)
        if (strncasecmp(hay, needle, nl) == 0)
            return hay;
    return NULL;
}

static int send_all(bench_conn_t *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read one answer; its status, or -1. */
static int read_answer(bench_conn_t *c, char **answer)
{
    int status = -1;

    c->len = 0;
    for (;;) {
        char *end;
        ssize_t r;

        c->buf[c->len] = '\0';
        if ((end = strstr(c->buf, "\r\n\r\n")) != NULL) {
            const char *cl = find_ci(c->buf, "\r\ncontent-length:");
            size_t head = (size_t)(end - c->buf) + 4, want;

            if (cl == NULL || cl > end || sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1)
                return -1;
            want = head + strtoul(cl + 17, NULL, 10);
            if (want >= sizeof(c->buf))
                return -1;
            if (c->len >= want) {
                if (answer && (*answer = strndup(c->buf + head, want - head)) == NULL)
                    return -1;
                if (find_ci(c->buf, "\r\nconnection: close") != NULL)
                    conn_close(c);
                c->len = 0;
                return status;
            }
        }
        if (c->len + 1 >= sizeof(c->buf))
            return -1;
        r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
        if (r <= 0)
            return -1;
        c->len += (size_t)r;
    }
}

int bench_conn_request(
    bench_conn_t *c, const char *method, const char *path, const char *body, char **answer)
{
    char head[1024];
    char *msg = NULL;
    size_t blen = body ? strlen(body) : 0;
    int n, status = -1;

    if (answer)
        *answer = NULL;
    n = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%s", method, path,
                 c->token ? "Authorization: Bearer " : "", c->token ? c->token : "",
                 c->token ? "\r\n" : "");
    if (n < 0 || (size_t)n >= sizeof(head))
        return -1;
    if (body)
        n += snprintf(head + n, sizeof(head) - (size_t)n,
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
    if ((size_t)n + 3 > sizeof(head))
        return -1;
    memcpy(head + n, "\r\n", 3);
    n += 2;
    /* header and body in one write, so that they leave in one segment */
    if ((msg = malloc((size_t)n + blen)) == NULL)
        return -1;
    memcpy(msg, head, (size_t)n);
    if (blen)
        memcpy(msg + n, body, blen);
    if (conn_open(c) != 0 || send_all(c, msg, (size_t)n + blen) != 0 ||
        (status = read_answer(c, answer)) < 0) {
        conn_close(c);
        status = -1;
    }
    free(msg);
    return status;
}

pid_t bench_serve_start(const char *bin,
                        const char *config,
                        const char *dir,
                        const char *tokens,
                        const char *log,
                        const char *const *extra,
                        uint16_t *port)
{
    const char *argv[64];
    size_t k = 0;
    double deadline = bench_now() + 30.0;
    pid_t pid;

    argv[k++] = bin;
    argv[k++] = "serve";
    argv[k++] = "--listen";
    argv[k++] = "127.0.0.1:0";
    argv[k++] = "--tokens";
    argv[k++] = tokens;
    argv[k++] = "--config";
    argv[k++] = config;
    argv[k++] = "--state-dir";
    argv[k++] = dir;
    for (size_t i = 0; extra && extra[i] && k + 1 < sizeof(argv) / sizeof(argv[0]); i++)
        argv[k++] = extra[i];
    argv[k] = NULL;
    if ((pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        /* the child's own copies: execv takes char *const[] */
        char *av[64];
        FILE *f = freopen(log, "w", stderr);

        (void)f;
        for (size_t i = 0; i <= k; i++)
            if ((av[i] = argv[i] ? strdup(argv[i]) : NULL) == NULL && argv[i] != NULL)
                _exit(127);
        execv(bin, av);
        _exit(127);
    }
    while (bench_now() < deadline) {
        FILE *f = fopen(log, "r");
        char line[512];
        unsigned p = 0;

        while (f && fgets(line, sizeof(line), f)) {
            const char *q = strstr(line, "(port ");
            if (q && sscanf(q, "(port %u)", &p) == 1)
                break;
        }
        if (f)
            fclose(f);
        if (p > 0) {
            *port = (uint16_t)p;
            return pid;
        }
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return -1;
        usleep(100000);
    }
    bench_serve_stop(pid);
    return -1;
}

void bench_serve_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}
