/* SPDX-License-Identifier: Apache-2.0 */
/* raw_socket.h - plain TCP to a server under test on 127.0.0.1 (see
 * raw_socket.c). */
#ifndef SLUICE_TEST_RAW_SOCKET_H
#define SLUICE_TEST_RAW_SOCKET_H

#include <stddef.h>
#include <stdint.h>

/* Seconds on the monotonic clock. */
double raw_now_s(void);
void raw_sleep_ms(int ms);
/* A connected socket to 127.0.0.1:port, or -1. */
int raw_connect(uint16_t port);
/* Send everything; -1 once the peer closed (EPIPE/ECONNRESET). */
int raw_send(int fd, const char *p, size_t n);
/* What arrives within timeout_ms or until EOF (NUL-terminated, caller
 * frees); *closed says whether EOF or a reset was seen. */
char *raw_read(int fd, int timeout_ms, int *closed);

#endif /* SLUICE_TEST_RAW_SOCKET_H */
