/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch.c - launch requests: good requests from the seeds' workloads,
 * the NVFlare form mapping, every rejection with its exact path and reason,
 * secrets kept out of the canonical JSON, and the request hash.
 *
 * Inline requests are written with single quotes for readability; q()
 * turns them into JSON.  Fixtures live in tests/fixtures/launch/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/launch.h>

#include "base/syntax.h"
#include "request/launch.h"

/* Two models are the same request when their canonical texts are equal
 * (the text the store hashes). */
static void assert_same_canonical(const sluice_launch_t *a, const sluice_launch_t *b, bool same)
{
    char *ta = sluice_launch_to_json(a, NULL), *tb = sluice_launch_to_json(b, NULL);

    cr_assert_not_null(ta);
    cr_assert_not_null(tb);
    if (same)
        cr_assert_str_eq(ta, tb);
    else
        cr_assert_str_neq(ta, tb);
    free(ta);
    free(tb);
}

static const char *const partitions[] = {"gpu", "cpu"};
static const char *const accounts[] = {"proj123"};
static const char *const any[] = {"*"};
static const sluice_launch_series_t series[] = {
    {"a100", "gpu_a100", "gpu:a100", 8},
    {"l40s", "gpu_l40s", NULL, 4},
    {"h100", NULL, "gpu:h100", 8},
};

static char *const secret_env_allowed[] = {"DB_PASSWORD", "DB", "T", "NVFL_*"};

static sluice_launch_policy_t policy(void)
{
    sluice_launch_policy_t p;

    memset(&p, 0, sizeof(p));
    p.default_profile = SLUICE_LAUNCH_PROFILE_APPTAINER;
    p.allowed_profiles = SLUICE_LAUNCH_PROFILE_BIT(SLUICE_LAUNCH_PROFILE_APPTAINER) |
                         SLUICE_LAUNCH_PROFILE_BIT(SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS) |
                         SLUICE_LAUNCH_PROFILE_BIT(SLUICE_LAUNCH_PROFILE_NONE);
    p.partitions = partitions;
    p.n_partitions = 2;
    p.accounts = accounts;
    p.n_accounts = 1;
    p.qos = any;
    p.n_qos = 1;
    p.series = series;
    p.n_series = 3;
    p.pending_timeout = 600;
    p.allow_requeue = false;
    p.default_series = "a100"; /* GPU pools without a series (the NVFlare form) */
    p.secret_env_allowed = secret_env_allowed;
    p.n_secret_env_allowed = sizeof(secret_env_allowed) / sizeof(secret_env_allowed[0]);
    return p;
}

/* Single quotes to double quotes (no test value needs a single quote). */
static char *q(const char *s)
{
    char *d = strdup(s);
    char *p;

    cr_assert_not_null(d);
    for (p = d; *p; p++)
        if (*p == '\'')
            *p = '"';
    return d;
}

static char *slurp(const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[1024];
    FILE *f;
    long n;
    char *buf;

    snprintf(path, sizeof(path), "%s/tests/fixtures/launch/%s", src ? src : ".", name);
    f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static sluice_launch_t *parse_ok_with(const char *json, const sluice_launch_policy_t *pol)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    sluice_err rc = sluice_launch_parse(&l, json, strlen(json), pol, 0, &err);

    cr_assert_eq(rc, SLUICE_OK, "%s: %s", sluice_err_name(rc), err.text);
    cr_assert_not_null(l);
    return l;
}

static sluice_launch_t *fixture(const char *name)
{
    sluice_launch_policy_t pol = policy();
    char *text = slurp(name);
    sluice_launch_t *l = parse_ok_with(text, &pol);

    free(text);
    return l;
}

/* ---- good requests ------------------------------------------------------ */

Test(launch, native_single_pool)
{
    sluice_launch_t *l = fixture("native-single.json");
    const sluice_launch_spec_t *s = sluice_launch_spec(l);
    const sluice_launch_pool_t *p = sluice_launch_pool(l, 0);

    cr_assert_str_eq(sluice_launch_id(l), "train-2026-11-29.a");
    cr_assert_str_eq(s->site, "site-1");
    cr_assert_str_eq(s->study, "pathology");
    cr_assert_eq(s->effective_profile, SLUICE_LAUNCH_PROFILE_APPTAINER);
    cr_assert_str_eq(s->image, "/lustre/images/nvflare-job-2.6.sif");
    cr_assert_str_eq(s->workdir, "/lustre/proj123/runs/train");
    cr_assert_eq(s->n_env, 2);
    cr_assert_str_eq(s->env[0].name, "MODEL_FAMILY");
    cr_assert_str_eq(s->env[1].value, "8");
    cr_assert_eq(s->n_secret_env, 1);
    cr_assert_eq(s->n_mounts, 1);
    cr_assert_not(s->mounts[0].rw);
    cr_assert_eq(s->time_limit, 120);
    cr_assert_eq(s->pending_timeout, 300);
    cr_assert_eq(s->effective_pending_timeout, 300);
    cr_assert_str_eq(s->signal, "USR1@120");
    cr_assert_str_eq(s->partition, "gpu");
    cr_assert_str_eq(s->account, "proj123");
    cr_assert_eq(sluice_launch_pool_count(l), 1);
    cr_assert_str_eq(p->name, "main");
    cr_assert_str_eq(p->constraint, "gpu_a100");
    cr_assert_str_eq(p->gres, "gpu:a100");
    cr_assert_eq(p->gpus_per_node, 1);
    cr_assert_eq(p->mem_per_node_mib, 32768);
    cr_assert_str_eq(p->command, "/usr/bin/python3");
    cr_assert_eq(p->n_args, 4);
    cr_assert_str_eq(p->args[3], "10");
    cr_assert_null(sluice_launch_pool(l, 1));
    sluice_launch_free(l);
}

Test(launch, hetjob_of_two_series)
{
    sluice_launch_t *l = fixture("native-hetjob.json");
    const sluice_launch_pool_t *t = sluice_launch_pool(l, 0), *r = sluice_launch_pool(l, 1);

    cr_assert_eq(sluice_launch_pool_count(l), 2);
    cr_assert_eq(sluice_launch_spec(l)->effective_profile, SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS);
    cr_assert(sluice_launch_spec(l)->exclusive);
    cr_assert_str_eq(t->constraint, "gpu_a100");
    cr_assert_str_eq(t->command, "/opt/rl/bin/trainer");
    cr_assert_eq(t->n_args, 2);
    cr_assert_str_eq(t->additional_node_command, "/opt/rl/bin/trainer --role trainer-follower");
    cr_assert_str_eq(r->constraint, "gpu_l40s");
    cr_assert_null(r->gres);
    /* rollout keeps the launch command with its own args */
    cr_assert_str_eq(r->command, "/opt/rl/bin/worker");
    cr_assert_str_eq(r->args[1], "rollout");
    sluice_launch_free(l);
}

