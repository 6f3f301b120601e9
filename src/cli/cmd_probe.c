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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/http.h"
#include "cli.h"
#include "remote.h"

static const char probe_usage[] =
    "usage: sluice probe [--ready] [--server URL|unix:PATH] [--api-token-file FILE]\n"
    "                    [--api-ca FILE] [--timeout SECONDS]\n"
    "\n"
    "Exit 0 when a running `sluice serve` answers GET /v1/healthz (or /v1/readyz\n"
    "with --ready) with 200; 69 otherwise.\n"
    "\n"
    "options:\n"
    "  --ready                 probe /v1/readyz instead of /v1/healthz\n"
    "  --server URL|unix:PATH  the service (default: $SLUICE_SERVER)\n"
    "  --api-token-file FILE   bearer token for TCP (default: $SLUICE_API_TOKEN_FILE)\n"
    "  --api-ca FILE           CA bundle for https (default: $SLUICE_API_CA)\n"
    "  --timeout SECONDS       give up after this long (default 5, 1-300)\n"
    "  -h, --help              show this help\n";

int cmd_probe(int argc, char **argv)
{
    cli_remote_opts_t ro = {NULL, NULL, NULL};
    const char *path = "/v1/healthz";
    char token[4096], header[4200];
    const char *headers[2] = {NULL, NULL};
    http_options_t ho;
    http_request_t req;
    http_response_t resp = HTTP_RESPONSE_INIT;
    http_client_t *client = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    long timeout_s = 5;
    int a, k, opt, rc = CLI_EX_UNAVAILABLE;

    token[0] = '\0';
    header[0] = '\0';
    for (a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(probe_usage, stdout);
            return CLI_EX_OK;
        } else if (strcmp(arg, "--ready") == 0) {
            path = "/v1/readyz";
        } else if ((opt = cli_remote_option(&ro, argc, argv, &a)) != 0) {
            if (opt < 0)
                return CLI_EX_USAGE;
        } else if (strcmp(arg, "--timeout") == 0 && a + 1 < argc) {
            char *end = NULL;
            timeout_s = strtol(argv[++a], &end, 10);
            if (end == argv[a] || *end != '\0' || timeout_s < 1 || timeout_s > 300) {
                fprintf(stderr, "sluice probe: --timeout: expected 1 to 300 seconds, got '%s'\n",
                        argv[a]);
                return CLI_EX_USAGE;
            }
        } else {
            fprintf(stderr, "sluice probe: unexpected argument '%s'\n", arg);
            fputs(probe_usage, stderr);
            return CLI_EX_USAGE;
        }
    }
    if (!cli_remote_wanted(&ro)) {
        fprintf(stderr, "sluice probe: --server (or SLUICE_SERVER) is required\n");
        return CLI_EX_USAGE;
    }
    if (ro.token_file) {
        if ((rc = cli_remote_read_token(ro.token_file, token, sizeof(token))) != 0)
            goto out;
        rc = CLI_EX_UNAVAILABLE;
        snprintf(header, sizeof(header), "Authorization: Bearer %s", token);
        headers[0] = header;
    }

    memset(&ho, 0, sizeof(ho));
    ho.base_url = ro.server;
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
        printf("%s %ld %s\n", path, resp.status, resp.body ? resp.body : "");
        rc = CLI_EX_OK;
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
