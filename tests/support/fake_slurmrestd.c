/* SPDX-License-Identifier: Apache-2.0 */
/* fake_slurmrestd.c - scripted HTTP/1.1 server thread (tests only).
 *
 * Notes:
 * - Bound to 127.0.0.1 only (or a Unix socket): test traffic never leaves
 *   the loopback interface.
 * - One connection is served at a time; a new connection replaces the
 *   current one, which is how a client that dropped a connection behaves.
 * - Requests are parsed just enough for the tests: request line, headers,
 *   Content-Length body (no chunked uploads; curl sends Content-Length).
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fake_slurmrestd.h"

#define MAX_QUEUE 64
#define MAX_RECORDS 256
#define MAX_HEAD 65536

struct fake_server {
    int listen_fd;
    int stop_pipe[2];
    pthread_t thread;
    int started;
    char url[256];
    char sock_path[108];
    pthread_mutex_t lock;
    fake_response_t queue[MAX_QUEUE];
    char *queue_bodies[MAX_QUEUE];
    char *queue_headers[MAX_QUEUE];
    char *queue_types[MAX_QUEUE];
    size_t q_head, q_len;
    fake_request_t records[MAX_RECORDS];
    size_t n_records;
    size_t n_connections;
    fake_hook_fn hook;
    void *hook_arg;
};

static void sleep_ms(int ms)
{
    struct timespec ts;

    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static const char *reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 422:
        return "Unprocessable Entity";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 511:
        return "Network Authentication Required";
    default:
        return "Status";
    }
}

/* Wait until fd is readable; returns 1 readable, 0 stop requested or new
 * connection pending (*new_conn set), -1 error. */
static int wait_readable(struct fake_server *fs, int fd, int *new_conn)
{
    struct pollfd p[3];

    *new_conn = 0;
    for (;;) {
        p[0].fd = fd;
        p[0].events = POLLIN;
        p[1].fd = fs->stop_pipe[0];
        p[1].events = POLLIN;
        p[2].fd = fs->listen_fd;
        p[2].events = POLLIN;
        p[0].revents = p[1].revents = p[2].revents = 0;
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (p[1].revents)
            return 0;
        if (p[0].revents)
            return 1;
        if (p[2].revents) {
            *new_conn = 1;
            return 0;
        }
    }
}

static int pop_response(struct fake_server *fs, fake_response_t *r)
{
    int have = 0;

    pthread_mutex_lock(&fs->lock);
    if (fs->q_len > 0) {
        *r = fs->queue[fs->q_head];
        fs->q_head = (fs->q_head + 1) % MAX_QUEUE;
        fs->q_len--;
        have = 1;
    }
    pthread_mutex_unlock(&fs->lock);
    return have;
}

