/* SPDX-License-Identifier: Apache-2.0 */
/* restclass.c - outcome classification of slurmrestd exchanges.
 *
 * Notes:
 * - Checked against slurmrestd 22.05 (v0.0.38), 23.02-24.05 (v0.0.39 to
 *   v0.0.41) and 24.11+ (v0.0.42+) per slurmrestd-api.md 9.3 and 10.1.
 * - 401 and 511 are AUTH on every release.
 * - 22.05: a bad token closes the slurmctld connection and the handler
 *   reports rc -1 as HTTP 500; on an authenticated call that is AUTH.
 * - 23.02-24.05: 500 with 7000 (ESLURM_DB_CONNECTION) is a bad token or a
 *   slurmdbd outage; AUTH the first time (refresh once), UNAVAILABLE when it
 *   persists after the refresh.  The same holds for 1007
 *   (SLURM_PROTOCOL_AUTHENTICATION_ERROR), which these releases map to 500.
 * - Any other 5xx, and every transport failure, is UNAVAILABLE: the answer
 *   does not prove a rejection, so a POST stays uncertain.
 * - A 404 is NOT_FOUND only when a handler gave it (JSON with errors[]):
 *   the router's "unknown URL" 404 (plain text) means the URL is not
 *   served, e.g. /slurmdb/ on a slurmrestd without the slurmdbd plugin.
 *   That is UNAVAILABLE: taken for a job's absence it would spend the miss
 *   budget and confirm absences that nobody observed.  A JSON 404 whose
 *   first error is the router's own number is the router's too: 9006
 *   (ESLURM_REST_UNKNOWN_URL, up to 26.05) or 11008 (ESLURM_URL_INVALID_PATH,
 *   26.11, which retired 9006; its router answers in plain text, slurmrestd
 *   operations.c _resolve_path).  Negotiation never reads either: its probes
 *   decide by the HTTP status alone (client.c).
 */
#include <jansson.h>

#include "restclass.h"

#define ESLURM_DB_CONNECTION 7000
#define SLURM_PROTOCOL_AUTHENTICATION_ERROR 1007
#define ESLURM_REST_UNKNOWN_URL 9006
#define ESLURM_URL_INVALID_PATH 11008

sluice_outcome restclass_classify(const rest_outcome_t *o)
{
    if (o == NULL || o->xfer != HTTP_XFER_OK)
        return SLUICE_OUTCOME_UNAVAILABLE;
    if ((o->status >= 200 && o->status < 300) || o->status == 304)
        return SLUICE_OUTCOME_OK;
    if (o->status == 401 || o->status == 511)
        return SLUICE_OUTCOME_AUTH;
    if (o->status == 404)
        return o->unrouted ? SLUICE_OUTCOME_UNAVAILABLE : SLUICE_OUTCOME_NOT_FOUND;
    if (o->status == 500 && o->family == SLURM_FAMILY_22_05) {
        if (o->authenticated && o->error_number == -1)
            return SLUICE_OUTCOME_AUTH;
        return SLUICE_OUTCOME_UNAVAILABLE;
    }
    if (o->status == 500 && o->family == SLURM_FAMILY_23_02) {
        if (o->error_number == ESLURM_DB_CONNECTION ||
            o->error_number == SLURM_PROTOCOL_AUTHENTICATION_ERROR)
            return o->after_refresh ? SLUICE_OUTCOME_UNAVAILABLE : SLUICE_OUTCOME_AUTH;
        return SLUICE_OUTCOME_UNAVAILABLE;
    }
    if (o->status >= 500)
        return SLUICE_OUTCOME_UNAVAILABLE;
    if (o->status == 408 || o->status == 429)
        return SLUICE_OUTCOME_UNAVAILABLE;
    if (o->status >= 400)
        return SLUICE_OUTCOME_REJECTED;
    /* 1xx, unexpected 3xx: nothing proves a rejection. */
    return SLUICE_OUTCOME_UNAVAILABLE;
}

long restclass_error_number_of(const json_t *root)
{
    const json_t *first = json_array_get(json_object_get(root, "errors"), 0);
    const json_t *num = json_object_get(first, "error_number");

    if (num == NULL)
        num = json_object_get(first, "error_code");
    return json_is_integer(num) ? (long)json_integer_value(num) : REST_NO_ERROR_NUMBER;
}

long restclass_error_number(const char *body, size_t len)
{
    json_t *root;
    long out;

    if (body == NULL || len == 0)
        return REST_NO_ERROR_NUMBER;
    root = json_loadb(body, len, 0, NULL);
    out = restclass_error_number_of(root);
    json_decref(root);
    return out;
}

int restclass_unrouted_of(long status, const json_t *root)
{
    const json_t *errors;
    const json_t *num;

    if (status != 404)
        return 0;
    errors = json_object_get(root, "errors");
    if (!json_is_array(errors) || json_array_size(errors) == 0)
        return 1;
    num = json_object_get(json_array_get(errors, 0), "error_number");
    return json_is_integer(num) && (json_integer_value(num) == ESLURM_REST_UNKNOWN_URL ||
                                    json_integer_value(num) == ESLURM_URL_INVALID_PATH);
}

int restclass_unrouted(long status, const char *body, size_t len)
{
    json_t *root = NULL;
    int out;

    if (status != 404)
        return 0;
    if (body != NULL && len > 0)
        root = json_loadb(body, len, 0, NULL);
    out = restclass_unrouted_of(status, root);
    json_decref(root);
    return out;
}
