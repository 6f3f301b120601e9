/* SPDX-License-Identifier: Apache-2.0 */
/* config_schema.c - `sluice config reference --format json-schema`: a JSON
 * Schema (draft 2020-12) of the site file made from the field table: one
 * object per section, no other keys, the type, limits and fixed words of
 * each kind, the description of each row.
 *
 * Notes:
 * - The schema is structural: what the loader checks across fields
 *   (config_check.c), and the finer rules of some kinds (a URL's host, a
 *   path's components), are for the loader to say.
 * - Every key may be null ("key:" with no value keeps its default), as
 *   cfg_walk_map() allows.
 */
#include <stdio.h>
#include <string.h>

#include "config_int.h"
#include "config_ref.h"

static json_t *str_pattern(const char *pattern)
{
    return json_pack("{s:s, s:s}", "type", "string", "pattern", pattern);
}

static json_t *words_enum(kind_t k)
{
    const char *const *w = cfg_kind_values(k);
    json_t *a = json_array();
    size_t i;

    for (i = 0; a && w && w[i]; i++)
        json_array_append_new(a, json_string(w[i]));
    if (a && k == K_LOGLEVEL) { /* a plain 3 to 7 is a YAML integer */
        for (i = 3; i <= 7; i++)
            json_array_append_new(a, json_integer((json_int_t)i));
    }
    return json_pack("{s:o*}", "enum", a);
}

static json_t *series_schema(void)
{
    return json_pack(
        "{s:s, s:{s:s}, s:{s:s, s:b, s:[s], s:{s:{s:s, s:s}, s:{s:s, s:i}, s:{s:s, s:i, s:i}, "
        "s:o*}}}",
        "type", "object", "propertyNames", "pattern", "^[A-Za-z0-9._-]{1,64}$",
        "additionalProperties", "type", "object", "additionalProperties", 0, "required",
        "constraint", "properties", "constraint", "type", "string", "pattern",
        "^[A-Za-z0-9_.&|*\\[\\]():,!-]+$", "gres", "type", "string", "minLength", 1,
        "gpus_per_node", "type", "integer", "minimum", 1, "maximum", 1024, "gpu_vendor",
        words_enum(K_GPUVENDOR));
}

static json_t *execs_schema(void)
{
    static const char *const cmds[] = {"srun",   "enroot", "apptainer", "singularity",
                                       "sbatch", "squeue", "sacct",     "scancel"};
    json_t *props = json_object();
    size_t i;

    for (i = 0; props && i < sizeof(cmds) / sizeof(cmds[0]); i++)
        json_object_set_new(props, cmds[i], str_pattern("^/"));
    return json_pack("{s:s, s:b, s:o*}", "type", "object", "additionalProperties", 0, "properties",
                     props);
}

static json_t *list_of(json_t *item)
{
    return json_pack("{s:s, s:o*}", "type", "array", "items", item);
}

