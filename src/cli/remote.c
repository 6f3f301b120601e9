/* SPDX-License-Identifier: Apache-2.0 */
/* remote.c - talk to a running `sluice serve` for the CLI (see remote.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/jdec.h"
#include "base/wipe.h"
#include "cli.h"
#include "transport/http.h"
#include "remote.h"

#define TOKEN_MAX 4096

struct cli_remote {
    http_client_t *http;   /* requests */
    http_client_t *stream; /* long-lived streams, so a request can run beside one */
    http_opts_t opts;
    char *server;
    char auth[TOKEN_MAX + 32]; /* "Authorization: Bearer <token>", or "" */
};

static const char *env_or(const char *value, const char *name)
{
    const char *e;

    if (value != NULL)
        return value;
    e = getenv(name);
    return e != NULL && e[0] != '\0' ? e : NULL;
}

int cli_remote_wanted(cli_remote_opts_t *o)
{
    o->server = env_or(o->server, "SLUICE_SERVER");
    o->token_file = env_or(o->token_file, "SLUICE_API_TOKEN_FILE");
    o->ca_file = env_or(o->ca_file, "SLUICE_API_CA");
    return o->server != NULL;
}

int cli_remote_status_exit(long status)
{
    if (status == 401 || status == 403)
        return CLI_EX_NOPERM;
    if (status == 404 || status >= 500 || status == 0)
        return CLI_EX_UNAVAILABLE;
    if (status >= 400)
        return CLI_EX_DATAERR;
    return CLI_EX_PROTOCOL; /* a status the API does not use */
}

int cli_remote_escape(const char *s, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        int plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~';
        if (n + (plain ? 1 : 3) >= size)
            return -1;
        if (plain) {
            out[n++] = (char)ch;
        } else {
            out[n++] = '%';
            out[n++] = hex[ch >> 4];
            out[n++] = hex[ch & 15];
        }
    }
    if (n >= size)
        return -1;
    out[n] = '\0';
    return 0;
}

int cli_remote_read_token(const char *path, char *out, size_t size)
{
    char buf[TOKEN_MAX + 256];
    struct stat st;
    ssize_t n;
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    int rc = CLI_EX_OK;
    char *line, *save = NULL;

    if (fd < 0) {
        fprintf(stderr, "sluice: --api-token-file %s: %s\n", path, strerror(errno));
        return errno == EACCES                       ? CLI_EX_NOPERM
               : errno == ENOENT || errno == ENOTDIR ? CLI_EX_NOINPUT
                                                     : CLI_EX_CONFIG;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "sluice: --api-token-file %s: not a regular file\n", path);
        rc = CLI_EX_CONFIG;
        goto out;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        fprintf(stderr,
                "sluice: --api-token-file %s: refused: writable by group or others (chmod 600)\n",
                path);
        rc = CLI_EX_NOPERM;
        goto out;
    }
    if ((st.st_mode & (S_IRGRP | S_IROTH)) != 0)
        fprintf(stderr, "sluice: warning: --api-token-file %s is readable by group or others\n",
                path);
    while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    out[0] = '\0';
    for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *w1, *w2, *w3, *s2 = NULL;

        w1 = strtok_r(line, " \t\r", &s2);
        if (w1 == NULL || w1[0] == '#')
            continue;
        w2 = strtok_r(NULL, " \t\r", &s2);
        w3 = w2 ? strtok_r(NULL, " \t\r", &s2) : NULL;
        if (strlen(w2 ? w2 : w1) >= size || (w3 != NULL && strcmp(w3, "admin") != 0)) {
            fprintf(stderr, "sluice: --api-token-file %s: expected one token on its first line\n",
                    path);
            rc = CLI_EX_CONFIG;
            goto out;
        }
        snprintf(out, size, "%s", w2 ? w2 : w1);
        break;
    }
    if (out[0] == '\0') {
        fprintf(stderr, "sluice: --api-token-file %s: no token in the file\n", path);
        rc = CLI_EX_CONFIG;
    }