Test(launch, flower_patterns)
{
    sluice_launch_t *l;
    const sluice_launch_spec_t *s;

    l = fixture("flower-subprocess.json");
    s = sluice_launch_spec(l);
    cr_assert_eq(s->effective_profile, SLUICE_LAUNCH_PROFILE_NONE);
    cr_assert_eq(s->pools[0].gpus_per_node, 0);
    cr_assert_null(s->pools[0].constraint);
    cr_assert_eq(s->pools[0].n_args, 4);
    sluice_launch_free(l);

    l = fixture("flower-hetjob.json");
    s = sluice_launch_spec(l);
    cr_assert_null(s->command);
    cr_assert_eq(s->n_pools, 2);
    cr_assert_str_eq(s->pools[0].command, "flower-supernode");
    cr_assert_str_eq(s->pools[1].command, "flower-superexec");
    sluice_launch_free(l);

    l = fixture("flower-gpu.json");
    s = sluice_launch_spec(l);
    cr_assert_eq(s->pools[0].gpus_per_node, 0);
    cr_assert_eq(s->pools[1].gpus_per_node, 1);
    cr_assert_str_eq(s->pools[1].constraint, "gpu_a100");
    sluice_launch_free(l);

    l = fixture("flower-dependent.json");
    s = sluice_launch_spec(l);
    cr_assert_str_eq(s->depends_on, "flower-supernode-2");
    cr_assert_eq(s->depends_condition, SLUICE_LAUNCH_DEP_AFTER);
    cr_assert_eq(s->time_limit, 60);
    sluice_launch_free(l);
}

Test(launch, nvflare_single_node_maps_num_of_gpus)
{
    sluice_launch_t *l = fixture("nvflare-single.json");
    const sluice_launch_spec_t *s = sluice_launch_spec(l);

    cr_assert(s->nvflare_form);
    cr_assert_eq(s->n_pools, 1);
    cr_assert_str_eq(s->pools[0].name, "main");
    cr_assert_eq(s->pools[0].nodes, 1);
    cr_assert_eq(s->pools[0].gpus_per_node, 1);
    cr_assert_eq(s->pools[0].cpus_per_node, 8);
    cr_assert_eq(s->pools[0].mem_per_node_mib, 32768);
    cr_assert_eq(s->time_limit, 120);
    cr_assert_eq(s->pending_timeout, 300);
    cr_assert_str_eq(s->image, "/shared/images/nvflare-job.sif");
    cr_assert_str_eq(s->pools[0].command, "/usr/bin/python3");
    sluice_launch_free(l);
}

/* NVFlare's launcher runs `<python_path> -u -m <module> ...`: an NVFlare-form
 * request may leave the interpreter to the site; the model keeps it, so the
 * canonical JSON (and a reload) does not depend on the site file. */
Test(launch, nvflare_form_takes_the_interpreter_from_python_path)
{
    sluice_launch_policy_t pol = policy();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    char *j = q("{'launch_id':'x','site':'s','args':['-u','-m','nvflare.worker'],"
                "'resource_spec':{'num_of_gpus':1}}");
    char *canon;

    pol.python_path = "/opt/venv/bin/python3";
    l = parse_ok_with(j, &pol);
    cr_expect_str_eq(sluice_launch_pool(l, 0)->command, "/opt/venv/bin/python3");
    cr_expect_eq(sluice_launch_pool(l, 0)->n_args, 3);
    canon = sluice_launch_to_json(l, &err);
    cr_assert_not_null(canon, "%s", err.text);
    cr_expect_not_null(strstr(canon, "\"command\":\"/opt/venv/bin/python3\""), "%s", canon);
    free(canon);
    sluice_launch_free(l);
    free(j);

    /* The request's own command wins. */
    j = q("{'launch_id':'x','site':'s','command':'/usr/bin/python3.12','args':['-m','w'],"
          "'resource_spec':{'num_of_gpus':1}}");
    l = parse_ok_with(j, &pol);
    cr_expect_str_eq(sluice_launch_pool(l, 0)->command, "/usr/bin/python3.12");
    sluice_launch_free(l);
    free(j);

    /* No module: sluice invents none. */
    j = q("{'launch_id':'x','site':'s','resource_spec':{'num_of_gpus':1}}");
    cr_expect_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
    cr_expect_null(l);
    cr_expect_str_eq(err.text, "args: required when the command is the site's python_path "
                               "(/opt/venv/bin/python3): the worker module and its arguments "
                               "(sluice invents none)");
    free(j);

    /* The native form never takes it: a pool without a command is refused. */
    j = q("{'launch_id':'x','site':'s','args':['-m','w'],'pools':[{'name':'main'}]}");
    cr_expect_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
    cr_expect_null(l);
    free(j);
}

Test(launch, nvflare_multinode_uses_default_block_and_units)
{
    sluice_launch_t *l = fixture("nvflare-multinode.json");
    const sluice_launch_pool_t *p = sluice_launch_pool(l, 0);

    cr_assert_eq(p->nodes, 2);
    cr_assert_eq(p->gpus_per_node, 8);
    cr_assert_eq(p->mem_per_node_mib, 512 * 1024);
    cr_assert_eq(sluice_launch_spec(l)->time_limit, 720);
    cr_assert_str_eq(p->additional_node_command,
                     "python3 -m nvflare.app_opt.pt.torchrun_node --nproc-per-node=8 "
                     "custom/client.py");
    sluice_launch_free(l);
}

Test(launch, nvflare_form_hashes_like_its_native_equivalent)
{
    sluice_launch_t *a = fixture("nvflare-single.json");
    sluice_launch_t *b = fixture("native-equivalent-of-nvflare-single.json");
    char *ja = sluice_launch_to_json(a, NULL), *jb = sluice_launch_to_json(b, NULL);

    cr_assert_str_eq(ja, jb);
    free(ja);
    free(jb);
    sluice_launch_free(a);
    sluice_launch_free(b);
}

Test(launch, nvflare_additional_node_command_null_keeps_app_fanout)
{
    sluice_launch_policy_t pol = policy();
    char *j = q("{'launch_id':'x','site':'s1','profile':'none','command':'c',"
                "'launcher_spec':{'s1':{'slurm':{'nodes':2,'additional_node_command':null}}}}");
    sluice_launch_t *l = parse_ok_with(j, &pol);

    cr_assert_null(sluice_launch_pool(l, 0)->additional_node_command);
    cr_assert_eq(sluice_launch_pool(l, 0)->nodes, 2);
    sluice_launch_free(l);
    free(j);
}

