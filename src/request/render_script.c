/* SPDX-License-Identifier: Apache-2.0 */
/* render_script.c - the batch script of a launch render: fixed text plus
 * values, one srun step per pool (render_emit_script()).
 *
 * Notes:
 * - Every value goes through shquote_append(): nothing a caller sends can
 *   become shell syntax.  Trusted text is limited to the site's and the
 *   study's `setup` lines.
 * - Every variable sluice exports is recorded (SLUICE_EXPORTED): under
 *   apptainer each is mirrored as APPTAINERENV_<NAME>, which --containall
 *   passes in as <NAME>; under enroot-pyxis the list is srun's --export
 *   and pyxis' --container-env (render_container.c).
 * - forward_env is read after setup: the values the job has then, not the
 *   service's (NVFlare's meaning: "module load" sets them).
 * - Steps that run on the nodes through a task wrapper (apptainer, and
 *   multi-node pools with an additional_node_command) get the wrapper's
 *   fixed text (render_task_wrapper) and quoted argument words only.
 * - A multi-node pool without an additional_node_command leaves the
 *   fan-out to the application (profile none): its command runs in the
 *   batch step itself, as NVFlare runs it, so the application's own srun
 *   gets the whole allocation; a later component of a hetjob runs it with
 *   `srun --overlap` on its first node.
 * - srun and apptainer come from render_srun() and render_apptainer(), the
 *   same commands the probe job uses (render_int.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/render.h>

#include "base/buf.h"
#include "base/shquote.h"
#include "launch.h"
#include "render_int.h"

#define SCRIPT_MAX (4u * 1024u * 1024u)

/* Split a shell-free command line on blanks into a new argv. */
static char **split_words(const char *line, size_t *n_out)
{
    char **v = NULL;
    size_t n = 0;
    const char *p = line;

    while (*p) {
        const char *start;
        char **nv;

        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        nv = realloc(v, (n + 2) * sizeof(*v));
        if (!nv)
            goto fail;
        v = nv;
        if ((v[n] = strndup(start, (size_t)(p - start))) == NULL)
            goto fail;
        v[++n] = NULL;
    }
    *n_out = n;
    if (!v)
        v = calloc(1, sizeof(*v));
    return v;
fail:
    while (n > 0)
        free(v[--n]);
    free(v);
    return NULL;
}

