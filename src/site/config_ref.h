/* SPDX-License-Identifier: Apache-2.0 */
/* config_ref.h - the configuration reference made from the field table
 * (config_fields.c): `sluice config reference` (docs/config-reference.md and
 * docs/sluice-site.schema.json are its output).  Internal: for the site
 * layer, the command and the tests.
 */
#ifndef SLUICE_SITE_CONFIG_REF_H
#define SLUICE_SITE_CONFIG_REF_H

#include <jansson.h>

#include <sluice/error.h>

typedef enum {
    CFG_REF_MARKDOWN = 0, /* one table per top-level section */
    CFG_REF_JSON_SCHEMA,  /* a JSON Schema (draft 2020-12) of the site file */
} cfg_ref_format_t;

/* The reference as text, ending with a newline; *out is new (caller frees
 * with free()).  The same table gives the same bytes. */
sluice_err cfg_reference(cfg_ref_format_t format, char **out, sluice_error_t *err);

/* The markdown reference; *out is new (free()). */
sluice_err cfg_ref_markdown(char **out, sluice_error_t *err);

/* The JSON Schema; *out is a new reference (caller json_decref()s it). */
sluice_err cfg_ref_schema(json_t **out, sluice_error_t *err);

#endif /* SLUICE_SITE_CONFIG_REF_H */