Test(launch, requeue_and_profile_alias_under_a_permissive_policy)
{
    sluice_launch_policy_t pol = policy();
    char *j = q("{'launch_id':'x','site':'s1','profile':'pyxis','command':'c','requeue':true,"
                "'qos':'high','signal':'10@0','pools':[{'name':'p'}]}");
    sluice_launch_t *l;
    char *out;

    pol.allow_requeue = true;
    l = parse_ok_with(j, &pol);
    cr_assert(sluice_launch_spec(l)->requeue);
    cr_assert_eq(sluice_launch_spec(l)->profile, SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS);
    cr_assert_str_eq(sluice_launch_spec(l)->signal, "10@0");
    cr_assert_eq(sluice_launch_spec(l)->effective_pending_timeout, 600);
    out = sluice_launch_to_json(l, NULL);
    cr_assert_not_null(strstr(out, "\"profile\":\"enroot-pyxis\""));
    free(out);
    sluice_launch_free(l);
    free(j);
}

/* ---- secrets ------------------------------------------------------------ */

Test(launch, secret_values_never_reach_the_canonical_json)
{
    sluice_launch_t *l = fixture("with-secrets.json");
    char *out = sluice_launch_to_json(l, NULL);

    cr_assert_not_null(out);
    cr_assert_null(strstr(out, "SuperSecretValue"));
    cr_assert_null(strstr(out, "S3CR3T"));
    cr_assert_not_null(strstr(out, "\"secret_names\":[\"HF_TOKEN\",\"WANDB_API_KEY\"]"));
    cr_assert_eq(sluice_launch_secret_count(l), 2);
    cr_assert_str_eq(sluice_launch_secret_name(l, 0), "HF_TOKEN");
    cr_assert_str_eq(sluice_launch_secret_value(l, 0), "hf_SuperSecretValue123");
    cr_assert_str_eq(sluice_launch_secret_value(l, 1), "wandb-S3CR3T-value");
    cr_assert_null(sluice_launch_secret_value(l, 2));
    free(out);
    sluice_launch_free(l);
}

Test(launch, secret_names_count_in_the_hash_values_do_not)
{
    sluice_launch_policy_t pol = policy();
    char *a = q("{'launch_id':'x','site':'s','command':'c','secrets':{'T':'one'},"
                "'pools':[{'name':'p'}]}");
    char *b = q("{'launch_id':'x','site':'s','command':'c','secrets':{'T':'two'},"
                "'pools':[{'name':'p'}]}");
    char *c = q("{'launch_id':'x','site':'s','command':'c','secrets':{'U':'one'},"
                "'pools':[{'name':'p'}]}");
    sluice_launch_t *la = parse_ok_with(a, &pol), *lb = parse_ok_with(b, &pol),
                    *lc = parse_ok_with(c, &pol);

    assert_same_canonical(la, lb, true);
    assert_same_canonical(la, lc, false);
    sluice_launch_free(la);
    sluice_launch_free(lb);
    sluice_launch_free(lc);
    free(a);
    free(b);
    free(c);
}

