/* SPDX-License-Identifier: Apache-2.0 */
/* server_ui.c - the status page's files: GET /ui (and /ui/) is
 * src/serve/ui/index.html, GET /ui/<file> is src/serve/ui/<file>, as
 * cmake/embed.cmake built them into the binary.
 *
 * Notes:
 * - Public routes: the files carry no data; every data call of the page
 *   goes to the API with the caller's token.
 * - Only flat names are looked up ("app.js"): no '/', no leading '.', so a
 *   path can never reach another asset (the OpenAPI document) or a file.
 * - The ETag is the FNV-1a hash of the bytes: the same binary always sends
 *   the same tag, a new build with another page another one.
 *   Cache-Control: no-cache makes the browser ask again each time (a 304
 *   when unchanged), so an upgraded service never serves a stale script.
 * - Every answer, 404 included, carries the strict CSP (UI_CSP): no inline
 *   script or style, connections only to this origin.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_assets.h"
#include "server_ui.h"

#define UI_DIR "src/serve/ui/"

static void ui_headers(answer_t *out)
{
    answer_header(out, "Content-Security-Policy", UI_CSP);
    answer_header(out, "X-Content-Type-Options", "nosniff");
    answer_header(out, "Referrer-Policy", "no-referrer");
    answer_header(out, "X-Frame-Options", "DENY");
}

/* The strong ETag of `a`: "\"ui-<16 hex digits>\"". */
static void ui_etag(const server_asset_t *a, char *buf, size_t size)
{
    uint64_t h = 1469598103934665603ULL;
    size_t i;

    for (i = 0; i < a->len; i++) {
        h ^= a->data[i];
        h *= 1099511628211ULL;
    }
    snprintf(buf, size, "\"ui-%016llx\"", (unsigned long long)h);
}

/* 1 when the If-None-Match header `inm` names `etag` (or is "*"). */
static int ui_etag_matches(const char *inm, const char *etag)
{
    size_t n = strlen(etag);
    const char *p;

    if (inm == NULL)
        return 0;
    if (strcmp(inm, "*") == 0)
        return 1;
    for (p = strstr(inm, etag); p != NULL; p = strstr(p + 1, etag)) {
        char after = p[n];
        if (after == '\0' || after == ',' || after == ' ')
            return 1;
    }
    return 0;
}

/* The asset a path under /ui names, or NULL. */
static const server_asset_t *ui_find(const char *url)
{
    char path[128];
    const char *name;

    if (strcmp(url, "/ui") == 0 || strcmp(url, "/ui/") == 0)
        name = "index.html";
    else if (strncmp(url, "/ui/", 4) == 0)
        name = url + 4;
    else
        return NULL;
    if (name[0] == '.' || strchr(name, '/') != NULL || strlen(name) > 64)
        return NULL;
    snprintf(path, sizeof(path), UI_DIR "%s", name);
    return server_asset_find(path);
}

void ui_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    const server_asset_t *a = ui_find(rq->url);
    char etag[32];
    char *body;

    (void)s;
    if (a == NULL) {
        answer_problem(out, 404, "not-found", "Not found", "the status page has no such file");
        ui_headers(out);
        return;
    }
    ui_etag(a, etag, sizeof(etag));
    if (ui_etag_matches(req_header(rq, "If-None-Match"), etag)) {
        answer_empty(out, 304);
    } else {
        if ((body = malloc(a->len + 1)) == NULL)
            return; /* no answer */
        memcpy(body, a->data, a->len + 1);
        answer_text(out, 200, server_asset_type(a->path), body);
        out->len = a->len; /* a binary file may hold NUL bytes */
        out->n_headers = 0;
        answer_header(out, "Content-Type", server_asset_type(a->path));
    }
    answer_header(out, "Cache-Control", "no-cache");
    answer_header(out, "ETag", etag);
    ui_headers(out);
}