static const fake_request_t *record(struct fake_server *fs,
                                    const char *head,
                                    size_t head_len,
                                    const char *body,
                                    size_t body_len,
                                    int conn)
{
    fake_request_t *r;
    const char *eol = strstr(head, "\r\n");
    const char *sp1;
    const char *sp2;

    pthread_mutex_lock(&fs->lock);
    if (fs->n_records >= MAX_RECORDS) {
        pthread_mutex_unlock(&fs->lock);
        return NULL;
    }
    r = &fs->records[fs->n_records++];
    memset(r, 0, sizeof(*r));
    r->connection = conn;
    sp1 = strchr(head, ' ');
    sp2 = sp1 != NULL ? strchr(sp1 + 1, ' ') : NULL;
    if (sp1 != NULL && sp2 != NULL && eol != NULL && sp2 < eol) {
        snprintf(r->method, sizeof(r->method), "%.*s", (int)(sp1 - head), head);
        snprintf(r->target, sizeof(r->target), "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
    }
    if (eol != NULL)
        r->headers = strndup(eol + 2, head_len - (size_t)(eol + 2 - head));
    r->body = malloc(body_len + 1);
    if (r->body != NULL) {
        memcpy(r->body, body, body_len);
        r->body[body_len] = '\0';
        r->body_len = body_len;
    }
    pthread_mutex_unlock(&fs->lock);
    return r;
}

static size_t content_length(const char *head)
{
    const char *p = head;

    while ((p = strstr(p, "\r\n")) != NULL) {
        p += 2;
        if (strncasecmp(p, "Content-Length:", 15) == 0)
            return (size_t)strtoul(p + 15, NULL, 10);
    }
    return 0;
}

static int answer(int fd, const fake_response_t *r)
{
    char head[1024];
    size_t body_len = r->body != NULL ? strlen(r->body) : 0;
    size_t reps = r->repeat_body > 0 ? r->repeat_body : 1;
    int status = r->status > 0 ? r->status : 200;
    size_t i;

    if (r->garbage) {
        (void)send_all(fd, "\x01\x02 not http at all\r\n\r\n", 22);
        return -1; /* and close */
    }
    snprintf(head, sizeof(head),
             "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n", status,
             reason(status), r->content_type != NULL ? r->content_type : "application/json",
             body_len * reps, r->close_after ? "Connection: close\r\n" : "",
             r->headers != NULL ? r->headers : "");
    if (send_all(fd, head, strlen(head)) != 0)
        return -1;
    for (i = 0; i < reps && body_len > 0; i++) {
        if (send_all(fd, r->body, body_len) != 0)
            return -1;
    }
    return r->close_after ? -1 : 0;
}

/* Serve requests on one connection until it closes; returns 1 when a new
 * connection is pending, 0 on stop or close. */
static int serve(struct fake_server *fs, int fd, int conn)
{
    char *data = malloc(MAX_HEAD + 1);
    size_t have = 0;
    int new_conn = 0;
    int rc = 0;

    if (data == NULL)
        return 0;
    for (;;) {
        char *end;
        size_t head_len, body_len, total;
        fake_response_t r;
        ssize_t n;

        data[have] = '\0';
        if (have > 0 && (unsigned char)data[0] == 0x16)
            break; /* a TLS ClientHello: this server speaks plain HTTP only */
        end = strstr(data, "\r\n\r\n");
        if (end == NULL || have < (size_t)(end - data) + 4 + content_length(data)) {
            if (have >= MAX_HEAD)
                break;
            if (wait_readable(fs, fd, &new_conn) != 1) {
                rc = new_conn;
                break;
            }
            n = recv(fd, data + have, MAX_HEAD - have, 0);
            if (n <= 0)
                break;
            have += (size_t)n;
            continue;
        }
        head_len = (size_t)(end - data) + 2;
        body_len = content_length(data);
        total = head_len + 2 + body_len;
        {
            const fake_request_t *req =
                record(fs, data, head_len, data + head_len + 2, body_len, conn);
            if (req != NULL && fs->hook != NULL)
                fs->hook(req, fs->hook_arg);
        }
        if (!pop_response(fs, &r)) {
            memset(&r, 0, sizeof(r));
            r.status = 599;
            r.body = "{\"errors\":[{\"error\":\"fake: no scripted response\"}]}";
        }
        if (r.delay_ms > 0)
            sleep_ms(r.delay_ms);
        if (r.close_silently)
            break;
        if (answer(fd, &r) != 0)
            break;
        memmove(data, data + total, have - total);
        have -= total;
    }
    free(data);
    return rc;
}

static void *run(void *arg)
{
    struct fake_server *fs = arg;
    struct pollfd p[2];
    int pending = 0;

    for (;;) {
        int fd;
        if (!pending) {
            p[0].fd = fs->listen_fd;
            p[0].events = POLLIN;
            p[1].fd = fs->stop_pipe[0];
            p[1].events = POLLIN;
            p[0].revents = p[1].revents = 0;
            if (poll(p, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            if (p[1].revents)
                break;
        }
        fd = accept(fs->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&fs->lock);
        fs->n_connections++;
        pthread_mutex_unlock(&fs->lock);
        pending = serve(fs, fd, (int)fs->n_connections);
        close(fd);
    }
    return NULL;
}

static fake_server_t *start(int unix_socket, int port, const fake_response_t *script, size_t n);

fake_server_t *fake_start(int unix_socket)
{
    return start(unix_socket, 0, NULL, 0);
}

fake_server_t *fake_start_port(int port, const fake_response_t *script, size_t n)
{
    return start(0, port, script, n);
}

int fake_free_port(void)
{
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int port = -1;

    if (fd < 0)
        return -1;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
        port = ntohs(sin.sin_port);
    close(fd); /* never listened on: a connect is refused */
    return port;
}

static fake_server_t *start(int unix_socket, int port, const fake_response_t *script, size_t n)
{
    struct fake_server *fs = calloc(1, sizeof(*fs));

    if (fs == NULL)
        return NULL;
    fs->listen_fd = -1;
    fs->stop_pipe[0] = fs->stop_pipe[1] = -1;
    pthread_mutex_init(&fs->lock, NULL);
    if (pipe(fs->stop_pipe) != 0)
        goto fail;
    if (unix_socket) {
        struct sockaddr_un sun;
        memset(&sun, 0, sizeof(sun));
        sun.sun_family = AF_UNIX;
        snprintf(fs->sock_path, sizeof(fs->sock_path), "/tmp/fake-slurmrestd-%ld-%p.sock",
                 (long)getpid(), (void *)fs);
        snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", fs->sock_path);
        unlink(fs->sock_path);
        fs->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fs->listen_fd < 0 || bind(fs->listen_fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
            goto fail;
        snprintf(fs->url, sizeof(fs->url), "unix:%s", fs->sock_path);
    } else {
        struct sockaddr_in sin;
        socklen_t len = sizeof(sin);
        int one = 1;
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sin.sin_port = htons((uint16_t)port);
        fs->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fs->listen_fd < 0)
            goto fail;
        setsockopt(fs->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fs->listen_fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
            getsockname(fs->listen_fd, (struct sockaddr *)&sin, &len) != 0)
            goto fail;
        snprintf(fs->url, sizeof(fs->url), "http://127.0.0.1:%d", ntohs(sin.sin_port));
    }
    if (listen(fs->listen_fd, 16) != 0)
        goto fail;
    for (size_t i = 0; i < n; i++)
        fake_push(fs, &script[i]);
    if (pthread_create(&fs->thread, NULL, run, fs) != 0)
        goto fail;
    fs->started = 1;
    return fs;
fail:
    fake_stop(fs);
    return NULL;
}

void fake_stop(fake_server_t *fs)
{
    size_t i;

    if (fs == NULL)
        return;
    if (fs->started) {
        if (write(fs->stop_pipe[1], "x", 1) < 0) {
            /* the thread may already be gone; join anyway */
        }
        pthread_join(fs->thread, NULL);
    }
    if (fs->listen_fd >= 0)
        close(fs->listen_fd);
    if (fs->sock_path[0] != '\0')
        unlink(fs->sock_path);
    if (fs->stop_pipe[0] >= 0)
        close(fs->stop_pipe[0]);
    if (fs->stop_pipe[1] >= 0)
        close(fs->stop_pipe[1]);
    for (i = 0; i < fs->n_records; i++) {
        free(fs->records[i].headers);
        free(fs->records[i].body);
    }
    for (i = 0; i < MAX_QUEUE; i++) {
        free(fs->queue_bodies[i]);
        free(fs->queue_headers[i]);
        free(fs->queue_types[i]);
    }
    pthread_mutex_destroy(&fs->lock);
    free(fs);
}

const char *fake_url(const fake_server_t *fs)
{
    return fs->url;
}

void fake_push(fake_server_t *fs, const fake_response_t *r)
{
    size_t slot;

    pthread_mutex_lock(&fs->lock);
    if (fs->q_len < MAX_QUEUE) {
        slot = (fs->q_head + fs->q_len) % MAX_QUEUE;
        free(fs->queue_bodies[slot]);
        free(fs->queue_headers[slot]);
        free(fs->queue_types[slot]);
        fs->queue[slot] = *r;
        fs->queue_bodies[slot] = r->body != NULL ? strdup(r->body) : NULL;
        fs->queue_headers[slot] = r->headers != NULL ? strdup(r->headers) : NULL;
        fs->queue[slot].body = fs->queue_bodies[slot];
        fs->queue[slot].headers = fs->queue_headers[slot];
        fs->queue_types[slot] = r->content_type != NULL ? strdup(r->content_type) : NULL;
        fs->queue[slot].content_type = fs->queue_types[slot];
        fs->q_len++;
    }
    pthread_mutex_unlock(&fs->lock);
}

size_t fake_request_count(fake_server_t *fs)
{
    size_t n;

    pthread_mutex_lock(&fs->lock);
    n = fs->n_records;
    pthread_mutex_unlock(&fs->lock);
    return n;
}

size_t fake_connection_count(fake_server_t *fs)
{
    size_t n;

    pthread_mutex_lock(&fs->lock);
    n = fs->n_connections;
    pthread_mutex_unlock(&fs->lock);
    return n;
}

const fake_request_t *fake_request(fake_server_t *fs, size_t i)
{
    const fake_request_t *r = NULL;

    pthread_mutex_lock(&fs->lock);
    if (i < fs->n_records)
        r = &fs->records[i];
    pthread_mutex_unlock(&fs->lock);
    return r;
}

int fake_header(const fake_request_t *r, const char *name, char *out, size_t size)
{
    const char *p = r->headers;
    size_t nlen = strlen(name);

    while (p != NULL && *p != '\0') {
        const char *eol = strstr(p, "\r\n");
        size_t llen = eol != NULL ? (size_t)(eol - p) : strlen(p);
        if (llen > nlen && strncasecmp(p, name, nlen) == 0 && p[nlen] == ':') {
            const char *v = p + nlen + 1;
            while (*v == ' ')
                v++;
            snprintf(out, size, "%.*s", (int)(llen - (size_t)(v - p)), v);
            return 1;
        }
        if (eol == NULL)
            break;
        p = eol + 2;
    }
    return 0;
}

void fake_set_hook(fake_server_t *fs, fake_hook_fn fn, void *arg)
{
    pthread_mutex_lock(&fs->lock);
    fs->hook = fn;
    fs->hook_arg = arg;
    pthread_mutex_unlock(&fs->lock);
}