Test(launch, errors_never_quote_a_secret_value)
{
    sluice_launch_policy_t pol = policy();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    /* invalid escape inside the secret: jansson would quote the token */
    const char *bad = "{\"launch_id\":\"x\",\"site\":\"s\",\"secrets\":{\"T\":\"topsecret\\q\"}}";
    const char *nul =
        "{\"launch_id\":\"x\",\"site\":\"s\",\"secrets\":{\"T\":\"topsecret\\u0000\"}}";

    cr_assert_eq(sluice_launch_parse(&l, bad, strlen(bad), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_null(strstr(err.text, "topsecret"), "%s", err.text);
    cr_assert_eq(sluice_launch_parse(&l, nul, strlen(nul), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "secrets.T: contains a NUL byte");
    cr_assert_null(l);
}

Test(launch, stored_form_round_trips_without_values)
{
    sluice_launch_policy_t pol = policy();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = fixture("with-secrets.json"), *back = NULL;
    char *out = sluice_launch_to_json(l, NULL);

    cr_assert_eq(sluice_launch_parse(&back, out, strlen(out), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "secret_names: unknown field");
    cr_assert_eq(
        sluice_launch_parse(&back, out, strlen(out), &pol, SLUICE_LAUNCH_PARSE_STORED, &err),
        SLUICE_OK, "%s", err.text);
    assert_same_canonical(back, l, true);
    cr_assert_eq(sluice_launch_secret_count(back), 2);
    cr_assert_null(sluice_launch_secret_value(back, 0));
    free(out);
    sluice_launch_free(l);
    sluice_launch_free(back);
}

/* ---- hash --------------------------------------------------------------- */

Test(launch, hash_is_stable_under_key_reordering_and_spelling)
{
    sluice_launch_policy_t pol = policy();
    char *a = q("{'launch_id':'x','site':'s','command':'c','time_limit':'1-00:00:00',"
                "'env':{'A':'1','B':'2'},'pools':[{'name':'p','nodes':1}]}");
    char *b = q("{'pools':[{'nodes':1,'name':'p'}],'env':{'B':'2','A':'1'},'time_limit':1440,"
                "'command':'c','site':'s','launch_id':'x'}");
    char *c = q("{'launch_id':'x','site':'s','command':'c','time_limit':1441,"
                "'env':{'A':'1','B':'2'},'pools':[{'name':'p','nodes':1}]}");
    sluice_launch_t *la = parse_ok_with(a, &pol), *lb = parse_ok_with(b, &pol),
                    *lc = parse_ok_with(c, &pol);

    assert_same_canonical(la, lb, true);
    assert_same_canonical(la, lc, false);
    sluice_launch_free(la);
    sluice_launch_free(lb);
    sluice_launch_free(lc);
    free(a);
    free(b);
    free(c);
}

Test(launch, canonical_json_is_exact)
{
    sluice_launch_policy_t pol = policy();
    char *j = q("{'site':'s','launch_id':'x','command':'c','args':['a b'],"
                "'mounts':[{'target':'/in/','source':'/src//d'}],"
                "'pools':[{'name':'p','gpu_series':'a100','gpus_per_node':2}]}");
    sluice_launch_t *l = parse_ok_with(j, &pol);
    char *out = sluice_launch_to_json(l, NULL);

    cr_assert_str_eq(out, "{\"args\":[\"a b\"],\"command\":\"c\",\"launch_id\":\"x\","
                          "\"mounts\":[{\"mode\":\"ro\",\"source\":\"/src/d\",\"target\":\"/in\"}],"
                          "\"pools\":[{\"gpu_series\":\"a100\",\"gpus_per_node\":2,\"name\":\"p\","
                          "\"nodes\":1}],\"site\":\"s\"}");
    free(out);
    sluice_launch_free(l);
    free(j);
}

/* ---- rejections --------------------------------------------------------- */

struct bad_case {
    const char *json; /* single-quoted */
    sluice_err code;
    const char *text;
};

#define BASE "'launch_id':'x','site':'s','command':'c'"
#define POOL "'pools':[{'name':'p'}]"

static const struct bad_case bad_cases[] = {
    /* syntax and shape */
    {"[1]", SLUICE_EINVAL, "request: expected a JSON object"},
    {"{'launch_id':'x','launch_id':'y'}", SLUICE_EINVAL,
     "request: invalid JSON at line 1, column 28: duplicate object key"},
    {"{" BASE ",'colour':1," POOL "}", SLUICE_EINVAL, "colour: unknown field"},
    {"{'site':'s','command':'c'," POOL "}", SLUICE_EINVAL, "launch_id: required"},
    {"{'launch_id':'a/b','site':'s'," POOL "}", SLUICE_EINVAL,
     "launch_id: expected 1 to 128 characters from [A-Za-z0-9._-], not . or .."},
    {"{'launch_id':'','site':'s'," POOL "}", SLUICE_EINVAL, "launch_id: must not be empty"},
    {"{'launch_id':7,'site':'s'," POOL "}", SLUICE_EINVAL, "launch_id: expected a string"},
    {"{'launch_id':'x','site':'..'," POOL "}", SLUICE_EINVAL, "site: must not be \".\" or \"..\""},
    {"{'launch_id':'x'," POOL "}", SLUICE_EINVAL, "site: required"},
    {"{" BASE "}", SLUICE_EINVAL, "pools: required (1 to 16 pools)"},
    {"{" BASE ",'pools':[]}", SLUICE_EINVAL, "pools: expected 1 to 16 pools (got 0)"},
    {"{" BASE ",'pools':{}}", SLUICE_EINVAL, "pools: expected an array of 1 to 16 pools"},
    /* pools */
    {"{" BASE ",'pools':[{'name':'p'},{'name':'q','gpus_per_node':-1}]}", SLUICE_EINVAL,
     "pools[1].gpus_per_node: expected an integer between 0 and 64 (got -1)"},
    {"{" BASE ",'pools':[{'name':'p','gpus_per_node':1.5}]}", SLUICE_EINVAL,
     "pools[0].gpus_per_node: expected an integer between 0 and 64"},
    {"{" BASE ",'pools':[{'name':'p','nodes':0}]}", SLUICE_EINVAL,
     "pools[0].nodes: expected an integer between 1 and 4096 (got 0)"},
    {"{" BASE ",'pools':[{'name':'p','nodes':'2'}]}", SLUICE_EINVAL,
     "pools[0].nodes: expected an integer between 1 and 4096, got \"2\" as a string: drop the "
     "quotes"},
    {"{" BASE ",'pools':[{'name':'P'}]}", SLUICE_EINVAL,
     "pools[0].name: \"P\" does not match [a-z0-9_-]{1,32}"},
    {"{" BASE ",'pools':[{'name':'p'},{'name':'p'}]}", SLUICE_EINVAL,
     "pools[1].name: \"p\" is already the name of pools[0]"},
    {"{" BASE ",'pools':[{'nodes':1}]}", SLUICE_EINVAL, "pools[0].name: required"},
    {"{" BASE ",'pools':[{'name':'p','gpu':1}]}", SLUICE_EINVAL, "pools[0].gpu: unknown field"},
    {"{" BASE ",'pools':[{'name':'trainer','gpu_series':'h100','gpus_per_node':8}]}", SLUICE_EINVAL,
     "pools[0].gpu_series: pool \"trainer\" asks for GPU series \"h100\", which has no "
     "constraint in the site catalogue (gpu_series.h100.constraint); refused before anything is "
     "submitted"},
    {"{" BASE ",'pools':[{'name':'p','gpu_series':'v100'}]}", SLUICE_EINVAL,
     "pools[0].gpu_series: pool \"p\": unknown GPU series \"v100\" (not in the site catalogue; "
     "known: a100, l40s, h100)"},
    {"{" BASE ",'pools':[{'name':'p','gpu_series':'l40s','gpus_per_node':8}]}", SLUICE_EINVAL,
     "pools[0].gpu_series: pool \"p\" asks for 8 GPUs per node; series \"l40s\" has 4 per node"},
    {"{'launch_id':'x','site':'s','pools':[{'name':'p','command':'c'},{'name':'q'}]}",
     SLUICE_EINVAL, "pools[1].command: required because the launch has no command"},
    {"{" BASE ",'pools':[{'name':'p','nodes':2}]}", SLUICE_EINVAL,
     "pools[0].nodes: 2 nodes without additional_node_command leave the fan-out to the "
     "application, which needs the sandbox none (effective: apptainer)"},
    {"{" BASE ",'pools':[{'name':'p','nodes':2,'additional_node_command':'x ${secret:T}'}]}",
     SLUICE_EINVAL, "pools[0].additional_node_command: ${secret:...} references are not supported"},
    /* strings */
    {"{" BASE ",'args':['a',3]," POOL "}", SLUICE_EINVAL, "args[1]: expected a string"},
    {"{'launch_id':'x','site':'s','command':''," POOL "}", SLUICE_EINVAL,
     "command: must not be empty"},
    /* profile and image */
    {"{" BASE ",'profile':'docker'," POOL "}", SLUICE_EINVAL,
     "profile: expected \"enroot-pyxis\", \"pyxis\", \"apptainer\" or \"none\""},
    {"{" BASE ",'image':'docker://nvcr.io/nvidia/pytorch:24.01-py3'," POOL "}", SLUICE_EINVAL,
     "image: registry reference \"docker://nvcr.io/nvidia/pytorch:24.01-py3\" is refused; give "
     "the absolute path of an image file (.sqsh for enroot-pyxis, .sif for apptainer) on "
     "shared storage"},
    {"{" BASE ",'image':'nvcr.io/nvidia/pytorch:24.01-py3'," POOL "}", SLUICE_EINVAL,
     "image: registry reference \"nvcr.io/nvidia/pytorch:24.01-py3\" is refused; give the "
     "absolute path of an image file (.sqsh for enroot-pyxis, .sif for apptainer) on shared "
     "storage"},
    {"{" BASE ",'image':'ubuntu:22.04'," POOL "}", SLUICE_EINVAL,
     "image: registry reference \"ubuntu:22.04\" is refused; give the absolute path of an image "
     "file (.sqsh for enroot-pyxis, .sif for apptainer) on shared storage"},
    {"{" BASE ",'image':'image.sif'," POOL "}", SLUICE_EINVAL,
     "image: expected an absolute path to a .sqsh or .sif file"},
    {"{" BASE ",'image':'/a/../etc/x.sif'," POOL "}", SLUICE_EINVAL,
     "image: path must not contain \"..\""},
    {"{" BASE ",'profile':'none','image':'/i.sif'," POOL "}", SLUICE_EINVAL,
     "image: not allowed where the effective profile is none"},
    /* env and secrets */
    {"{" BASE ",'env':{'SLURM_JOB_ID':'1'}," POOL "}", SLUICE_EINVAL,
     "env.SLURM_JOB_ID: uses a reserved prefix (SLURM_, SLUICE_, NVFL_, SRUN_, SBATCH_, "
     "SALLOC_, APPTAINER, SINGULARITY, ENROOT_, PYXIS_, BASH_FUNC_)"},
    {"{" BASE ",'env':{'LD_PRELOAD':'/x.so'}," POOL "}", SLUICE_EINVAL,
     "env.LD_PRELOAD: is reserved: it changes how the shell or the dynamic loader behaves"},
    {"{" BASE ",'env':{'1A':'x'}," POOL "}", SLUICE_EINVAL,
     "env.1A: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*"},
    {"{" BASE ",'env':{'A-B':'x'}," POOL "}", SLUICE_EINVAL,
     "env.A-B: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*"},
    {"{" BASE ",'env':{'A':1}," POOL "}", SLUICE_EINVAL, "env.A: expected a string"},
    {"{" BASE ",'env':['A']," POOL "}", SLUICE_EINVAL, "env: expected an object of name to string"},
    {"{" BASE ",'secret_env':['DB','DB']," POOL "}", SLUICE_EINVAL,
     "secret_env: \"DB\" is listed twice"},
    {"{" BASE ",'secret_env':['NVFL_X']," POOL "}", SLUICE_EINVAL,
     "secret_env[0]: uses a reserved prefix (SLURM_, SLUICE_, NVFL_, SRUN_, SBATCH_, SALLOC_, "
     "APPTAINER, SINGULARITY, ENROOT_, PYXIS_, BASH_FUNC_)"},
    {"{" BASE ",'env':{'T':'a'},'secrets':{'T':'b'}," POOL "}", SLUICE_EINVAL,
     "secrets.T: also set in env"},
    {"{" BASE ",'env':{'T':'a'},'secret_env':['T']," POOL "}", SLUICE_EINVAL,
     "secret_env: \"T\" is also set in env"},
    /* only the site's names, whatever the service's environment holds
     * (issue 27: PGPASSWORD, HOME and PATH were handed out, and the answer
     * told which variables exist) */
    {"{" BASE ",'secret_env':['PATH']," POOL "}", SLUICE_EINVAL,
     "secret_env[0]: \"PATH\" is not a variable the site allows a request to name "
     "(policy.allowed_secret_env)"},
    {"{" BASE ",'secret_env':['PGPASSWORD']," POOL "}", SLUICE_EINVAL,
     "secret_env[0]: \"PGPASSWORD\" is not a variable the site allows a request to name "
     "(policy.allowed_secret_env)"},
    {"{" BASE ",'secret_env':['SURELY_NOT_SET_4711']," POOL "}", SLUICE_EINVAL,
     "secret_env[0]: \"SURELY_NOT_SET_4711\" is not a variable the site allows a request to "
     "name (policy.allowed_secret_env)"},
    {"{" BASE ",'secret_env':['DB_PASSWORDX']," POOL "}", SLUICE_EINVAL,
     "secret_env[0]: \"DB_PASSWORDX\" is not a variable the site allows a request to name "
     "(policy.allowed_secret_env)"},
    /* a program name where srun (apptainer, bash) still reads options
     * (issue 27: --container-image=, --container-mounts=, --jobid=) */
    {"{'launch_id':'x','site':'s','command':'--container-image=/tmp/evil.sqsh'," POOL "}",
     SLUICE_EINVAL,
     "command: must not start with '-': it would be read as an option of srun, not as the "
     "program to run"},
    {"{'launch_id':'x','site':'s','command':'-x'," POOL "}", SLUICE_EINVAL,
     "command: must not start with '-': it would be read as an option of srun, not as the "
     "program to run"},
    {"{" BASE ",'pools':[{'name':'p','command':'--jobid=1'}]}", SLUICE_EINVAL,
     "pools[0].command: must not start with '-': it would be read as an option of srun, not as "
     "the program to run"},
    {"{" BASE ",'pools':[{'name':'p','nodes':2,'additional_node_command':'  --jobid=1 x'}]}",
     SLUICE_EINVAL,
     "pools[0].additional_node_command: its first word must not start with '-': it would be "
     "read as an option of srun, not as the program to run"},
    {"{" BASE ",'secrets':{'SLUICE_X':'b'}," POOL "}", SLUICE_EINVAL,
     "secrets.SLUICE_X: uses a reserved prefix (SLURM_, SLUICE_, NVFL_, SRUN_, SBATCH_, "
     "SALLOC_, APPTAINER, SINGULARITY, ENROOT_, PYXIS_, BASH_FUNC_)"},
    /* mounts and paths */
    {"{" BASE ",'workdir':'rel/dir'," POOL "}", SLUICE_EINVAL,
     "workdir: expected an absolute path"},
    {"{" BASE ",'mounts':[{'source':'/a','target':'/proc/x'}]," POOL "}", SLUICE_EINVAL,
     "mounts[0].target: must not be /, /proc, /sys or /dev (or below them)"},
    {"{" BASE ",'mounts':[{'source':'/a','target':'/'}]," POOL "}", SLUICE_EINVAL,
     "mounts[0].target: must not be /, /proc, /sys or /dev (or below them)"},
    {"{" BASE ",'mounts':[{'source':'/a','target':'/t'},{'source':'/b','target':'/t/'}]," POOL "}",
     SLUICE_EINVAL, "mounts[1].target: \"/t\" is already the target of mounts[0]"},
    {"{" BASE ",'mounts':[{'source':'/a/../b','target':'/t'}]," POOL "}", SLUICE_EINVAL,
     "mounts[0].source: path must not contain \"..\""},
    {"{" BASE ",'mounts':[{'source':'/a:b','target':'/t'}]," POOL "}", SLUICE_EINVAL,
     "mounts[0].source: must not contain ':' or ','"},
    {"{" BASE ",'mounts':[{'source':'/a','target':'/t','mode':'rx'}]," POOL "}", SLUICE_EINVAL,
     "mounts[0].mode: expected \"ro\" or \"rw\""},
    {"{" BASE ",'mounts':[{'source':'/a'}]," POOL "}", SLUICE_EINVAL, "mounts[0].target: required"},
    {"{" BASE ",'mounts':[{'source':'/a','target':'/t','opts':1}]," POOL "}", SLUICE_EINVAL,
     "mounts[0].opts: unknown field"},
    {"{" BASE ",'profile':'none','mounts':[{'source':'/a','target':'/t'}]," POOL "}", SLUICE_EINVAL,
     "mounts: not allowed where the effective profile is none (no mount namespace)"},
    /* times */
    {"{" BASE ",'time_limit':'1:2:3:4'," POOL "}", SLUICE_EINVAL,
     "time_limit: expected minutes or a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, "
     "D-HH:MM:SS)"},
    {"{" BASE ",'time_limit':0," POOL "}", SLUICE_EINVAL,
     "time_limit: expected an integer between 1 and 525600 (got 0)"},
    {"{" BASE ",'time_limit':'400-00'," POOL "}", SLUICE_EINVAL,
     "time_limit: must be at most 365 days"},
    {"{" BASE ",'time_limit':true," POOL "}", SLUICE_EINVAL,
     "time_limit: expected minutes (integer) or a Slurm time string"},
    {"{" BASE ",'pending_timeout':900," POOL "}", SLUICE_EINVAL,
     "pending_timeout: 900 s is more than the site's pending_timeout of 600 s; a request may "
     "lower it, never raise it"},
    {"{" BASE ",'pending_timeout':1e3," POOL "}", SLUICE_EINVAL,
     "pending_timeout: expected an integer >= 1"},
    /* workload options and policy */
    {"{" BASE ",'requeue':true," POOL "}", SLUICE_EINVAL,
     "requeue: site policy does not allow requeue"},
    {"{" BASE ",'requeue':'yes'," POOL "}", SLUICE_EINVAL, "requeue: expected true or false"},
    {"{" BASE ",'signal':'USR1@70000'," POOL "}", SLUICE_EINVAL,
     "signal: seconds must be between 0 and 65535"},
    {"{" BASE ",'signal':'FOO@1'," POOL "}", SLUICE_EINVAL,
     "signal: expected <signal>[@<seconds>], e.g. \"USR1@120\"; signal is a name (HUP, INT, "
     "USR1, TERM, ...) or a number 1-64"},
    {"{" BASE ",'partition':'debug'," POOL "}", SLUICE_EINVAL,
     "partition: partition \"debug\" is not allowed by site policy (allowed: gpu, cpu)"},
    {"{" BASE ",'account':'other'," POOL "}", SLUICE_EINVAL,
     "account: account \"other\" is not allowed by site policy (allowed: proj123)"},
    {"{" BASE ",'depends_on':{'launch_id':'x','condition':'after'}," POOL "}", SLUICE_EINVAL,
     "depends_on.launch_id: a launch cannot depend on itself"},
    {"{" BASE ",'depends_on':{'launch_id':'y','condition':'afternotok'}," POOL "}", SLUICE_EINVAL,
     "depends_on.condition: expected \"after\", \"afterok\" or \"afterany\""},
    {"{" BASE ",'depends_on':{'launch_id':'y'}," POOL "}", SLUICE_EINVAL,
     "depends_on.condition: required (after, afterok or afterany)"},
    /* the NVFlare form */
    {"{" BASE ",'resource_spec':{'num_of_gpus':1}," POOL "}", SLUICE_EINVAL,
     "pools: not allowed in the NVFlare form (resource_spec/launcher_spec); set it under "
     "launcher_spec.<site>.slurm"},
    {"{'launch_id':'x','site':'s','resource_spec':{'num_of_gpus':1}}", SLUICE_EINVAL,
     "command: required: the NVFlare form must carry the worker command, or the site (or study) "
     "must set python_path (sluice invents none)"},
    {"{" BASE ",'resource_spec':{'s':{'num_of_gpus':4}},"
     "'launcher_spec':{'s':{'slurm':{'nodes':2,'gpus_per_node':1,"
     "'additional_node_command':'x'}}}}",
     SLUICE_EINVAL,
     "resource_spec.s.num_of_gpus: 4 must equal nodes * gpus_per_node = 2 * 1 = 2 "
     "(launcher_spec.s.slurm.nodes, launcher_spec.s.slurm.gpus_per_node)"},
    {"{" BASE ",'resource_spec':{'num_of_gpus':16},"
     "'launcher_spec':{'s':{'slurm':{'nodes':2,'additional_node_command':'x'}}}}",
     SLUICE_EINVAL,
     "launcher_spec.s.slurm.gpus_per_node: required when num_of_gpus (16) > 0 and nodes (2) > 1"},
    {"{" BASE ",'launcher_spec':{'s':{'slurm':{'pending_timeout':601}}}}", SLUICE_EINVAL,
     "launcher_spec.s.slurm.pending_timeout: 601 s is more than the site's pending_timeout of "
     "600 s; a request may lower it, never raise it"},
    {"{" BASE ",'profile':'none','launcher_spec':{'s':{'slurm':{'image':'/i.sif'}}}}",
     SLUICE_EINVAL,
     "launcher_spec.s.slurm.image: job images are refused where the effective sandbox is none"},
    {"{" BASE ",'launcher_spec':{'s':{'slurm':{'nodes':2}}}}", SLUICE_EINVAL,
     "launcher_spec.s.slurm.nodes: 2 nodes without additional_node_command leave the fan-out to "
     "the application, which needs the sandbox none (effective: apptainer)"},
    {"{" BASE ",'launcher_spec':{'default':{'slurm':{'mem_per_node':'32X'}}}}", SLUICE_EINVAL,
     "launcher_spec.default.slurm.mem_per_node: expected MiB as an integer or a size like "
     "\"512M\", \"32G\" or \"1T\""},
    {"{" BASE ",'launcher_spec':{'s':{'slurm':{'gpus':1}}}}", SLUICE_EINVAL,
     "launcher_spec.s.slurm.gpus: unknown field"},
    {"{" BASE ",'resource_spec':{'num_of_gpus':1,'mem':2}}", SLUICE_EINVAL,
     "resource_spec.mem: unknown field"},
    {"{" BASE ",'resource_spec':{'num_of_gpus':65}}", SLUICE_EINVAL,
     "resource_spec.num_of_gpus: 65 GPUs on one node is more than 64"},
    {"{" BASE ",'launcher_spec':{'s':{'slurm':{'time':'soon'}}}}", SLUICE_EINVAL,
     "launcher_spec.s.slurm.time: expected minutes or a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, "
     "D-HH:MM, D-HH:MM:SS)"},
};

/* One test for the whole table (a Criterion test is one process; ~90 of them
 * under ASan cost more than the checks): cr_expect reports every failing row. */
Test(launch, rejections)
{
    size_t i;

    for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const struct bad_case *bc = &bad_cases[i];
        sluice_launch_policy_t pol = policy();
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_launch_t *l = NULL;
        char *j = q(bc->json);
        sluice_err rc = sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err);

        cr_expect_eq(rc, bc->code, "case %zu %s: got %s (%s)", i, bc->json, sluice_err_name(rc),
                     err.text);
        cr_expect_str_eq(err.text, bc->text, "case %zu %s", i, bc->json);
        cr_expect_null(l, "case %zu", i);
        sluice_launch_free(l);
        free(j);
    }
}

Test(launch, nul_bytes_are_named)
{
    sluice_launch_policy_t pol = policy();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    const char *j = "{\"launch_id\":\"x\",\"site\":\"s\",\"command\":\"c\\u0000d\"}";

    cr_assert_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "command: contains a NUL byte");
}

Test(launch, overlong_values_and_requests)
{
    sluice_launch_policy_t pol = policy();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    char id[200], *j = malloc(SLUICE_LAUNCH_MAX_BYTES + 2);

    memset(id, 'a', 129);
    id[129] = '\0';
    snprintf(j, 400, "{\"launch_id\":\"%s\",\"site\":\"s\"}", id);
    cr_assert_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "launch_id: longer than 128 bytes");
    memset(j, ' ', SLUICE_LAUNCH_MAX_BYTES + 1);
    cr_assert_eq(sluice_launch_parse(&l, j, SLUICE_LAUNCH_MAX_BYTES + 1, &pol, 0, &err),
                 SLUICE_ETOOBIG);
    free(j);
}