/* The schema of one kind, without null. */
static json_t *kind_schema(const field_t *f)
{
    switch (f->kind) {
    case K_STR:
        return json_pack("{s:s, s:i, s:i}", "type", "string", "minLength", 1, "maxLength", 4096);
    case K_NAME:
        return str_pattern("^[A-Za-z0-9._-]{1,64}$");
    case K_PREFIX:
        return str_pattern("^[A-Za-z][A-Za-z0-9_]{0,15}$");
    case K_HOST:
        return str_pattern("^[A-Za-z0-9.:_\\[\\]-]{1,253}$");
    case K_ABS:
    case K_JOBPATH:
        return str_pattern("^/");
    case K_URL:
        return str_pattern("^(https?://[^/ ]|unix:/[^ ])[^ ]*$");
    case K_DBURL:
        return str_pattern("^postgres(ql)?://[^ ]*$");
    case K_BOOL:
        return json_pack("{s:s}", "type", "boolean");
    case K_INT:
        return json_pack("{s:s, s:I, s:I}", "type", "integer", "minimum", (json_int_t)f->min,
                         "maximum", (json_int_t)f->max);
    case K_DUR:
        return json_pack("{s:[{s:s, s:I, s:I}, {s:s, s:s}]}", "anyOf", "type", "integer", "minimum",
                         (json_int_t)f->min, "maximum", (json_int_t)f->max, "type", "string",
                         "pattern", "^[0-9]+[smhd]?$");
    case K_STIME:
        return json_pack("{s:[{s:s, s:i}, {s:s, s:s}]}", "anyOf", "type", "integer", "minimum", 1,
                         "type", "string", "pattern",
                         "^[0-9]{1,9}(-[0-9]{1,9})?(:[0-9]{1,9}){0,2}$");
    case K_PORTRANGE:
        return json_pack("{s:[{s:s, s:s}, {s:s, s:i, s:i, s:{s:s, s:I, s:I}}]}", "anyOf", "type",
                         "string", "pattern", "^[0-9]+-[0-9]+$", "type", "array", "minItems", 2,
                         "maxItems", 2, "items", "type", "integer", "minimum", (json_int_t)f->min,
                         "maximum", (json_int_t)f->max);
    case K_LINES:
        return json_pack("{s:[{s:s}, {s:s, s:{s:s}}]}", "anyOf", "type", "string", "type", "array",
                         "items", "type", "string");
    case K_LIST:
        return list_of(json_pack("{s:s, s:i, s:i, s:s}", "type", "string", "minLength", 1,
                                 "maxLength", 4096, "pattern", "^[^,]*$"));
    case K_ENVLIST:
        return list_of(str_pattern("^[A-Za-z_][A-Za-z0-9_]*$"));
    case K_ARGV:
        return json_pack(
            "{s:s, s:i, s:o*}", "type", "array", "minItems", 1, "items",
            json_pack("{s:s, s:i, s:i}", "type", "string", "minLength", 1, "maxLength", 4096));
    case K_PROFILES:
        return list_of(words_enum(f->kind));
    case K_SERIES:
        return series_schema();
    case K_EXECS:
        return execs_schema();
    case K_MODE:
        return json_pack("{s:[s, s], s:s}", "type", "string", "integer", "pattern", "^0?[0-7]{3}$");
    default: /* the kinds with fixed words */
        return words_enum(f->kind);
    }
}

/* Let `s` be null too; returns s (NULL stays NULL). */
static json_t *or_null(json_t *s)
{
    json_t *t = json_object_get(s, "type");

    if (json_is_string(t)) {
        json_object_set_new(s, "type", json_pack("[O, s]", t, "null"));
    } else if (json_is_array(t)) {
        json_array_append_new(t, json_string("null"));
    } else if (json_is_array(json_object_get(s, "enum"))) {
        json_array_append_new(json_object_get(s, "enum"), json_null());
    } else if (json_is_array(json_object_get(s, "anyOf"))) {
        json_array_append_new(json_object_get(s, "anyOf"), json_pack("{s:s}", "type", "null"));
    }
    return s;
}

static json_t *section_schema(void)
{
    return json_pack("{s:[s, s], s:b, s:{}}", "type", "object", "null", "additionalProperties", 0,
                     "properties");
}

/* The `properties` object where the last part of `path` goes, making the
 * sections on the way ("job_launcher.sbatch_directives.time": the
 * properties of sbatch_directives).  Borrowed; NULL when out of memory. */
static json_t *parent_props(json_t *root_props, const char *path, const char **leaf)
{
    json_t *props = root_props;
    const char *p = path, *dot;
    char part[128];

    while ((dot = strchr(p, '.')) != NULL) {
        json_t *sec;
        snprintf(part, sizeof(part), "%.*s", (int)(dot - p), p);
        if (!(sec = json_object_get(props, part))) {
            if (json_object_set_new(props, part, section_schema()) != 0)
                return NULL;
            sec = json_object_get(props, part);
        }
        props = json_object_get(sec, "properties");
        p = dot + 1;
    }
    *leaf = p;
    return props;
}

