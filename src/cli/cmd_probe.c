/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_probe.c - `sluice probe`: ask a running `sluice serve` whether it is
 * alive (GET /v1/healthz) or ready (GET /v1/readyz), for container health
 * checks and Kubernetes exec probes, whose images carry no curl.
 *
 * Notes:
 * - Exit 0 on HTTP 200; 69 (unavailable) for any other answer or none; 64
 *   for bad usage; 77 when the service answers 401 (a token is needed:
 *   TCP without --api-token-file).
 * - Over the Unix socket (`--server unix:/run/sluice/sluice.sock`) no token
 *   is needed, which is why the deployment files probe through it.
 * - The bearer token is read from a file and wiped after the request; it
 *   never reaches stdout, stderr or the log.
 * - -o json prints the service's answer as it is (the API's object:
 *   {"status": "ok"}, or {"status": "ready", "checks": {...}}).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/http.h"
#include "args.h"
#include "cli.h"
#include "print.h"
#include "remote.h"

typedef struct {
    const char *path;
    long timeout_s;
} probe_opts_t;

static int probe_option(int id, const char *v, void *arg)
{
    probe_opts_t *po = arg;

    if (id == CLI_O_READY) {
        po->path = "/v1/readyz";
    } else if (id == CLI_O_TIMEOUT) {
        return cli_duration("probe", "--timeout", v, 1, 300, &po->timeout_s);
    } else {
        return CLI_EX_SOFTWARE;
    }
    return CLI_EX_OK;
}

/* A 200 answer: its body, or with json the body as the API's object. */
static int print_answer(const char *path, const http_response_t *resp, int json)
{
    json_t *body;
    int rc = CLI_EX_OK;

    if (!json) {
        printf("%s %ld %s\n", path, resp->status, resp->body ? resp->body : "");
        return CLI_EX_OK;
    }
    body = resp->body ? json_loadb(resp->body, resp->body_len, 0, NULL) : NULL;
    if (body == NULL) {
        fprintf(stderr, "sluice probe: %s answered 200 without a JSON body\n", path);
        return CLI_EX_PROTOCOL;
    }
    if (cli_print_json(body, 1) != 0)
        rc = CLI_EX_SOFTWARE;
    json_decref(body);
    return rc;
}

int cmd_probe(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    probe_opts_t po = {"/v1/healthz", 5};
    cli_remote_opts_t ro;
    const char *path;
    char token[4096], header[4200];
    const char *headers[2] = {NULL, NULL};
    http_opts_t ho;
    http_request_t req;
    http_response_t resp = HTTP_RESPONSE_INIT;
    http_client_t *client = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    long timeout_s;
    int k, rc = CLI_EX_UNAVAILABLE;

    token[0] = '\0';
    header[0] = '\0';
    if (!cli_parse(spec, argc, argv, &a, probe_option, &po, &rc))
        return rc;
    ro = a.remote;
    path = po.path;
    timeout_s = po.timeout_s;
    rc = CLI_EX_UNAVAILABLE;
    if (!cli_remote_wanted(&ro))
        return cli_usage_error(spec, "--server (or SLUICE_SERVER) is required");
    if (ro.token_file) {
        if ((rc = cli_remote_read_token(ro.token_file, token, sizeof(token))) != 0)
            goto out;
        rc = CLI_EX_UNAVAILABLE;
        snprintf(header, sizeof(header), "Authorization: Bearer %s", token);
        headers[0] = header;
    }

    memset(&ho, 0, sizeof(ho));
    ho.base_url = ro.server;
    ho.url_name = "--server";
    ho.ca_file = ro.ca_file;
    for (k = 0; k < HTTP_CLASS_COUNT_; k++) {
        ho.timeouts[k].connect_ms = timeout_s * 1000;
        ho.timeouts[k].total_ms = timeout_s * 1000;
    }
    ho.max_response = 64 * 1024;
    if (http_client_new(&client, &ho, &err) != SLUICE_OK) {
        fprintf(stderr, "sluice probe: %s\n", err.text);
        rc = err.code == SLUICE_EINVAL ? CLI_EX_USAGE : CLI_EX_UNAVAILABLE;
        goto out;
    }
    memset(&req, 0, sizeof(req));
    req.method = HTTP_GET;
    req.klass = HTTP_CLASS_QUERY;
    req.path = path;
    req.headers = headers[0] ? headers : NULL;
    if (http_request(client, &req, &resp, &err) != SLUICE_OK) {
        fprintf(stderr, "sluice probe: %s\n", err.text);
        goto out;
    }
    if (resp.status == 200) {
        rc = print_answer(path, &resp, a.json);
    } else {
        fprintf(stderr, "sluice probe: %s%s answered %ld: %s\n", ro.server, path, resp.status,
                resp.body ? resp.body : "");
        rc = resp.status == 401 ? CLI_EX_NOPERM : CLI_EX_UNAVAILABLE;
    }

out:
    http_response_free(&resp);
    http_client_free(client);
    memset(token, 0, sizeof(token));
    memset(header, 0, sizeof(header));
    return rc;
}