Test(launch, huge_numbers_are_rejected_as_json)
{
    sluice_launch_policy_t pol = policy();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    const char *j = "{\"launch_id\":\"x\",\"site\":\"s\",\"time_limit\":1e999}";

    cr_assert_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "request: invalid JSON at line 1, column 46: real number overflow");
}

Test(launch, policy_without_lists_refuses_choices)
{
    sluice_launch_policy_t pol = policy();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    char *j = q("{" BASE ",'partition':'gpu','profile':'apptainer'," POOL "}");

    pol.partitions = NULL;
    pol.n_partitions = 0;
    cr_assert_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text,
                     "partition: site policy does not let a request choose the partition");
    pol = policy();
    pol.allowed_profiles = 0; /* only the default (apptainer) may be named */
    cr_assert_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_OK, "%s", err.text);
    sluice_launch_free(l);
    free(j);
    j = q("{" BASE ",'profile':'none'," POOL "}");
    cr_assert_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "profile: \"none\" is not allowed by site policy");
    free(j);
}

/* ---- fail-closed GPU series (issue 13) ----------------------------------- */

/* A pool that asks for GPUs and names no series has no constraint: it could
 * land on any GPU node.  Without a site default it is refused, in both
 * forms, naming the field. */
Test(launch, gpu_pool_without_series_is_refused_without_a_site_default)
{
    static const struct {
        const char *json, *text;
    } cases[] = {
        {"{" BASE ",'pools':[{'name':'p','gpus_per_node':2}]}",
         "pools[0].gpus_per_node: pool \"p\" asks for 2 GPUs per node but names no gpu_series, "
         "and the site names no default series (policy.default_gpu_series); refused before "
         "anything is submitted (fail-closed)"},
        {"{" BASE ",'resource_spec':{'num_of_gpus':1}}",
         "resource_spec: pool \"main\" asks for 1 GPUs per node but names no gpu_series, and the "
         "site names no default series (policy.default_gpu_series); refused before anything is "
         "submitted (fail-closed)"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sluice_launch_policy_t pol = policy();
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_launch_t *l = NULL;
        char *j = q(cases[i].json);

        pol.default_series = NULL;
        cr_expect_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL,
                     "case %zu", i);
        cr_expect_str_eq(err.text, cases[i].text, "case %zu", i);
        cr_expect_null(l);
        sluice_launch_free(l);
        free(j);
    }
}