out:
    wipe(buf, sizeof(buf));
    close(fd);
    return rc;
}

int cli_remote_open(const cli_remote_opts_t *o, cli_remote_t **out)
{
    cli_remote_t *r = calloc(1, sizeof(*r));
    sluice_error_t err = SLUICE_ERROR_INIT;
    char token[TOKEN_MAX];
    int rc = CLI_EX_OK;

    *out = NULL;
    token[0] = '\0';
    if (r == NULL) {
        fprintf(stderr, "sluice: out of memory\n");
        return CLI_EX_SOFTWARE;
    }
    if ((r->server = strdup(o->server)) == NULL) {
        rc = CLI_EX_SOFTWARE;
        goto out;
    }
    if (o->token_file != NULL &&
        (rc = cli_remote_read_token(o->token_file, token, sizeof(token))) != 0)
        goto out;
    if (token[0] != '\0')
        snprintf(r->auth, sizeof(r->auth), "Authorization: Bearer %s", token);
    r->opts.base_url = r->server;
    r->opts.ca_file = o->ca_file;
    r->opts.timeouts[HTTP_CLASS_QUERY].total_ms = 30000;
    if (http_client_new(&r->http, &r->opts, &err) != SLUICE_OK ||
        http_client_new(&r->stream, &r->opts, &err) != SLUICE_OK) {
        /* the only failure before any traffic is a bad or insecure URL */
        fprintf(stderr, "sluice: --server %s: %s\n", o->server, err.text);
        rc = err.code == SLUICE_EINVAL ? CLI_EX_USAGE : cli_fail(&err);
        goto out;
    }
    if (r->auth[0] == '\0' && strncmp(o->server, "unix:", 5) != 0)
        fprintf(stderr, "sluice: warning: no --api-token-file (or $SLUICE_API_TOKEN_FILE): the "
                        "service will refuse the request\n");
    *out = r;
    r = NULL;
out:
    wipe(token, sizeof(token));
    cli_remote_close(r);
    return rc;
}

void cli_remote_close(cli_remote_t *r)
{
    if (r == NULL)
        return;
    http_client_free(r->http);
    http_client_free(r->stream);
    wipe(r->auth, sizeof(r->auth));
    free(r->server);
    free(r);
}

/* Print a non-2xx answer and return its sysexit. */
static int report_problem(const cli_remote_t *r,
                          const char *method,
                          const char *path,
                          const http_response_t *resp)
{
    json_t *p = resp->body ? json_loadb(resp->body, resp->body_len, 0, NULL) : NULL;
    jdec_t d;
    jdec_cur_t prob, errors, e;
    const char *type, *title, *detail, *field;
    int rc = cli_remote_status_exit(resp->status);
    size_t i;

    jdec_peek_root(&d, &prob, p);
    type = jdec_peek_string(&prob, "type");
    title = jdec_peek_string(&prob, "title");
    detail = jdec_peek_string(&prob, "detail");
    field = jdec_peek_string(&prob, "field");
    if (title != NULL) {
        fprintf(stderr, "sluice: %s: %s %s: %ld %s: %s", r->server, method, path, resp->status,
                title, detail ? detail : "");
        if (field != NULL)
            fprintf(stderr, " (field %s)", field);
        fputc('\n', stderr);
        /* a 422 that lists more than one field error: each on its line */
        jdec_member(&errors, &prob, "errors");
        if (jdec_len(&errors) > 1) {
            JDEC_FOREACH(&errors, i, e)
            {
                const char *ep = jdec_peek_string_or(&e, "path", "");
                const char *why = jdec_peek_string_or(&e, "reason", "");

                fprintf(stderr, "sluice: %s%s%s\n", ep, ep[0] ? ": " : "", why);
            }
        }
    } else {
        fprintf(stderr, "sluice: %s: %s %s: HTTP %ld without a problem object\n", r->server, method,
                path, resp->status);
    }
    /* A log that cannot be read: 74, as `sluice logs` on the local store. */
    if (type != NULL && (strcmp(type, "urn:sluice:problem:log-refused") == 0 ||
                         strcmp(type, "urn:sluice:problem:log-gone") == 0))
        rc = CLI_EX_IOERR;
    json_decref(p);
    return rc;
}

