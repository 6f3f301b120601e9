/* SPDX-License-Identifier: Apache-2.0 */
/* http_client.c - see http_client.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"
#include "raw_socket.h"

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_head(
    int fd, const char *method, const char *path, const char *extra, size_t body_len, int with_len)
{
    char head[8192];
    int n;

    if (with_len)
        n = snprintf(head, sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%sContent-Length: "
                     "%zu\r\n\r\n",
                     method, path, extra ? extra : "", body_len);
    else
        n = snprintf(head, sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s\r\n", method,
                     path, extra ? extra : "");
    if (n < 0 || (size_t)n >= sizeof(head))
        return -1;
    return send_all(fd, head, (size_t)n);
}

/* Append from fd until EOF or timeout. */
static int read_into(int fd, char **buf, size_t *len, size_t *cap, int timeout_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, timeout_ms);
    ssize_t n;

    if (r <= 0)
        return -1;
    if (*len + 65536 + 1 > *cap) {
        size_t nc = (*cap ? *cap * 2 : 131072) + 65536;
        char *nb = realloc(*buf, nc);
        if (nb == NULL)
            return -1;
        *buf = nb;
        *cap = nc;
    }
    n = recv(fd, *buf + *len, 65536, 0);
    if (n <= 0)
        return 0;
    *len += (size_t)n;
    (*buf)[*len] = '\0';
    return 1;
}

static int has_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);

    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

static int dechunk(const char *in, size_t n, char **out, size_t *out_len)
{
    char *o = malloc(n + 1);
    size_t k = 0;
    const char *p = in, *end = in + n;

    if (o == NULL)
        return -1;
    while (p < end) {
        char *e;
        unsigned long sz = strtoul(p, &e, 16);
        const char *crlf = strstr(p, "\r\n");
        if (crlf == NULL || e == p)
            break;
        p = crlf + 2;
        if (sz == 0)
            break;
        if ((size_t)(end - p) < sz)
            sz = (unsigned long)(end - p);
        memcpy(o + k, p, sz);
        k += sz;
        p += sz + 2;
    }
    o[k] = '\0';
    *out = o;
    *out_len = k;
    return 0;
}

static int request_on(int fd,
                      const char *method,
                      const char *path,
                      const char *extra,
                      const char *body,
                      size_t body_len,
                      hc_response_t *out)
{
    int r;
    char *buf = NULL, *sep;
    size_t len = 0, cap = 0;

    memset(out, 0, sizeof(*out));
    if (fd < 0)
        return -1;
    if (send_head(fd, method, path, extra, body_len, body != NULL) != 0 ||
        (body && send_all(fd, body, body_len) != 0)) {
        close(fd);
        return -1;
    }
    while ((r = read_into(fd, &buf, &len, &cap, 10000)) > 0)
        ;
    close(fd);
    if (buf == NULL || (sep = strstr(buf, "\r\n\r\n")) == NULL ||
        sscanf(buf, "HTTP/1.%*d %d", &out->status) != 1) {
        free(buf);
        return -1;
    }
    out->headers = strndup(buf, (size_t)(sep - buf) + 2);
    sep += 4;
    if (has_ci(out->headers, "transfer-encoding: chunked"))
        dechunk(sep, len - (size_t)(sep - buf), &out->body, &out->body_len);
    else {
        out->body_len = len - (size_t)(sep - buf);
        out->body = strndup(sep, out->body_len);
    }
    free(buf);
    return out->body && out->headers ? 0 : -1;
}

int hc_request(uint16_t port,
               const char *method,
               const char *path,
               const char *extra,
               const char *body,
               size_t body_len,
               hc_response_t *out)
{
    return request_on(raw_connect(port), method, path, extra, body, body_len, out);
}

int hc_request_unix(const char *socket_path,
                    const char *method,
                    const char *path,
                    const char *extra,
                    const char *body,
                    size_t body_len,
                    hc_response_t *out)
{
    struct sockaddr_un a;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", socket_path);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        fd = -1;
    }
    return request_on(fd, method, path, extra, body, body_len, out);
}

int hc_stream_until(uint16_t port,
                    const char *path,
                    const char *extra,
                    const char *needle,
                    int timeout_ms,
                    char **out)
{
    int fd = raw_connect(port), found = 0;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    struct timespec t0, t1;

    *out = NULL;
    if (fd < 0)
        return -1;
    if (send_head(fd, "GET", path, extra, 0, 0) != 0) {
        close(fd);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        long el;
        if (buf && strstr(buf, needle)) {
            found = 1;
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        el = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        if (el >= timeout_ms || read_into(fd, &buf, &len, &cap, (int)(timeout_ms - el)) <= 0)
            break;
    }
    close(fd);
    *out = buf ? buf : strdup("");
    return found ? 0 : -1;
}

int hc_open_get(uint16_t port, const char *path, const char *extra)
{
    int fd = raw_connect(port);

    if (fd >= 0 && send_head(fd, "GET", path, extra, 0, 0) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

const char *hc_header(const hc_response_t *r, const char *name, char *buf, size_t size)
{
    const char *p = r->headers;
    size_t nl = strlen(name);

    while (p && (p = strstr(p, "\r\n")) != NULL) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1, *e;
            while (*v == ' ')
                v++;
            e = strstr(v, "\r\n");
            snprintf(buf, size, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
            return buf;
        }
    }
    return NULL;
}

void hc_response_clear(hc_response_t *r)
{
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof(*r));
}
