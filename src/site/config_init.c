/* SPDX-License-Identifier: Apache-2.0 */
/* config_init.c - `sluice config init`: a commented starting site file, made
 * from the field table (its descriptions), the defaults of a new model
 * (cfg_new()) and what unset values mean (config_meaning.c), so that the
 * file cannot say other than the loader does.
 *
 * Notes:
 * - The required keys (rest.url, storage.root, job_launcher.sandbox) are
 *   written with a placeholder, "<required: ...>", that the loader refuses
 *   by name (cfg_is_placeholder()) if it is left in; the common keys are
 *   written commented out, with their description and default.
 * - Deterministic: table order, the same bytes for the same table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/version.h>

#include "config_int.h"
#include "config_ref.h"

/* The keys written, in table order: required ones with their placeholder,
 * the others commented out. */
typedef struct {
    const char *path;
    const char *placeholder; /* NULL: a common key, commented out */
} init_key_t;

static const init_key_t init_keys[] = {
    {"site.name", NULL},
    {"rest.url", "<required: https://slurmrestd.example.org:6820>"},
    {"rest.api_version", NULL},
    {"rest.user", NULL},
    {"rest.jwt_file", NULL},
    {"storage.root", "<required: /shared/sluice>"},
    {"storage.cluster_root", NULL},
    {"job_launcher.sandbox", "<required: enroot-pyxis, apptainer or none>"},
    {"job_launcher.image", NULL},
    {"job_launcher.sbatch_directives.partition", NULL},
    {"job_launcher.sbatch_directives.account", NULL},
    {"job_launcher.sbatch_directives.time", NULL},
    {"job_launcher.poll_interval", NULL},
    {"job_launcher.gpu_vendor", NULL},
    {"policy.max_time_minutes", NULL},
    {"server.socket", NULL},
    {"server.listen", NULL},
    {"server.tokens_file", NULL},
    {"store.url", NULL},
    {"log.level", NULL},
};

#define N_INIT_KEYS (sizeof(init_keys) / sizeof(init_keys[0]))

const char *cfg_init_required(size_t i)
{
    size_t k, seen = 0;

    for (k = 0; k < N_INIT_KEYS; k++) {
        if (init_keys[k].placeholder && seen++ == i)
            return init_keys[k].path;
    }
    return NULL;
}

/* `text` as comment lines at `indent`, cut at spaces to fit 80 columns. */
static void comment(FILE *f, int indent, const char *text)
{
    const char *p = text;
    int width = 76 - indent;

    while (*p) {
        int len = (int)strlen(p), cut = len;
        if (len > width) {
            for (cut = width; cut > 0 && p[cut] != ' '; cut--)
                ;
            if (cut == 0)
                cut = width;
        }
        fprintf(f, "%*s# %.*s\n", indent, "", cut, p);
        p += cut;
        while (*p == ' ')
            p++;
    }
}

/* The value at dotted `path` of the JSON of a model, or NULL. */
static json_t *at_path(json_t *conf, const char *path)
{
    char part[128];
    const char *dot;

    while (conf && (dot = strchr(path, '.')) != NULL) {
        snprintf(part, sizeof(part), "%.*s", (int)(dot - path), path);
        conf = json_object_get(conf, part);
        path = dot + 1;
    }
    return conf ? json_object_get(conf, path) : NULL;
}

/* Open the mappings of `path`'s parents that `open` (the parents written
 * last, "a.b") does not share, as whole parts; update `open`. */
static void open_sections(FILE *f, const char *path, char *open, size_t cap)
{
    const char *last = strrchr(path, '.');
    size_t plen = last ? (size_t)(last - path) : 0, olen = strlen(open), i = 0, depth = 0, len;

    while (i < plen && i < olen) {
        len = strcspn(path + i, ".");
        if (strncmp(open + i, path + i, len) != 0 ||
            (open[i + len] != '.' && open[i + len] != '\0'))
            break;
        depth++;
        i += len + 1;
    }
    for (; i < plen; i += len + 1) {
        len = strcspn(path + i, ".");
        if (depth == 0)
            fputc('\n', f);
        fprintf(f, "%*s%.*s:\n", (int)(2 * depth), "", (int)len, path + i);
        depth++;
    }
    snprintf(open, cap, "%.*s", (int)plen, path);
}

static sluice_err write_init(FILE *f, json_t *shown)
{
    json_t *conf = json_object_get(shown, "config"), *effs = json_object_get(shown, "effective");
    char open[256] = "", *val;
    const char *meaning, *leaf;
    size_t i, depth, k;
    const field_t *fl;

    fprintf(f,
            "# A sluice site file, from `sluice config init` (sluice %s).\n"
            "# Replace every \"<required: ...>\" value (the loader refuses one left in),\n"
            "# uncomment what the site needs, then check it:\n"
            "#   sluice config show --config FILE\n"
            "# Every key: docs/config-reference.md or `sluice config reference`; a key\n"
            "# left out keeps its default.\n",
            SLUICE_VERSION_STRING);
    for (k = 0; k < N_INIT_KEYS; k++) {
        if (!(fl = cfg_find_field(init_keys[k].path)))
            continue;
        open_sections(f, fl->path, open, sizeof(open));
        for (depth = 0, i = 0; fl->path[i]; i++)
            depth += fl->path[i] == '.';
        leaf = strrchr(fl->path, '.');
        leaf = leaf ? leaf + 1 : fl->path;
        comment(f, (int)(2 * depth), fl->doc);
        if (init_keys[k].placeholder) {
            fprintf(f, "%*s%s: \"%s\"\n", (int)(2 * depth), "", leaf, init_keys[k].placeholder);
            continue;
        }
        meaning = json_string_value(json_object_get(effs, fl->path));
        if (meaning) {
            char line[600];
            snprintf(line, sizeof(line), "Default: %s.", meaning);
            comment(f, (int)(2 * depth), line);
            fprintf(f, "%*s# %s:\n", (int)(2 * depth), "", leaf);
            continue;
        }
        if (json_is_null(at_path(conf, fl->path))) {
            comment(f, (int)(2 * depth), "Default: unset.");
            fprintf(f, "%*s# %s:\n", (int)(2 * depth), "", leaf);
            continue;
        }
        val = json_dumps(at_path(conf, fl->path), JSON_ENCODE_ANY | JSON_COMPACT);
        if (!val)
            return SLUICE_ENOMEM;
        fprintf(f, "%*s# %s: %s\n", (int)(2 * depth), "", leaf, val);
        free(val);
    }
    return SLUICE_OK;
}

sluice_err cfg_init_text(char **out, sluice_error_t *err)
{
    sluice_config_t *cfg = NULL;
    json_t *shown = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = NULL;
    sluice_err rc;

    if (!out)
        return sluice_errorf(err, SLUICE_EINVAL, "cfg_init_text: NULL argument");
    if ((rc = cfg_new(&cfg, err)) != SLUICE_OK)
        goto out;
    if ((rc = sluice_config_to_json(cfg, &shown, err)) != SLUICE_OK)
        goto out;
    if (!(f = open_memstream(&text, &len))) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    rc = write_init(f, shown);
    if (fclose(f) != 0 && rc == SLUICE_OK)
        rc = SLUICE_ENOMEM;
    if (rc != SLUICE_OK) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    *out = text;
    text = NULL;
out:
    free(text);
    json_decref(shown);
    sluice_config_free(cfg);
    return rc;
}
