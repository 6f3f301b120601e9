/* SPDX-License-Identifier: Apache-2.0 */
/* server_ui.h - the status page of `sluice serve` (not installed): GET
 * /ui, /ui/ and /ui/<file> answer the files of src/serve/ui/ built into
 * the binary (server_assets.h).
 */
#ifndef SLUICE_SERVER_UI_H
#define SLUICE_SERVER_UI_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* The Content-Security-Policy every answer of the page carries. */
#define UI_CSP                                                                                     \
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "                \
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* GET /ui, /ui/ (index.html) and /ui/<file>: the file with its media type,
 * the CSP above, nosniff, no referrer, Cache-Control: no-cache and a strong
 * ETag (304 for a matching If-None-Match); 404 for a file the page does
 * not have. */
void ui_get(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_UI_H */
