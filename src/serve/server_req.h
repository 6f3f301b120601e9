/* SPDX-License-Identifier: Apache-2.0 */
/* server_req.h - a request to `sluice serve` as plain data (not installed):
 * method, path, body, headers and query arguments as server.c read them
 * from libmicrohttpd, plus what the route table found (launch id, caller).
 */
#ifndef SLUICE_SERVER_REQ_H
#define SLUICE_SERVER_REQ_H

#include <stddef.h>

#include "server_int.h"

/* A header or a query argument.  value may be NULL (`?follow`). */
typedef struct {
    const char *key;
    const char *value;
    size_t value_len; /* as sent: more than strlen(value) when a NUL byte cut it */
} req_kv_t;

/* Every string is borrowed from libmicrohttpd and valid until the request
 * completes; nothing may keep one past the handler (streams copy). */
typedef struct {
    const char *method;
    const char *url; /* the path, percent-decoded (server_text.h) */
    char *body;      /* the whole body, NUL-terminated, or NULL; handlers may wipe it */
    size_t len;
    const req_kv_t *headers; /* in the order received */
    size_t n_headers;
    const req_kv_t *args; /* the query, in order */
    size_t n_args;
    int unix_socket; /* 1: came over the Unix socket */
    int tls;         /* 1: came over TLS */
    int peer_fd;     /* the connection's socket, or -1 */
    /* Set by the route table before the handler runs. */
    char id[136];          /* the {id} of the path, or "" */
    const char *route_arg; /* the route's argument (static), or NULL */
    caller_t caller;       /* who sent it ("" on a public route) */
} req_t;

/* For libmicrohttpd before 1.0, which cuts a header value at a NUL byte
 * and drops the rest of its line unseen (value_len is its strlen): the
 * header lines stay in its read buffer in order, each line's end (CR LF
 * or LF) overwritten with NULs and the next header's name right after.  A
 * value of kv[0..n) not followed by the next name within 2 bytes (the last
 * value: by a second NUL) went on past a NUL, and its value_len becomes
 * one more than its text, which no check takes for clean text.  A NUL
 * that is the last byte of the last header line stays unseen. */
void req_nul_lengths(req_kv_t *kv, size_t n);
/* The first header named `name` (any case), or NULL. */
const char *req_header(const req_t *rq, const char *name);
/* The same with the value's length as sent in *len (more than its
 * strlen() when the value held a NUL byte). */
const char *req_header_len(const req_t *rq, const char *name, size_t *len);
/* The first query argument `key` (any case, as libmicrohttpd looks it up),
 * or NULL (also for an argument without a value). */
const char *req_arg(const req_t *rq, const char *key);
/* 1 when the query argument `key` is "true" or "1". */
int req_arg_true(const req_t *rq, const char *key);
/* 0 when every query name and value is clean text (server_text.h); else -1
 * with *field_out the offending argument's name ("query" when its name is
 * bad) and *why_out the reason (both borrowed). */
int req_check_args(const req_t *rq, const char **field_out, const char **why_out);

#endif /* SLUICE_SERVER_REQ_H */
