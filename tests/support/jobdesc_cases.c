/* SPDX-License-Identifier: Apache-2.0 */
/* jobdesc_cases.c - see jobdesc_cases.h. */
#include <stdlib.h>
#include <string.h>

#include "jobdesc_cases.h"

static char *dup(const char *s)
{
    char *d = strdup(s);

    if (d == NULL)
        abort();
    return d;
}

static void base(sluice_jobdesc_t *d, const char *name, int with_script)
{
    memset(d, 0, sizeof(*d));
    d->name = dup(name);
    d->comment = dup("sluice:launch-0001:1");
    d->partition = dup("debug");
    d->time_limit = 30;
    d->nodes = 1;
    d->tasks_per_node = 1;
    d->workdir = dup("/home/alice/sluice");
    d->std_out = dup("/home/alice/sluice/out-%j.txt");
    d->std_err = dup("/home/alice/sluice/err-%j.txt");
    if (sluice_jobdesc_setenv(d, "PATH", "/usr/bin:/bin", NULL) != SLUICE_OK ||
        sluice_jobdesc_setenv(d, "LANG", "C.UTF-8", NULL) != SLUICE_OK ||
        sluice_jobdesc_setenv(d, "HOME", "/home/alice", NULL) != SLUICE_OK)
        abort();
    if (with_script)
        d->script = dup("#!/bin/bash\nset -eu\nsrun hostname\n");
}

static size_t plain(sluice_jobdesc_t *d)
{
    base(d, "sluice-plain", 1);
    return 1;
}

static size_t full(sluice_jobdesc_t *d)
{
    base(d, "sluice-full", 1);
    d->account = dup("proj1");
    d->qos = dup("normal");
    d->reservation = dup("maint");
    d->nodes = 2;
    d->tasks_per_node = 4;
    d->cpus_per_task = 2;
    d->mem_per_node_mib = 16384;
    d->gpus_per_node = 2;
    d->gres_name = dup("gpu:a100");
    d->constraint = dup("site_a&pool_gpu");
    d->exclusive = true;
    d->hold = true;
    d->dependency = dup("afterok:123");
    d->signal = dup("B:USR1@120");
    return 1;
}

static size_t requeue_gpu(sluice_jobdesc_t *d)
{
    base(d, "sluice-gpu", 1);
    d->gpus_per_node = 1;
    d->requeue = true;
    d->signal = dup("TERM");
    return 1;
}

static size_t hetjob(sluice_jobdesc_t *d)
{
    base(&d[0], "sluice-het", 1);
    d[0].constraint = dup("pool_a");
    base(&d[1], "sluice-het", 0);
    d[1].constraint = dup("pool_b");
    d[1].gpus_per_node = 1;
    d[1].mem_per_node_mib = 4096;
    return 2;
}

static size_t hostile(sluice_jobdesc_t *d)
{
    base(d, "sluice-\"quoted\" name\\with\tcontrol\x01 and \xc3\xa9", 1);
    free(d->comment);
    d->comment = dup("sluice:x:1\"},\"script\":\"rm -rf /\"");
    free(d->std_out);
    d->std_out = dup("/tmp/a b/$(reboot)/`id`/%j.out");
    free(d->script);
    d->script = dup("#!/bin/bash\necho \"}{][\" '\\u0000' \x7f\n");
    if (sluice_jobdesc_setenv(d, "WEIRD", "a=b;c\nd\"e", NULL) != SLUICE_OK)
        abort();
    return 1;
}

static const struct {
    const char *name;
    size_t (*build)(sluice_jobdesc_t *d);
} cases[] = {
    {"plain", plain},   {"full", full},       {"requeue_gpu", requeue_gpu},
    {"hetjob", hetjob}, {"hostile", hostile},
};

size_t jobdesc_case_count(void)
{
    return sizeof(cases) / sizeof(cases[0]);
}

const char *jobdesc_case_name(size_t i)
{
    return i < jobdesc_case_count() ? cases[i].name : NULL;
}

size_t jobdesc_case_build(size_t i, sluice_jobdesc_t out[JOBDESC_CASE_MAX_COMPONENTS])
{
    memset(out, 0, sizeof(*out) * JOBDESC_CASE_MAX_COMPONENTS);
    if (i >= jobdesc_case_count())
        return 0;
    return cases[i].build(out);
}