static void free_words(char **v, size_t n)
{
    size_t i;

    for (i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- the script ---------------------------------------------------------- */

static const char script_functions[] =
    "sluice_die() {\n"
    "    local code=$1\n"
    "    shift\n"
    "    printf 'sluice: %s\\n' \"$*\" >&2\n"
    "    exit \"$code\"\n"
    "}\n"
    "sluice_export() {\n"
    "    export \"$1=$2\"\n"
    "    SLUICE_EXPORTED+=(\"$1\")\n"
    "    if [ \"$SLUICE_PROFILE\" = apptainer ]; then export \"APPTAINERENV_$1=$2\"; fi\n"
    "}\n";

/* enroot-pyxis: the exported names, comma-joined (srun --export and pyxis
 * --container-env). */
static const char names_function[] = "sluice_names() {\n"
                                     "    local IFS=,\n"
                                     "    printf '%s' \"${SLUICE_EXPORTED[*]}\"\n"
                                     "}\n";

/* apptainer, after setup: the runtime's settings come from sluice only. */
static const char apptainer_reset[] =
    "# apptainer takes its settings from sluice only: whatever setup left in\n"
    "# APPTAINER_* / SINGULARITY_* (binds, options, variables) is dropped, and\n"
    "# the container's variables are mirrored again from the exported ones.\n"
    "for sluice_n in ${!APPTAINER_@} ${!APPTAINERENV_@} ${!SINGULARITY_@} "
    "${!SINGULARITYENV_@}; do\n"
    "    unset \"$sluice_n\"\n"
    "done\n"
    "for sluice_n in ${SLUICE_EXPORTED[@]+\"${SLUICE_EXPORTED[@]}\"}; do\n"
    "    if [ -n \"${!sluice_n+x}\" ]; then export \"APPTAINERENV_$sluice_n=${!sluice_n}\"; fi\n"
    "done\n";

static const char host_function[] =
    "# First host of a Slurm hostlist: scontrol when present, else pure bash\n"
    "# (\"node[03-05,9]\" -> \"node03\").\n"
    "sluice_first_host() {\n"
    "    local l=$1 pre rest inner hs\n"
    "    if [ -z \"$l\" ]; then return 0; fi\n"
    "    if command -v scontrol >/dev/null 2>&1 && hs=$(scontrol show hostnames \"$l\" "
    "2>/dev/null); then\n"
    "        printf '%s\\n' \"${hs%%$'\\n'*}\"\n"
    "        return 0\n"
    "    fi\n"
    "    pre=${l%%[[,]*}\n"
    "    rest=${l:${#pre}}\n"
    "    if [ \"${rest:0:1}\" != \"[\" ]; then\n"
    "        printf '%s\\n' \"$pre\"\n"
    "        return 0\n"
    "    fi\n"
    "    inner=${rest:1}\n"
    "    inner=${inner%%]*}\n"
    "    inner=${inner%%,*}\n"
    "    inner=${inner%%-*}\n"
    "    printf '%s%s\\n' \"$pre\" \"$inner\"\n"
    "}\n"
    "# A node's address as Slurm reaches it (NodeAddr; the name may not resolve\n"
    "# on the other nodes): scontrol when present, else the name, which is what\n"
    "# NodeAddr defaults to.\n"
    "sluice_node_addr() {\n"
    "    local rec w words\n"
    "    if command -v scontrol >/dev/null 2>&1 && rec=$(scontrol show node -o \"$1\" "
    "2>/dev/null); then\n"
    "        read -r -a words <<<\"$rec\"\n"
    "        for w in \"${words[@]}\"; do\n"
    "            case $w in NodeAddr=?*) printf '%s\\n' \"${w#NodeAddr=}\"; return 0 ;; esac\n"
    "        done\n"
    "    fi\n"
    "    printf 'sluice: no NodeAddr known for %s; using its name\\n' \"$1\" >&2\n"
    "    printf '%s\\n' \"$1\"\n"
    "}\n";

static const char step_function[] =
    "# A status as the shell reports one: 0-255 in decimal.\n"
    "sluice_is_status() {\n"
    "    case $1 in\n"
    "    [0-9] | [1-9][0-9] | 1[0-9][0-9] | 2[0-4][0-9] | 25[0-5]) return 0 ;;\n"
    "    esac\n"
    "    return 1\n"
    "}\n"
    "# Run one pool's step; record its exit status in exit/<pool>.  TERM is\n"
    "# passed on to srun, which stops the step's tasks (also one that came\n"
    "# before srun was started).\n"
    "sluice_step() {\n"
    "    local pool=$1 rc=0 child= stop=0\n"
    "    shift\n"
    "    trap 'stop=1; if [ -n \"$child\" ]; then kill -TERM \"$child\" 2>/dev/null || true; fi' "
    "TERM\n"
    "    \"$@\" &\n"
    "    child=$!\n"
    "    if [ \"$stop\" = 1 ]; then kill -TERM \"$child\" 2>/dev/null || true; fi\n"
    "    wait \"$child\" || true\n"
    "    while kill -0 \"$child\" 2>/dev/null; do\n"
    "        wait \"$child\" || true\n"
    "    done\n"
    "    # a wait cut short by the trap says 143, not how srun ended: ask again\n"
    "    wait \"$child\" || rc=$?\n"
    "    # bash has answered that second wait with -1 (a status it no longer\n"
    "    # held): only a status 0-255 is ever recorded, anything else is 255\n"
    "    if ! sluice_is_status \"$rc\"; then\n"
    "        printf 'sluice: pool %s: no exit status known (wait said %s); recorded as 255\\n' \\\n"
    "            \"$pool\" \"$rc\" >&2\n"
    "        rc=255\n"
    "    fi\n"
    "    printf '%s\\n' \"$rc\" >\"$SLUICE_STAGING/exit/$pool\"\n"
    "    return \"$rc\"\n"
    "}\n";

/* The script's TERM/INT trap: exit/.signalled, and TERM to every pool
 * started so far. */
static const char signal_trap[] =
    "sluice_signalled=0\n"
    "trap 'sluice_signalled=1; { : >\"$SLUICE_STAGING/exit/.signalled\"; } 2>/dev/null || true; "
    "kill -TERM \"${SLUICE_PIDS[@]}\" 2>/dev/null || true' TERM INT\n";

/* exit/.first ("<pool> <code>") is sluice's record of the pool that failed
 * first on its own.  It is written only while the script itself has not
 * been signalled: after an outside cancel every pool reads 143 or 137, and
 * none of them failed.  exit/.signalled (empty) is the TERM/INT trap's own
 * record: the script was signalled, so a pool that exits 1 on its way out
 * (a workload that handles SIGTERM) did not fail on its own. */
static const char wait_block[] =
    "SLUICE_FIRST_RC=0\n"
    "SLUICE_FIRST_POOL=\n"
    "sluice_stopped=0\n"
    "sluice_record_first() {\n"
    "    SLUICE_FIRST_POOL=$1\n"
    "    SLUICE_FIRST_RC=$2\n"
    "    if [ \"$sluice_signalled\" = 0 ]; then\n"
    "        printf '%s %s\\n' \"$1\" \"$2\" >\"$SLUICE_STAGING/exit/.first\"\n"
    "    fi\n"
    "}\n"
    "sluice_scan() {\n"
    "    local p rc\n"
    "    for p in \"${SLUICE_POOLS[@]}\"; do\n"
    "        if [ -z \"$SLUICE_FIRST_POOL\" ] && [ -s \"$SLUICE_STAGING/exit/$p\" ]; then\n"
    "            rc=$(<\"$SLUICE_STAGING/exit/$p\")\n"
    "            sluice_is_status \"$rc\" || rc=255\n"
    "            if [ \"$rc\" != 0 ]; then sluice_record_first \"$p\" \"$rc\"; fi\n"
    "        fi\n"
    "    done\n"
    "}\n"
    "sluice_alive() {\n"
    "    local pid\n"
    "    for pid in \"${SLUICE_PIDS[@]}\"; do\n"
    "        if kill -0 \"$pid\" 2>/dev/null; then return 0; fi\n"
    "    done\n"
    "    return 1\n"
    "}\n"
    "while sluice_alive; do\n"
    "    wait -n 2>/dev/null || true\n"
    "    sluice_scan\n"
    "    if [ -n \"$SLUICE_FIRST_POOL\" ] && [ \"$SLUICE_STOP_ON_FAILURE\" = 1 ] &&\n"
    "        [ \"$sluice_stopped\" = 0 ]; then\n"
    "        sluice_stopped=1\n"
    "        printf 'sluice: pool %s failed (exit %s); stopping the other pools\\n' \\\n"
    "            \"$SLUICE_FIRST_POOL\" \"$SLUICE_FIRST_RC\" >&2\n"
    "        kill -TERM \"${SLUICE_PIDS[@]}\" 2>/dev/null || true\n"
    "    fi\n"
    "done\n"
    "wait || true\n"
    "sluice_scan\n"
    "for sluice_p in \"${SLUICE_POOLS[@]}\"; do\n"
    "    if [ -z \"$SLUICE_FIRST_POOL\" ] && [ ! -s \"$SLUICE_STAGING/exit/$sluice_p\" ]; then\n"
    "        printf '1\\n' >\"$SLUICE_STAGING/exit/$sluice_p\"\n"
    "        sluice_record_first \"$sluice_p\" 1\n"
    "    fi\n"
    "done\n"
    "if [ \"$SLUICE_FIRST_RC\" != 0 ]; then\n"
    "    printf 'sluice: pool %s failed with exit code %s\\n' \"$SLUICE_FIRST_POOL\" "
    "\"$SLUICE_FIRST_RC\" >&2\n"
    "    exit \"$SLUICE_FIRST_RC\"\n"
    "fi\n"
    "exit 0\n";

#define P(s)                                                                                       \
    do {                                                                                           \
        if ((rc = buf_puts(b, (s))) != SLUICE_OK)                                                  \
            goto out;                                                                              \
    } while (0)
#define PF(...)                                                                                    \
    do {                                                                                           \
        if ((rc = buf_printf(b, __VA_ARGS__)) != SLUICE_OK)                                        \
            goto out;                                                                              \
    } while (0)
#define Q(s)                                                                                       \
    do {                                                                                           \
        if ((rc = shquote_append(b, (s))) != SLUICE_OK)                                            \
            goto out;                                                                              \
    } while (0)

/* `sluice_export NAME 'value'` */
static sluice_err emit_export(buf_t *b, const char *indent, const char *name, const char *value)
{
    sluice_err rc;

    PF("%ssluice_export %s ", indent, name);
    Q(value);
    P("\n");
out:
    return rc;
}

/* ` 'word'` for each word. */
static sluice_err emit_words(buf_t *b, char *const *w, size_t n)
{
    sluice_err rc = SLUICE_OK;
    size_t i;

    for (i = 0; i < n; i++) {
        P(" ");
        Q(w[i]);
    }
out:
    return rc;
}

/* The command and arguments of rank 0 (the worker): NVFlare's parent URL
 * gets the site's parent_host (render_parent_url()). */
static sluice_err emit_command(const render_rctx_t *c, buf_t *b, const sluice_launch_pool_t *p)
{
    sluice_err rc = SLUICE_OK;
    size_t i;

    P(" ");
    Q(p->command);
    for (i = 0; i < p->n_args; i++) {
        char *u = render_parent_url(c, p->args[i]);
        P(" ");
        rc = shquote_append(b, u ? u : p->args[i]);
        free(u);
        if (rc != SLUICE_OK)
            goto out;
    }
out:
    return rc;
}

/* The names only rank 0 of a node group keeps: the request's own secrets
 * (per-launch credentials) and NVFlare's job credentials. */
static sluice_err emit_credentials(const render_rctx_t *c, buf_t *b)
{
    sluice_err rc = SLUICE_OK;
    size_t i, j, n = sluice_launch_secret_count(c->l), k;
    bool dup[8] = {false};

    for (j = 0; render_rank0_credentials[j] && j < 8; j++)
        for (i = 0; i < n && !dup[j]; i++)
            dup[j] = strcmp(sluice_launch_secret_name(c->l, i), render_rank0_credentials[j]) == 0;
    for (k = n, j = 0; render_rank0_credentials[j] && j < 8; j++)
        k += !dup[j];
    PF(" '%zu'", k);
    for (i = 0; i < n; i++) {
        P(" ");
        Q(sluice_launch_secret_name(c->l, i));
    }
    for (j = 0; render_rank0_credentials[j] && j < 8; j++) {
        if (dup[j])
            continue;
        P(" ");
        Q(render_rank0_credentials[j]);
    }
out:
    return rc;
}

static sluice_err emit_pool(render_rctx_t *c, buf_t *b, const sluice_render_t *r, size_t k)
{
    const sluice_launch_pool_t *p = &c->s->pools[k];
    sluice_err rc = SLUICE_OK;
    char var[64];
    char num[32];
    char **pre = NULL, **add = NULL;
    size_t n_pre = 0, n_add = 0, i;
    bool multi = p->nodes > 1;
    bool group = multi && p->additional_node_command != NULL; /* launcher-owned ranks */
    bool app_owned = multi && !group;                         /* the application fans out */
    bool apptainer = c->profile == SLUICE_LAUNCH_PROFILE_APPTAINER;
    bool wrapper = group || apptainer;
    uint32_t step_nodes = app_owned ? 1 : p->nodes;

    render_pool_var(p->name, var, sizeof(var));
    PF("\n# pool %s: component %zu, %u node(s), one task per node\n(\n", p->name, k, p->nodes);
    if ((rc = emit_export(b, "    ", "SLUICE_POOL", p->name)) != SLUICE_OK)
        goto out;
    snprintf(num, sizeof(num), "%u", p->nodes);
    if ((rc = emit_export(b, "    ", "SLUICE_NNODES", num)) != SLUICE_OK ||
        (rc = emit_export(b, "    ", "NVFL_NNODES", num)) != SLUICE_OK)
        goto out;
    PF("    sluice_export SLUICE_MASTER_ADDR \"$SLUICE_POOL_%s_HOST\"\n", var);
    PF("    sluice_export NVFL_MASTER_ADDR \"$SLUICE_POOL_%s_HOST\"\n", var);
    snprintf(num, sizeof(num), "%u", r->master_port);
    if ((rc = emit_export(b, "    ", "SLUICE_MASTER_PORT", num)) != SLUICE_OK ||
        (rc = emit_export(b, "    ", "NVFL_MASTER_PORT", num)) != SLUICE_OK)
        goto out;
    if (!group) {
        if ((rc = emit_export(b, "    ", "SLUICE_NODE_RANK", "0")) != SLUICE_OK ||
            (rc = emit_export(b, "    ", "NVFL_NODE_RANK", "0")) != SLUICE_OK)
            goto out;
    }
    if (app_owned && k == 0) {
        /* In the batch step, on the allocation's first node: the
         * application's own srun gets every node of the allocation. */
        P("    cd -- ");
        Q(c->workdir);
        PF("\n    sluice_step %s", p->name);
        if ((rc = emit_command(c, b, p)) != SLUICE_OK)
            goto out;
        P("\n) &\nSLUICE_PIDS+=(\"$!\")\n");
        goto out;
    }
    PF("    sluice_step %s ", p->name);
    if (render_srun(c->cfg))
        Q(render_srun(c->cfg));
    else
        P("srun");
    if (app_owned)
        P(" --overlap");
    if (c->s->n_pools > 1)
        PF(" --het-group=%zu", k);
    PF(" --nodes=%u --ntasks=%u --ntasks-per-node=1", step_nodes, step_nodes);
    if (p->cpus_per_node > 0)
        PF(" --cpus-per-task=%u", p->cpus_per_node);
    if (step_nodes > 1)
        P(" --kill-on-bad-exit=1 --wait=0");
    if (c->profile == SLUICE_LAUNCH_PROFILE_NONE) {
        P(" \\\n        ");
        Q("--chdir");
        P(" ");
        Q(c->workdir);
    } else if (c->profile == SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS) {
        if ((rc = render_emit_pyxis_opts(c, b, r->staging_cluster)) != SLUICE_OK)
            goto out;
    } else if ((rc = render_apptainer_words(c, p, r->staging_cluster, &pre, &n_pre)) != SLUICE_OK) {
        goto out;
    }
    P(" \\\n       ");
    if (!wrapper) {
        if ((rc = emit_command(c, b, p)) != SLUICE_OK)
            goto out;
        P("\n) &\nSLUICE_PIDS+=(\"$!\")\n");
        goto out;
    }
    PF(" bash -c \"$SLUICE_TASK_SH\" sluice-task '%s%s'",
       apptainer ? "a" : (group && c->s->nvflare_form ? "" : "-"),
       group && c->s->nvflare_form ? "n" : "");
    if (group) {
        if ((rc = emit_credentials(c, b)) != SLUICE_OK)
            goto out;
    } else {
        P(" '0'");
    }
    PF(" \\\n        '%zu'", n_pre);
    if ((rc = emit_words(b, pre, n_pre)) != SLUICE_OK)
        goto out;
    PF(" \\\n        '%zu'", p->n_args + 1);
    if ((rc = emit_command(c, b, p)) != SLUICE_OK)
        goto out;
    if (group) {
        if ((add = split_words(p->additional_node_command, &n_add)) == NULL) {
            rc = SLUICE_ENOMEM;
            goto out;
        }
        P(" \\\n       ");
        if ((rc = emit_words(b, add, n_add)) != SLUICE_OK)
            goto out;
    }
    P("\n) &\nSLUICE_PIDS+=(\"$!\")\n");
out:
    for (i = 0; pre && i < n_pre; i++)
        free(pre[i]);
    free(pre);
    free_words(add, n_add);
    return rc;
}

sluice_err render_emit_script(render_rctx_t *c, sluice_render_t *r, char **out)
{
    buf_t bb = BUF_INIT, *b = &bb;
    sluice_err rc = SLUICE_OK;
    const sluice_launch_spec_t *s = c->s;
    char num[32];
    size_t i, k;
    uint32_t wait_s = c->ctx->peers_wait_s ? c->ctx->peers_wait_s : SLUICE_RENDER_PEERS_WAIT_S;
    bool any_wrapper = c->profile == SLUICE_LAUNCH_PROFILE_APPTAINER, sandbox = false;
    const sluice_strlist_t *fw = &c->cfg->launcher.forward_env;
    const sluice_strlist_t *setup_site = &c->cfg->launcher.setup;
    const sluice_strlist_t *setup_study =
        (c->study && c->study->has_setup) ? &c->study->setup : NULL;

    buf_init(b, SCRIPT_MAX);
    P("#!/bin/bash\n");
    PF("# Batch script of sluice launch %s, attempt %u (rendered once; do not edit).\n",
       r->launch_id, r->attempt);
    P("# Steps: requeue guard, identity, peers, environment, secrets, setup and\n"
      "# forward_env, component hosts, one srun step per pool, exit status per pool.\n"
      "# See docs/rendering.md.\n");
    P("set -euo pipefail\nset +x\numask 077\n");
    P("export PATH=");
    Q(c->job_path);
    P(" LANG=");
    Q(RENDER_LANG);
    P("\n");
    P("SLUICE_STAGING=");
    Q(r->staging_cluster);
    P("\nSLUICE_PROFILE=");
    Q(sluice_launch_profile_name(c->profile));
    PF("\nSLUICE_STOP_ON_FAILURE=%d\n", c->ctx->keep_going ? 0 : 1);
    P("export HOME=\"$SLUICE_STAGING\"\n");
    P("SLUICE_EXPORTED=()\n");
    P(script_functions);
    if (c->profile == SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS)
        P(names_function);

    if (!s->requeue) {
        P("\n# 1. Requeue is off for this launch: a requeued job must not run twice.\n");
        P("if [ \"${SLURM_RESTART_COUNT:-0}\" != 0 ]; then\n");
        PF("    sluice_die %d \"job was requeued (SLURM_RESTART_COUNT=$SLURM_RESTART_COUNT) but "
           "requeue is off for this launch; refusing to run twice\"\n",
           SLUICE_RENDER_EXIT_REQUEUED);
        P("fi\n");
    } else {
        P("\n# 1. Requeue is on for this launch: a run starts with none of the exit\n"
          "# files (exit/<pool>, .first, .signalled) of the run before it.\n");
        P("rm -rf -- \"$SLUICE_STAGING/exit\"\n");
    }

    P("\n# 2. Identity of the launch.\n");
    if ((rc = emit_export(b, "", "SLUICE_LAUNCH_ID", r->launch_id)) != SLUICE_OK)
        goto out;
    snprintf(num, sizeof(num), "%u", r->attempt);
    if ((rc = emit_export(b, "", "SLUICE_ATTEMPT", num)) != SLUICE_OK ||
        (rc = emit_export(b, "", "SLUICE_RUN_ID", r->run_id)) != SLUICE_OK ||
        (rc = emit_export(b, "", "NVFL_RUN_ID", r->run_id)) != SLUICE_OK)
        goto out;
    P("sluice_export SLUICE_STAGING \"$SLUICE_STAGING\"\n");

    if (s->depends_on && s->depends_condition == SLUICE_LAUNCH_DEP_AFTER) {
        P("\n# 3. This launch starts after launch ");
        Q(s->depends_on);
        PF(": wait (at most %u s) for the\n# peers.env that sluice writes when that launch "
           "runs, then load it: its job and\n# the names and addresses of its nodes "
           "(SLUICE_PEER_HOST is the first node's\n# address; docs/rendering.md, peers.env).\n",
           wait_s);
        PF("sluice_deadline=$((SECONDS + %u))\n", wait_s);
        P("while [ ! -f \"$SLUICE_STAGING/peers.env\" ]; do\n");
        P("    if [ \"$SECONDS\" -ge \"$sluice_deadline\" ]; then\n");
        PF("        sluice_die %d \"peers.env did not appear in $SLUICE_STAGING within %u s\"\n",
           SLUICE_RENDER_EXIT_PEERS, wait_s);
        P("    fi\n    sleep 2\ndone\n");
        P(". \"$SLUICE_STAGING/peers.env\"\n");
        P("for sluice_n in ${!SLUICE_PEER_@}; do sluice_export \"$sluice_n\" \"${!sluice_n}\"; "
          "done\n");
    }

    if (c->n_vars > 0) {
        P("\n# 4. Environment: the study's env, the request's env.  Nothing of the\n"
          "# service's environment leaks in (forward_env is read after setup, step 6).\n");
        for (i = 0; i < c->n_vars; i++)
            if ((rc = emit_export(b, "", c->vars[i].name, c->vars[i].value)) != SLUICE_OK)
                goto out;
    }

    if (r->n_secret_names > 0) {
        P("\n# 5. Secrets: written by sluice at submit time (0600); loaded with tracing\n"
          "# off and deleted before anything else runs.\n");
        P("if [ ! -f \"$SLUICE_STAGING/secrets.env\" ]; then\n");
        PF("    sluice_die %d \"secrets.env is missing in $SLUICE_STAGING (secrets "
           "unavailable)\"\n",
           SLUICE_RENDER_EXIT_SECRETS);
        P("fi\n");
        P("{ sluice_xtrace=${-//[^x]/}; set +x; } 2>/dev/null\n");
        P(". \"$SLUICE_STAGING/secrets.env\"\n");
        P("rm -f -- \"$SLUICE_STAGING/secrets.env\"\n");
        P("for sluice_n in");
        if ((rc = emit_words(b, r->secret_names, r->n_secret_names)) != SLUICE_OK)
            goto out;
        P("; do\n    sluice_export \"$sluice_n\" \"${!sluice_n}\"\ndone\n");
        P("if [ -n \"$sluice_xtrace\" ]; then set -x; fi\n");
    }

    if (setup_site->n > 0 || (setup_study && setup_study->n > 0)) {
        P("\n# 6. Setup lines of the site and the study (trusted shell).\nset +u\n");
        for (i = 0; i < setup_site->n; i++)
            PF("%s\n", setup_site->items[i]);
        for (i = 0; setup_study && i < setup_study->n; i++)
            PF("%s\n", setup_study->items[i]);
        P("set -u\n");
        if (c->profile == SLUICE_LAUNCH_PROFILE_APPTAINER)
            P(apptainer_reset);
    }
    if (fw->n > 0) {
        P("\n# 6b. forward_env: the values the job has now, after setup (unset names\n"
          "# are skipped).\nfor sluice_n in");
        if ((rc = emit_words(b, fw->items, fw->n)) != SLUICE_OK)
            goto out;
        P("; do\n    if [ -n \"${!sluice_n+x}\" ]; then sluice_export \"$sluice_n\" "
          "\"${!sluice_n}\"; fi\ndone\n");
    }

    P("\n# 7. First host of every component, and its address.\n");
    P(host_function);
    for (k = 0; k < s->n_pools; k++) {
        char var[64];
        render_pool_var(s->pools[k].name, var, sizeof(var));
        if (s->n_pools > 1)
            PF("SLUICE_POOL_%s_HOST=$(sluice_first_host "
               "\"${SLURM_JOB_NODELIST_HET_GROUP_%zu:-}\")\n",
               var, k);
        else
            PF("SLUICE_POOL_%s_HOST=$(sluice_first_host \"${SLURM_JOB_NODELIST:-}\")\n", var);
        PF("if [ -z \"$SLUICE_POOL_%s_HOST\" ]; then\n", var);
        PF("    sluice_die %d \"no host known for pool %s\"\nfi\n", SLUICE_RENDER_EXIT_HOSTS,
           s->pools[k].name);
        PF("sluice_export SLUICE_POOL_%s_HOST \"$SLUICE_POOL_%s_HOST\"\n", var, var);
        PF("sluice_export SLUICE_POOL_%s_ADDR \"$(sluice_node_addr \"$SLUICE_POOL_%s_HOST\")\"\n",
           var, var);
        if (s->pools[k].nodes > 1 && s->pools[k].additional_node_command)
            any_wrapper = true;
    }
    for (i = 0; i < c->n_mounts; i++)
        if (!c->mounts[i].src)
            sandbox = true;

    P("\n# 8. One step per pool; each records its exit status in exit/<pool>.\n");
    P("mkdir -p -- \"$SLUICE_STAGING/exit\"\n");
    if (sandbox)
        P("# The NVFlare workspace as the container sees it: private to this attempt.\n"
          "mkdir -p -- \"$SLUICE_STAGING/sandbox\"\n");
    P(step_function);
    if (any_wrapper) {
        P("# Task wrapper, run on every node of a step: the task's Slurm and GPU\n"
          "# variables into the container (apptainer); rank 0 runs the command, the\n"
          "# other ranks the pool's additional_node_command.\nSLUICE_TASK_SH=");
        Q(render_task_wrapper);
        P("\n");
    }
    P("SLUICE_POOLS=(");
    for (k = 0; k < s->n_pools; k++)
        PF("%s%s", k ? " " : "", s->pools[k].name);
    P(")\nSLUICE_PIDS=()\n");
    /* The trap before the first pool starts: a TERM that comes while the
     * pools are started is recorded (exit/.signalled) and passed on, never
     * the shell's default death without a record. */
    P(signal_trap);
    for (k = 0; k < s->n_pools; k++)
        if ((rc = emit_pool(c, b, r, k)) != SLUICE_OK)
            goto out;

    P("\n# 9. Wait; stop the other pools when one fails (unless keep_going); exit\n"
      "# with the first failing code.\n");
    P(wait_block);
    if ((*out = buf_take(b)) == NULL)
        rc = SLUICE_ENOMEM;
out:
    buf_free(b);
    if (rc != SLUICE_OK && rc != SLUICE_ENOMEM && rc != SLUICE_ETOOBIG)
        rc = SLUICE_ENOMEM;
    return rc;
}

#undef P
#undef PF
#undef Q
