/* SPDX-License-Identifier: Apache-2.0 */
/* config_meaning.c - what an unset value means: the words `sluice config
 * show` prints for a field whose unset value (a NULL string, 0, an empty
 * list) stands for something ("nvidia", "auto: 2s, 10s on v0.0.38"), and
 * `sluice config init` writes beside its key.
 *
 * Notes:
 * - One row per such field; test_config_show checks that every row names
 *   a field of the table and that every field whose description says
 *   "unset," or "empty," has a row.
 * - The table is data, read by cfg_meaning(); nothing here changes a
 *   model.
 */
#include <stdio.h>
#include <string.h>

#include "config_int.h"

typedef struct {
    const char *path;
    const char *meaning;
} meaning_t;

static const meaning_t meanings[] = {
    {"rest.user", "the token's own user"},
    {"storage.cluster_root", "the same as storage.root"},
    {"job_launcher.sbatch_directives.partition", "Slurm's default partition"},
    {"job_launcher.sbatch_directives.account", "the user's default account"},
    {"job_launcher.sbatch_directives.qos", "the account's default QOS"},
    {"job_launcher.sbatch_directives.time", "the partition's default time"},
    {"job_launcher.job_path", NULL}, /* made by cfg_meaning() */
    {"job_launcher.poll_interval", "auto: 2s, 10s on v0.0.38"},
    {"job_launcher.unschedulable_reasons", "the built-in list"},
    {"job_launcher.workspace", "none"},
    {"job_launcher.gpu_vendor", "nvidia"},
    {"policy.allowed_profiles", "the site's sandbox only"},
    {"policy.allowed_partitions", "only the site's own"},
    {"policy.allowed_accounts", "only the site's own"},
    {"policy.allowed_qos", "only the site's own"},
    {"policy.max_time_minutes", "no cap"},
    {"policy.default_gpu_series", "none: a pool asking for GPUs without a series is refused"},
    {"policy.allowed_images", "none: every job image is refused"},
    {"policy.allowed_secret_env", "none"},
    {"server.listen", "none: no TCP listener"},
    {"server.socket_group", "the process's group"},
    {"retention.launches_max_age_s", "keep forever"},
    {"retention.logs_max_age_s", "keep forever"},
    {"webhooks.url", "none"},
    {"store.url", "SQLite in the state directory"},
    {"store.password_file", "libpq's own (PGPASSFILE, ~/.pgpass)"},
    {"ha.replica_id", "$SLUICE_REPLICA_ID, else <hostname>:<pid>"},
    {"log.level", "warning"},
    {"log.format", "text"},
};

#define N_MEANINGS (sizeof(meanings) / sizeof(meanings[0]))

size_t cfg_meaning_count(void)
{
    return N_MEANINGS;
}

const char *cfg_meaning_path(size_t i)
{
    return i < N_MEANINGS ? meanings[i].path : NULL;
}

/* NULL, 0 or an empty list, as the kind of `f` keeps it. */
static bool is_unset(const sluice_config_t *cfg, const field_t *f)
{
    const void *slot = (const char *)cfg + f->off;

    switch (f->kind) {
    case K_INT:
    case K_DUR:
        return *(const long *)slot == 0;
    case K_LINES:
    case K_LIST:
    case K_ENVLIST:
    case K_PROFILES:
    case K_ARGV:
        return ((const sluice_strlist_t *)slot)->n == 0;
    case K_STR:
    case K_NAME:
    case K_HOST:
    case K_ABS:
    case K_DBURL:
    case K_STIME:
    case K_JOBPATH:
    case K_GPUVENDOR:
    case K_LOGLEVEL:
    case K_LOGFORMAT:
        return *(char *const *)slot == NULL;
    default:
        return false;
    }
}

/* The default PATH of the jobs, as render_job_path() makes it: srun's
 * directory first when it is set and not already one of the three. */
static const char *job_path(const sluice_config_t *cfg, char *buf, size_t cap)
{
    static const char base[] = "/usr/local/bin:/usr/bin:/bin";
    const char *srun = sluice_config_executable(cfg, "srun");
    const char *p = base;
    size_t dir_len, len;

    snprintf(buf, cap, "%s", base);
    if (!srun)
        return buf;
    dir_len = (size_t)(strrchr(srun, '/') - srun);
    if (dir_len == 0)
        dir_len = 1;
    while (*p) {
        len = strcspn(p, ":");
        if (len == dir_len && strncmp(p, srun, len) == 0)
            return buf;
        p += len + (p[len] == ':');
    }
    snprintf(buf, cap, "%.*s:%s", (int)dir_len, srun, base);
    return buf;
}

const char *cfg_meaning(const sluice_config_t *cfg, const field_t *f, char *buf, size_t cap)
{
    size_t i;

    for (i = 0; i < N_MEANINGS; i++) {
        if (strcmp(meanings[i].path, f->path) != 0)
            continue;
        if (cfg && !is_unset(cfg, f))
            return NULL;
        if (!meanings[i].meaning)
            return cfg ? job_path(cfg, buf, cap)
                       : (snprintf(buf, cap,
                                   "/usr/local/bin:/usr/bin:/bin, srun's directory first"),
                          buf);
        snprintf(buf, cap, "%s", meanings[i].meaning);
        return buf;
    }
    return NULL;
}
