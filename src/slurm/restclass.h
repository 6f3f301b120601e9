/* SPDX-License-Identifier: Apache-2.0 */
/* restclass.h - outcome class of one slurmrestd exchange (internal).
 *
 * Maps HTTP status + transport classification + Slurm error_number + the
 * Slurm release family to what the caller must do next.  The table follows
 * design.md "Auth classification" and slurmrestd-api.md sections 9.3/10.1.
 */
#ifndef SLUICE_RESTCLASS_H
#define SLUICE_RESTCLASS_H

#include <stddef.h>

#include <jansson.h>

#include <sluice/client.h>

#include "transport/http.h"

/* Slurm release families whose auth failures look different. */
typedef enum {
    SLURM_FAMILY_22_05, /* v0.0.38 */
    SLURM_FAMILY_23_02, /* 23.02 .. 24.05 (v0.0.39 .. v0.0.41) */
    SLURM_FAMILY_24_11, /* 24.11 and later */
} slurm_family_t;

#define REST_NO_ERROR_NUMBER (-2147483647 - 1)

typedef struct {
    long status;           /* HTTP status; ignored unless xfer is HTTP_XFER_OK */
    http_xfer_t xfer;      /* transport classification */
    long error_number;     /* errors[0].error_number, or REST_NO_ERROR_NUMBER */
    slurm_family_t family; /* release family of the server */
    int authenticated;     /* the request carried auth headers */
    int after_refresh;     /* this is the retry after a token refresh */
    int unrouted;          /* the answer is the router's "unknown URL" (restclass_unrouted()) */
} rest_outcome_t;

/* Classify one exchange: OK (2xx, 304), AUTH (a token problem: invalidate
 * the token, retry once, never a blind POST), UNAVAILABLE (transport
 * failure, 5xx, persistent 7000: the outcome is uncertain), REJECTED (4xx
 * other than 401/404: the request was refused) or NOT_FOUND (a 404 with
 * Slurm's verdict, errors[], e.g. 2017 Invalid job id).  Only these five
 * of sluice_outcome; the client turns them into the call's outcome
 * (docs/client.md, "From the wire to the launcher").  Pure; thread-safe. */
sluice_outcome restclass_classify(const rest_outcome_t *o);

/* The first Slurm error number in a response body: errors[0].error_number,
 * or errors[0].error_code (v0.0.38 submit).  REST_NO_ERROR_NUMBER when the
 * body is not JSON or carries no error.  Lenient: never fails. */
long restclass_error_number(const char *body, size_t len);
/* The same from a body already parsed (NULL: REST_NO_ERROR_NUMBER), so a
 * caller that parsed it does not parse it twice. */
long restclass_error_number_of(const json_t *root);

/* 1 when a 404 is slurmrestd's router refusing the URL rather than a
 * handler's verdict: the body is not JSON carrying errors[] (text/plain
 * "Unable find requested URL" up to 25.05, slurm_strerror() of
 * ESLURM_REST_UNKNOWN_URL from 25.11), or errors[0] is 9006 itself.  Such a
 * 404 says that slurmrestd serves no such URL (no plugin for it), nothing
 * about a job.  0 for any other status.  Lenient: never fails. */
int restclass_unrouted(long status, const char *body, size_t len);
/* The same from a body already parsed (NULL: not JSON, or no body). */
int restclass_unrouted_of(long status, const json_t *root);

#endif /* SLUICE_RESTCLASS_H */
