/* SPDX-License-Identifier: Apache-2.0 */
/* raw_socket.c - plain TCP to the server under test, for what an HTTP
 * client will not send (trickled heads, NUL bytes, half requests).  Only
 * loopback. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "raw_socket.h"

double raw_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void raw_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int raw_connect(uint16_t port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Send everything; -1 once the peer closed (EPIPE/ECONNRESET). */
int raw_send(int fd, const char *p, size_t n)
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

/* Read what arrives within timeout_ms until EOF: returns the bytes read
 * (NUL-terminated, caller frees) and sets *closed when EOF/RST was seen. */
char *raw_read(int fd, int timeout_ms, int *closed)
{
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap + 1);
    double end = raw_now_s() + timeout_ms / 1000.0;

    *closed = 0;
    cr_assert_not_null(buf);
    for (;;) {
        int left = (int)((end - raw_now_s()) * 1000);
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t n;

        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        if (len == cap) {
            char *nb = realloc(buf, (cap *= 2) + 1);
            cr_assert_not_null(nb);
            buf = nb;
        }
        n = recv(fd, buf + len, cap - len, 0);
        if (n <= 0) {
            *closed = 1;
            break;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}
