/* SPDX-License-Identifier: Apache-2.0 */
/* config_ref.h - the configuration reference made from the field table
 * (config_fields.c): `sluice config reference` (docs/config-reference.md and
 * docs/sluice-site.schema.json are its output), the sluice.yaml(5) man page
 * and the keys `--set` completes.  Internal: for the site
 * layer, the command and the tests.
 */
#ifndef SLUICE_SITE_CONFIG_REF_H
#define SLUICE_SITE_CONFIG_REF_H

#include <jansson.h>

#include <sluice/error.h>

typedef enum {
    CFG_REF_MARKDOWN = 0, /* one table per top-level section */
    CFG_REF_JSON_SCHEMA,  /* a JSON Schema (draft 2020-12) of the site file */
    CFG_REF_MAN,          /* the sluice.yaml(5) man page (roff) */
} cfg_ref_format_t;

/* The reference as text, ending with a newline; *out is new (caller frees
 * with free()).  The same table gives the same bytes. */
sluice_err cfg_reference(cfg_ref_format_t format, char **out, sluice_error_t *err);

/* The markdown reference; *out is new (free()). */
sluice_err cfg_ref_markdown(char **out, sluice_error_t *err);

/* The sluice.yaml(5) man page (roff): the file, the layers, every key by
 * section with its type, variable and --set key; *out is new (free()). */
sluice_err cfg_ref_man(char **out, sluice_error_t *err);

/* The i-th key (from 0, in table order) that the environment and --set
 * take ("rest.url"), then the entries of job_launcher.executables that
 * sluice runs ("job_launcher.executables.srun"), or NULL past the last:
 * what `--set` completes.  Static. */
const char *cfg_ref_set_key(size_t i);

/* The JSON Schema; *out is a new reference (caller json_decref()s it). */
sluice_err cfg_ref_schema(json_t **out, sluice_error_t *err);

/* `sluice config init`: a commented starting site file (config_init.c):
 * the required keys with a "<required: ...>" placeholder the loader
 * refuses if left in, the common keys commented out with their description
 * and default.  *out is new (free()); the same table gives the same bytes. */
sluice_err cfg_init_text(char **out, sluice_error_t *err);

/* The i-th required key (from 0) that cfg_init_text() writes with a
 * placeholder ("rest.url"), or NULL past the last.  Static. */
const char *cfg_init_required(size_t i);

#endif /* SLUICE_SITE_CONFIG_REF_H */