static int report_transport(const cli_remote_t *r, const sluice_error_t *err)
{
    fprintf(stderr, "sluice: cannot reach the service at %s: %s\n", r->server, err->text);
    return err->code == SLUICE_ETOOBIG ? CLI_EX_PROTOCOL : CLI_EX_UNAVAILABLE;
}

static int method_of(const char *method, http_method_t *m)
{
    if (strcmp(method, "GET") == 0)
        *m = HTTP_GET;
    else if (strcmp(method, "POST") == 0)
        *m = HTTP_POST;
    else if (strcmp(method, "DELETE") == 0)
        *m = HTTP_DELETE;
    else
        return -1;
    return 0;
}

int cli_remote_json(cli_remote_t *r,
                    const char *method,
                    const char *path,
                    const char *query,
                    const char *body,
                    long *status,
                    json_t **out)
{
    http_request_t req;
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *hdrs[2] = {r->auth[0] ? r->auth : NULL, NULL};
    char joined[8192];
    json_error_t jerr;
    int rc = CLI_EX_OK;

    *out = NULL;
    memset(&req, 0, sizeof(req));
    if (method_of(method, &req.method) != 0)
        return CLI_EX_SOFTWARE;
    req.klass = req.method == HTTP_POST ? HTTP_CLASS_SUBMIT : HTTP_CLASS_QUERY;
    req.path = path;
    req.query = query;
    req.body = body;
    req.headers = hdrs;
    if (body != NULL && query != NULL) {
        /* http.c refuses a body with a query string (a slurmrestd rule);
         * the service takes both, so put the query in the path. */
        snprintf(joined, sizeof(joined), "%s?%s", path, query);
        req.path = joined;
        req.query = NULL;
    }
    if (http_request(r->http, &req, &resp, &err) != SLUICE_OK) {
        rc = report_transport(r, &err);
        goto out;
    }
    *status = resp.status;
    if (resp.status < 200 || resp.status > 299) {
        rc = report_problem(r, method, path, &resp);
        goto out;
    }
    if (resp.body_len > 0 && (*out = json_loadb(resp.body, resp.body_len, 0, &jerr)) == NULL) {
        fprintf(stderr, "sluice: %s: %s %s: the answer is not JSON: %s\n", r->server, method, path,
                jerr.text);
        rc = CLI_EX_PROTOCOL;
    }
out:
    http_response_free(&resp);
    return rc;
}

int cli_remote_stream(cli_remote_t *r,
                      const char *path,
                      const char *query,
                      const char *accept,
                      const char *last_event_id,
                      int (*on_data)(const char *data, size_t len, void *arg),
                      void *arg,
                      int *ended)
{
    http_request_t req;
    http_stream_t st;
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char last[96];
    const char *hdrs[3] = {NULL, NULL, NULL};
    size_t nh = 0;
    int rc = CLI_EX_OK;

    if (r->auth[0])
        hdrs[nh++] = r->auth;
    if (last_event_id != NULL) {
        snprintf(last, sizeof(last), "Last-Event-ID: %s", last_event_id);
        hdrs[nh++] = last;
    }
    memset(&req, 0, sizeof(req));
    req.method = HTTP_GET;
    req.klass = HTTP_CLASS_QUERY;
    req.path = path;
    req.query = query;
    req.headers = hdrs;
    memset(&st, 0, sizeof(st));
    st.on_data = on_data;
    st.arg = arg;
    st.accept = accept;
    *ended = 0;
    if (http_request_stream(r->stream, &req, &st, &resp, &err) != SLUICE_OK) {
        rc = report_transport(r, &err);
        goto out;
    }
    if (resp.status < 200 || resp.status > 299) {
        rc = report_problem(r, "GET", path, &resp);
        goto out;
    }
    *ended = !st.stopped;
out:
    http_response_free(&resp);
    return rc;
}
