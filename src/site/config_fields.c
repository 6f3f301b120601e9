/* SPDX-License-Identifier: Apache-2.0 */
/* config_fields.c - the table of site fields: dotted path, kind, place in
 * sluice_config_t, limits and FORGE_* variable, and lookups in it.
 *
 * Notes:
 * - One row per key of the site file; config.c walks the file, the
 *   environment and --set through this table, config_json.c prints it.
 * - The table is data only: nothing here calls another file.
 */
#include <stddef.h>
#include <string.h>

#include "config_int.h"

#define F(p, k, m, lo, hi, fe)                                                                     \
    {                                                                                              \
        p, k, offsetof(sluice_config_t, m), lo, hi, fe                                             \
    }

const field_t cfg_fields[] = {
    F("runtime", K_RUNTIME, site_name, 0, 0, NULL),
    F("site.name", K_NAME, site_name, 0, 0, NULL),
    F("site.job_name_prefix", K_PREFIX, job_name_prefix, 0, 0, NULL),
    F("rest.url", K_URL, rest.url, 0, 0, "FORGE_SLURM_REST_URL"),
    F("rest.api_version", K_APIVER, rest.api_version, 0, 0, "FORGE_SLURM_REST_API_VERSION"),
    F("rest.user", K_STR, rest.user, 0, 0, "FORGE_SLURM_REST_USER"),
    F("rest.jwt_file", K_ABS, rest.jwt_file, 0, 0, "FORGE_SLURM_JWT_FILE"),
    F("rest.jwt_key_file", K_ABS, rest.jwt_key_file, 0, 0, NULL),
    F("rest.jwt_rs256_key_file", K_ABS, rest.jwt_rs256_key_file, 0, 0, NULL),
    F("rest.jwt_lifespan", K_DUR, rest.jwt_lifespan_s, 60, 86400, NULL),
    F("rest.tls_verify", K_BOOL, rest.tls_verify, 0, 0, "FORGE_SLURM_TLS_VERIFY"),
    F("rest.ca_file", K_ABS, rest.ca_file, 0, 0, NULL),
    F("rest.ca_path", K_ABS, rest.ca_path, 0, 0, NULL),
    F("rest.pinned_pubkey", K_STR, rest.pinned_pubkey, 0, 0, NULL),
    F("rest.client_cert", K_ABS, rest.client_cert, 0, 0, NULL),
    F("rest.client_key", K_ABS, rest.client_key, 0, 0, NULL),
    F("rest.allow_insecure_http", K_BOOL, rest.allow_insecure_http, 0, 0, NULL),
    F("rest.strict_permissions", K_BOOL, rest.strict_permissions, 0, 0, NULL),
    F("storage.root", K_ABS, storage.root, 0, 0, "FORGE_STORAGE_ROOT"),
    F("storage.cluster_root", K_ABS, storage.cluster_root, 0, 0, "FORGE_SLURM_STORAGE_ROOT"),
    F("job_launcher.sandbox", K_SANDBOX, launcher.sandbox, 0, 0, "FORGE_SLURM_RUNTIME_PROFILE"),
    F("job_launcher.image", K_ABS, launcher.image, 0, 0, NULL),
    F("job_launcher.python_path", K_ABS, launcher.python_path, 0, 0, NULL),
    F("job_launcher.parent_host", K_HOST, launcher.parent_host, 0, 0, NULL),
    F("job_launcher.sbatch_directives.partition",
      K_STR,
      launcher.sbatch.partition,
      0,
      0,
      "FORGE_SLURM_PARTITION"),
    F("job_launcher.sbatch_directives.account", K_STR, launcher.sbatch.account, 0, 0, NULL),
    F("job_launcher.sbatch_directives.qos", K_STR, launcher.sbatch.qos, 0, 0, NULL),
    F("job_launcher.sbatch_directives.time", K_STIME, launcher.sbatch.time, 0, 0, NULL),
    F("job_launcher.sbatch_directives.constraint", K_STR, launcher.sbatch.constraint, 0, 0, NULL),
    F("job_launcher.sbatch_directives.reservation", K_STR, launcher.sbatch.reservation, 0, 0, NULL),
    F("job_launcher.setup", K_LINES, launcher.setup, 0, 0, NULL),
    F("job_launcher.forward_env", K_ENVLIST, launcher.forward_env, 0, 0, NULL),
    F("job_launcher.executables", K_EXECS, launcher.executables, 0, 0, NULL),
    F("job_launcher.job_path", K_JOBPATH, launcher.job_path, 0, 0, NULL),
    F("job_launcher.internal_port", K_INT, launcher.internal_port, 1, 65535, NULL),
    F("job_launcher.poll_interval", K_DUR, launcher.poll_interval_s, 1, 3600, NULL),
    F("job_launcher.submit_timeout", K_DUR, launcher.submit_timeout_s, 1, 3600, NULL),
    F("job_launcher.query_timeout", K_DUR, launcher.query_timeout_s, 1, 3600, NULL),
    F("job_launcher.cancel_timeout", K_DUR, launcher.cancel_timeout_s, 1, 3600, NULL),
    F("job_launcher.pending_timeout", K_DUR, launcher.pending_timeout_s, 1, 30 * 86400, NULL),
    F("job_launcher.fail_unschedulable", K_BOOL, launcher.fail_unschedulable, 0, 0, NULL),
    F("job_launcher.unschedulable_reasons", K_LIST, launcher.unschedulable_reasons, 0, 0, NULL),
    F("job_launcher.multi_node_port_range", K_PORTRANGE, launcher.port_range_lo, 1, 65535, NULL),
    F("job_launcher.internal_connection_security",
      K_ICS,
      launcher.internal_connection_security,
      0,
      0,
      NULL),
    F("job_launcher.workspace", K_ABS, launcher.workspace, 0, 0, NULL),
    F("job_launcher.gpu_vendor", K_GPUVENDOR, launcher.gpu_vendor, 0, 0, NULL),
    F("gpu_series", K_SERIES, gpu_series, 0, 0, NULL),
    F("policy.allowed_profiles", K_PROFILES, policy.allowed_profiles, 0, 0, NULL),
    F("policy.allowed_partitions", K_LIST, policy.allowed_partitions, 0, 0, NULL),
    F("policy.allowed_accounts", K_LIST, policy.allowed_accounts, 0, 0, NULL),
    F("policy.allowed_qos", K_LIST, policy.allowed_qos, 0, 0, NULL),
    F("policy.allow_requeue", K_BOOL, policy.allow_requeue, 0, 0, NULL),
    F("policy.max_time_minutes", K_INT, policy.max_time_minutes, 1, 525600 * 10, NULL),
    F("policy.default_gpu_series", K_NAME, policy.default_gpu_series, 0, 0, NULL),
    F("policy.allowed_images", K_LIST, policy.allowed_images, 0, 0, NULL),
    F("policy.allowed_secret_env", K_LIST, policy.allowed_secret_env, 0, 0, NULL),
    F("policy.keep_going", K_BOOL, policy.keep_going, 0, 0, NULL),
    F("policy.allow_keep_going", K_BOOL, policy.allow_keep_going, 0, 0, NULL),
    F("accounting.miss_budget", K_INT, accounting.miss_budget, 1, 1000, NULL),
    F("accounting.miss_spacing_s", K_DUR, accounting.miss_spacing_s, 1, 3600, NULL),
    F("submit.absence_delay_s", K_DUR, submit.absence_delay_s, 1, 86400, NULL),
    F("submit.absence_lookups", K_INT, submit.absence_lookups, 1, 100, NULL),
    F("submit.absence_spacing_s", K_DUR, submit.absence_spacing_s, 1, 3600, NULL),
    F("server.listen", K_HOST, server.listen, 0, 0, NULL),
    F("server.tokens_file", K_ABS, server.tokens_file, 0, 0, NULL),
    F("server.socket", K_ABS, server.socket, 0, 0, NULL),
    F("server.socket_mode", K_MODE, server.socket_mode, 0, 0770, NULL),
    F("server.socket_group", K_NAME, server.socket_group, 0, 0, NULL),
    F("server.tls_cert", K_ABS, server.tls_cert, 0, 0, NULL),
    F("server.tls_key", K_ABS, server.tls_key, 0, 0, NULL),
    F("server.threads", K_INT, server.threads, 1, 64, NULL),
    F("server.conn_timeout_s", K_DUR, server.conn_timeout_s, 1, 3600, NULL),
    F("server.max_connections", K_INT, server.max_connections, 16, 1000000, NULL),
    F("server.head_timeout_s", K_DUR, server.head_timeout_s, 1, 600, NULL),
    F("retention.launches_max_age_s",
      K_DUR,
      retention.launches_max_age_s,
      0,
      100L * 365 * 86400,
      NULL),
    F("retention.logs_max_age_s", K_DUR, retention.logs_max_age_s, 0, 100L * 365 * 86400, NULL),
    F("submit.in_flight", K_INT, submit.in_flight, 1, 16, NULL),
    F("submit.per_sec", K_INT, submit.per_sec, 1, 100000, NULL),
    F("poll.rpc_per_sec", K_INT, poll.rpc_per_sec, 1, 100000, NULL),
    F("webhooks.url", K_STR, webhooks.url, 0, 0, NULL),
    F("webhooks.secret_file", K_ABS, webhooks.secret_file, 0, 0, NULL),
    F("webhooks.queue_max", K_INT, webhooks.queue_max, 1, 10000000, NULL),
    F("webhooks.timeout_s", K_DUR, webhooks.timeout_s, 1, 300, NULL),
    F("webhooks.retry_initial_s", K_DUR, webhooks.retry_initial_s, 1, 86400, NULL),
    F("webhooks.retry_max_s", K_DUR, webhooks.retry_max_s, 1, 7 * 86400, NULL),
    F("webhooks.max_attempts", K_INT, webhooks.max_attempts, 1, 100000, NULL),
    F("webhooks.allow_insecure_http", K_BOOL, webhooks.allow_insecure_http, 0, 0, NULL),
    F("webhooks.allow_request_urls", K_BOOL, webhooks.allow_request_urls, 0, 0, NULL),
    F("webhooks.request_url_prefixes", K_LIST, webhooks.request_url_prefixes, 0, 0, NULL),
    F("store.url", K_DBURL, store.url, 0, 0, NULL),
    F("store.password_file", K_ABS, store.password_file, 0, 0, NULL),
    F("store.log_max_bytes", K_INT, store.log_max_bytes, 4096, 256L << 20, NULL),
    F("ha.lease_ms", K_INT, ha.lease_ms, 1000, 600000, NULL),
    F("ha.renew_ms", K_INT, ha.renew_ms, 100, 300000, NULL),
    F("ha.replica_id", K_STR, ha.replica_id, 0, 0, NULL),
    F("log.level", K_LOGLEVEL, log.level, 0, 0, NULL),
    F("log.format", K_LOGFORMAT, log.format, 0, 0, NULL),
};

_Static_assert(sizeof(cfg_fields) / sizeof(cfg_fields[0]) == CFG_N_FIELDS,
               "CFG_N_FIELDS is the number of rows of cfg_fields");

const field_t *cfg_find_field(const char *path)
{
    size_t i;

    for (i = 0; i < CFG_N_FIELDS; i++) {
        if (strcmp(cfg_fields[i].path, path) == 0)
            return &cfg_fields[i];
    }
    return NULL;
}

bool cfg_is_section(const char *path)
{
    size_t i, len = strlen(path);

    for (i = 0; i < CFG_N_FIELDS; i++) {
        if (strncmp(cfg_fields[i].path, path, len) == 0 && cfg_fields[i].path[len] == '.')
            return true;
    }
    return false;
}

size_t cfg_field_index(const char *path)
{
    const field_t *f = cfg_find_field(path);

    return f ? (size_t)(f - cfg_fields) : 0;
}

bool cfg_field_per_cluster(const field_t *f)
{
    return strncmp(f->path, "rest.", 5) == 0 || strncmp(f->path, "storage.", 8) == 0 ||
           strncmp(f->path, "job_launcher.sbatch_directives.", 31) == 0 ||
           strcmp(f->path, "gpu_series") == 0;
}
