/* SPDX-License-Identifier: Apache-2.0 */
/* table_opts.h - the options of the `sluice` command (table_opts.c), one
 * cli_opt_t each, named by the commands of the table (table.c) that take
 * them.
 *
 * Notes:
 * - Private to table.c and table_opts.c: the parser, the help and gendoc
 *   reach an option through its command's entry (table.h), never by name.
 * - The groups below are the options several commands share; every
 *   command takes LOG_OPTS.
 */
#ifndef SLUICE_CLI_TABLE_OPTS_H
#define SLUICE_CLI_TABLE_OPTS_H

#include "table.h"

extern const cli_opt_t cli_opt_output;
extern const cli_opt_t cli_opt_log_level;
extern const cli_opt_t cli_opt_log_format;
extern const cli_opt_t cli_opt_state_dir;
extern const cli_opt_t cli_opt_server;
extern const cli_opt_t cli_opt_token_file;
extern const cli_opt_t cli_opt_api_ca;
extern const cli_opt_t cli_opt_config;
extern const cli_opt_t cli_opt_set;
extern const cli_opt_t cli_opt_study_runtime;
extern const cli_opt_t cli_opt_heartbeat;
extern const cli_opt_t cli_opt_wait;
extern const cli_opt_t cli_opt_api_version;
extern const cli_opt_t cli_opt_state;
extern const cli_opt_t cli_opt_site;
extern const cli_opt_t cli_opt_study;
extern const cli_opt_t cli_opt_cluster_filter;
extern const cli_opt_t cli_opt_cluster;
extern const cli_opt_t cli_opt_live;
extern const cli_opt_t cli_opt_terminal;
extern const cli_opt_t cli_opt_limit;
extern const cli_opt_t cli_opt_cursor;
extern const cli_opt_t cli_opt_sort;
extern const cli_opt_t cli_opt_reverse;
extern const cli_opt_t cli_opt_stderr;
extern const cli_opt_t cli_opt_follow;
extern const cli_opt_t cli_opt_listen;
extern const cli_opt_t cli_opt_tokens;
extern const cli_opt_t cli_opt_tls_cert;
extern const cli_opt_t cli_opt_tls_key;
extern const cli_opt_t cli_opt_socket;
extern const cli_opt_t cli_opt_socket_group;
extern const cli_opt_t cli_opt_probe_job;
extern const cli_opt_t cli_opt_probe_timeout;
extern const cli_opt_t cli_opt_ready;
extern const cli_opt_t cli_opt_timeout;
extern const cli_opt_t cli_opt_key;
extern const cli_opt_t cli_opt_user;
extern const cli_opt_t cli_opt_lifespan;
extern const cli_opt_t cli_opt_alg;
extern const cli_opt_t cli_opt_kid;
extern const cli_opt_t cli_opt_ref_format;
extern const cli_opt_t cli_opt_init_output; /* config init: --out FILE */
extern const cli_opt_t cli_opt_force;

/* The service options (--server ...), the site options and the log
 * options, in the order of the help. */
#define SERVICE_OPTS &cli_opt_server, &cli_opt_token_file, &cli_opt_api_ca
#define SITE_OPTS &cli_opt_config, &cli_opt_set
#define LOG_OPTS &cli_opt_log_level, &cli_opt_log_format

#endif /* SLUICE_CLI_TABLE_OPTS_H */