/* The `tenants:` list (site/config_tenants.c): structure only. */
static json_t *tenants_schema(void)
{
    json_t *names = json_pack("{s:s, s:{s:s}}", "type", "array", "items", "type", "string");
    json_t *lim = json_pack("{s:s, s:i, s:i}", "type", "integer", "minimum", 0, "maximum", 1000000);

    json_t *out;

    out = json_pack(
        "{s:s, s:s, s:{s:s, s:b, s:[s,s,s,s], s:{s:{s:s, s:s}, s:o, s:{s:s}, "
        "s:{s:[s,s,s]}, s:{s:s}, s:{s:s}, s:{s:s, s:b, s:{s:O, s:O, s:O, s:O, s:O}}, "
        "s:{s:s, s:b, s:{s:O, s:O, s:O, s:O}}}}}",
        "type", "array", "description",
        "Tenants: named groups of API callers, each acting on Slurm as its own user within the "
        "site policy (docs/tenants.md). Site file only.",
        "items", "type", "object", "additionalProperties", 0, "required", "name", "callers",
        "slurm_user", "identity", "properties", "name", "type", "string", "pattern",
        "^[a-z0-9][a-z0-9-]{0,31}$", "callers", names, "slurm_user", "type", "string", "identity",
        "enum", "token_file", "mint", "proxy", "jwt_file", "type", "string", "account", "type",
        "string", "policy", "type", "object", "additionalProperties", 0, "properties",
        "allowed_partitions", names, "allowed_accounts", names, "allowed_qos", names,
        "allowed_images", names, "allowed_studies", names, "limits", "type", "object",
        "additionalProperties", 0, "properties", "live_launches", lim, "nodes_in_flight", lim,
        "gpus_in_flight", lim, "accepts_per_minute", lim);
    json_decref(lim); /* each use above took its own reference ("O") */
    return out;
}

sluice_err cfg_ref_schema(json_t **out, sluice_error_t *err)
{
    json_t *root = NULL, *props, *where, *s;
    const char *leaf = NULL;
    bool ok = false;
    size_t i;

    root = json_pack(
        "{s:s, s:s, s:s, s:s, s:b, s:{s:{s:s, s:s, s:{s:s, s:[s]}}, s:{s:[s, s], s:s}}}", "$schema",
        "https://json-schema.org/draft/2020-12/schema", "title", "sluice site file", "description",
        "The site file of sluice (docs/configuration.md), generated by `sluice config reference "
        "--format json-schema` from the field table: do not edit by hand. Structural only: the "
        "loader's cross-field rules still apply.",
        "type", "object", "additionalProperties", 0, "properties", "clusters", "type", "array",
        "description",
        "Several clusters, the first the default: each entry a name and its rest, storage, "
        "job_launcher and gpu_series (docs/configuration.md, \"clusters\").",
        "items", "type", "object", "required", "name", "parent", "type", "object", "null",
        "description", "NVFlare's parent block: parsed, every key reported not used by sluice.");
    if (!root)
        goto out;
    props = json_object_get(root, "properties");
    if ((s = tenants_schema()) == NULL || json_object_set_new(props, "tenants", s) != 0)
        goto out;
    for (i = 0; i < CFG_N_FIELDS; i++) {
        const field_t *f = &cfg_fields[i];
        if (!(where = parent_props(props, f->path, &leaf)) || !(s = or_null(kind_schema(f))) ||
            json_object_set_new(s, "description", json_string(f->doc)) != 0 ||
            json_object_set_new(where, leaf, s) != 0)
            goto out;
    }
    *out = root;
    root = NULL;
    ok = true;
out:
    json_decref(root);
    return ok ? SLUICE_OK : sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
}
