/* SPDX-License-Identifier: Apache-2.0 */
/* server_openapi.c - the OpenAPI document served by `sluice serve` at
 * /v1/openapi.json and /v1/openapi.yaml, built once from the YAML files
 * built into the binary (server_assets.h).
 *
 * Input: openapi/sluice-v1.yaml and openapi/components/launch-request.yaml
 * as embedded.  Output: one self-contained document, as JSON and as YAML.
 *
 * Notes:
 * - Built on the first request (pthread_once: thread-safe, once per
 *   process) and kept for the life of the process; nothing is freed.
 * - Bundled: the main file refers to the request schemas in
 *   ./components/launch-request.yaml, which a client of the served document
 *   cannot fetch.  Those schemas are copied into components.schemas and the
 *   references become local ("#/components/schemas/<Name>").
 * - info.version is sluice_version(), the binary's (lint.apidoc checks the
 *   file's version against the CMake project version besides).
 * - YAML goes through the site layer's reader and writer
 *   (sluice_yaml_to_json/sluice_json_to_yaml: libyaml stays in one file);
 *   the YAML answer is that document written again, so both answers carry
 *   exactly the same value (the file's comments are not in it).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/config.h>
#include <sluice/version.h>

#include "server_assets.h"
#include "server_openapi.h"

#define MAIN_ASSET "openapi/sluice-v1.yaml"
#define PARTS_ASSET "openapi/components/launch-request.yaml"
#define PARTS_REF "./components/launch-request.yaml#"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *doc_json; /* built once, never freed */
static char *doc_yaml;

static json_t *load(const char *path)
{
    const server_asset_t *a = server_asset_find(path);
    json_t *j = NULL;

    if (a == NULL ||
        sluice_yaml_to_json(path, (const char *)a->data, a->len, &j, NULL) != SLUICE_OK)
        return NULL;
    return j;
}

/* Every "$ref" into the request schema file becomes a local one. */
static int localize(json_t *j, size_t depth)
{
    const char *k, *ref;
    json_t *v;
    size_t i;

    if (depth > 64)
        return -1;
    if (json_is_array(j)) {
        json_array_foreach(j, i, v) if (localize(v, depth + 1) != 0) return -1;
        return 0;
    }
    json_object_foreach(j, k, v)
    {
        ref = json_string_value(v);
        if (strcmp(k, "$ref") == 0 && ref != NULL &&
            strncmp(ref, PARTS_REF, strlen(PARTS_REF)) == 0) {
            if (json_object_set_new(j, k, json_string(ref + strlen(PARTS_REF) - 1)) != 0)
                return -1;
        } else if ((json_is_object(v) || json_is_array(v)) && localize(v, depth + 1) != 0) {
            return -1;
        }
    }
    return 0;
}

static json_t *bundle(void)
{
    json_t *doc = load(MAIN_ASSET), *parts = load(PARTS_ASSET), *schemas, *v;
    const char *k;
    int bad = doc == NULL || parts == NULL;

    schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    bad = bad || !json_is_object(schemas) || !json_is_object(json_object_get(doc, "info"));
    if (!bad) {
        json_object_foreach(json_object_get(json_object_get(parts, "components"), "schemas"), k, v)
        {
            /* the main file's own schema of that name wins */
            if (json_object_get(schemas, k) == NULL && json_object_set(schemas, k, v) != 0)
                bad = 1;
        }
    }
    bad = bad || localize(doc, 0) != 0 ||
          json_object_set_new(json_object_get(doc, "info"), "version",
                              json_string(sluice_version())) != 0;
    json_decref(parts);
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static void build(void)
{
    json_t *doc = bundle();

    if (doc == NULL)
        return;
    doc_json = json_dumps(doc, JSON_INDENT(2));
    if (sluice_json_to_yaml(doc, &doc_yaml, NULL) != SLUICE_OK)
        doc_yaml = NULL;
    json_decref(doc);
}

void openapi_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    int yaml = rq->route_arg != NULL && strcmp(rq->route_arg, "yaml") == 0;
    const char *text;
    char *copy;

    (void)s;
    pthread_once(&once, build);
    text = yaml ? doc_yaml : doc_json;
    if (text == NULL || (copy = strdup(text)) == NULL) {
        answer_problem(out, 500, "internal", "Internal error",
                       "the OpenAPI document built into the binary could not be read");
        return;
    }
    answer_text(out, 200, yaml ? "application/yaml" : "application/json", copy);
}