/* With a site default the pool gets its series and constraint; the
 * canonical JSON leaves the default out (like every site default), and a
 * CPU-only pool gets no series. */
Test(launch, gpu_pool_without_series_takes_the_site_default)
{
    sluice_launch_policy_t pol = policy();
    char *j = q("{" BASE ",'pools':[{'name':'p','gpus_per_node':2},{'name':'c'}]}");
    sluice_launch_t *l = parse_ok_with(j, &pol);
    char *out = sluice_launch_to_json(l, NULL);

    cr_assert_str_eq(sluice_launch_pool(l, 0)->gpu_series, "a100");
    cr_assert_str_eq(sluice_launch_pool(l, 0)->constraint, "gpu_a100");
    cr_assert_str_eq(sluice_launch_pool(l, 0)->gres, "gpu:a100");
    cr_assert(sluice_launch_pool(l, 0)->default_series);
    cr_assert_null(sluice_launch_pool(l, 1)->gpu_series);
    cr_assert_null(sluice_launch_pool(l, 1)->constraint);
    cr_assert_null(strstr(out, "gpu_series"), "%s", out);
    free(out);
    sluice_launch_free(l);
    free(j);
    /* The default is a catalogue series like any other: its per-node cap
     * applies, and a default without a constraint is refused. */
    {
        sluice_error_t err = SLUICE_ERROR_INIT;
        j = q("{" BASE ",'pools':[{'name':'p','gpus_per_node':9}]}");
        cr_assert_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
        cr_assert_str_eq(err.text, "pools[0].gpus_per_node: pool \"p\" asks for 9 GPUs per node; "
                                   "series \"a100\" has 8 per node");
        pol.default_series = "h100";
        cr_assert_eq(sluice_launch_parse(&l, j, strlen(j), &pol, 0, &err), SLUICE_EINVAL);
        cr_assert(
            strstr(err.text, "GPU series \"h100\", which has no constraint in the site catalogue"),
            "%s", err.text);
        free(j);
    }
}

/* ---- keep_going (hetjob: stop the other pools when one fails) ------------ */

Test(launch, keep_going_within_policy)
{
    sluice_launch_policy_t pol = policy();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    char *on = q("{" BASE ",'keep_going':true," POOL "}");
    char *off = q("{" BASE ",'keep_going':false," POOL "}");
    char *none = q("{" BASE "," POOL "}");
    char *bad = q("{" BASE ",'keep_going':1," POOL "}");
    char *out;

    /* The site's value when the request says nothing; not in the JSON. */
    l = parse_ok_with(none, &pol);
    cr_assert_not(sluice_launch_spec(l)->keep_going);
    out = sluice_launch_to_json(l, NULL);
    cr_assert_null(strstr(out, "keep_going"));
    free(out);
    sluice_launch_free(l);
    pol.keep_going = true;
    l = parse_ok_with(none, &pol);
    cr_assert(sluice_launch_spec(l)->keep_going);
    sluice_launch_free(l);
    /* The site's own value may always be repeated; another needs
     * allow_keep_going. */
    l = parse_ok_with(on, &pol);
    cr_assert(sluice_launch_spec(l)->keep_going);
    sluice_launch_free(l);
    cr_assert_eq(sluice_launch_parse(&l, off, strlen(off), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "keep_going: site policy does not let a request choose it (the "
                               "site's value is true: policy.allow_keep_going is false)");
    pol.keep_going = false;
    cr_assert_eq(sluice_launch_parse(&l, on, strlen(on), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "keep_going: site policy does not let a request choose it (the "
                               "site's value is false: policy.allow_keep_going is false)");
    pol.allow_keep_going = true;
    l = parse_ok_with(on, &pol);
    cr_assert(sluice_launch_spec(l)->keep_going);
    out = sluice_launch_to_json(l, NULL);
    cr_assert_not_null(strstr(out, "\"keep_going\":true"), "%s", out);
    free(out);
    sluice_launch_free(l);
    cr_assert_eq(sluice_launch_parse(&l, bad, strlen(bad), &pol, 0, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "keep_going: expected true or false");
    free(on);
    free(off);
    free(none);
    free(bad);
}

/* ---- value syntaxes ----------------------------------------------------- */

Test(launch, time_strings)
{
    static const struct {
        const char *in;
        uint32_t minutes;
    } ok[] = {{"30", 30},        {"30:30", 31},        {"02:00:00", 120}, {"1-0", 1440},
              {"1-02:30", 1590}, {"1-00:00:01", 1441}, {"00:00:01", 1},   {"365-00:00:00", 525600}};
    static const char *const bad[] = {"",        "-1", "1-",       "1:",    "a",
                                      "1:2:3:4", "0",  "00:00:00", "1-2-3", "1234567890"};
    uint32_t m = 0;
    size_t i;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        cr_assert_eq(syntax_slurm_time(&m, ok[i].in, SLUICE_LAUNCH_MAX_TIME_MINUTES, "t", NULL),
                     SLUICE_OK, "%s", ok[i].in);
        cr_assert_eq(m, ok[i].minutes, "%s -> %u", ok[i].in, m);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_neq(syntax_slurm_time(&m, bad[i], SLUICE_LAUNCH_MAX_TIME_MINUTES, "t", NULL),
                      SLUICE_OK, "%s", bad[i]);
}

Test(launch, memory_sizes)
{
    uint64_t mib = 0;

    cr_assert_eq(syntax_mem_size(&mib, "512M", "m", NULL), SLUICE_OK);
    cr_assert_eq(mib, 512);
    cr_assert_eq(syntax_mem_size(&mib, "32G", "m", NULL), SLUICE_OK);
    cr_assert_eq(mib, 32768);
    cr_assert_eq(syntax_mem_size(&mib, "1t", "m", NULL), SLUICE_OK);
    cr_assert_eq(mib, 1048576);
    cr_assert_eq(syntax_mem_size(&mib, "1500K", "m", NULL), SLUICE_OK);
    cr_assert_eq(mib, 2);
    cr_assert_eq(syntax_mem_size(&mib, "4096", "m", NULL), SLUICE_OK);
    cr_assert_eq(mib, 4096);
    cr_assert_neq(syntax_mem_size(&mib, "0", "m", NULL), SLUICE_OK);
    cr_assert_neq(syntax_mem_size(&mib, "32GB", "m", NULL), SLUICE_OK);
    cr_assert_neq(syntax_mem_size(&mib, "G", "m", NULL), SLUICE_OK);
    cr_assert_neq(syntax_mem_size(&mib, "65T", "m", NULL), SLUICE_OK);
}

Test(launch, paths_and_signals)
{
    char *out = NULL;

    cr_assert_eq(syntax_path_normalize(&out, "//a/./b//c/", "p", NULL), SLUICE_OK);
    cr_assert_str_eq(out, "/a/b/c");
    free(out);
    cr_assert_eq(syntax_path_normalize(&out, "/", "p", NULL), SLUICE_OK);
    cr_assert_str_eq(out, "/");
    free(out);
    cr_assert_neq(syntax_path_normalize(&out, "/a/..", "p", NULL), SLUICE_OK);
    cr_assert_neq(syntax_path_normalize(&out, "/a\nb", "p", NULL), SLUICE_OK);
    cr_assert_eq(syntax_path_normalize(&out, "/a/..b", "p", NULL), SLUICE_OK);
    cr_assert_str_eq(out, "/a/..b");
    free(out);
    cr_assert_eq(syntax_signal(&out, "TERM", "s", NULL), SLUICE_OK);
    cr_assert_str_eq(out, "TERM@60");
    free(out);
    cr_assert_eq(syntax_signal(&out, "SIGUSR2@65535", "s", NULL), SLUICE_OK);
    cr_assert_str_eq(out, "USR2@65535");
    free(out);
    cr_assert_neq(syntax_signal(&out, "65@1", "s", NULL), SLUICE_OK);
    cr_assert_neq(syntax_signal(&out, "USR1@", "s", NULL), SLUICE_OK);
    cr_assert_neq(syntax_signal(&out, "@5", "s", NULL), SLUICE_OK);
    cr_assert_not_null(launch_envname_check("SRUN_CPUS_PER_TASK"));
    cr_assert_null(launch_envname_check("PATH"));
    cr_assert_null(launch_envname_check("_x1"));
    cr_assert_str_eq(sluice_launch_profile_name(sluice_launch_profile_parse("pyxis")),
                     "enroot-pyxis");
}
