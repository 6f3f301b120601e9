/* SPDX-License-Identifier: Apache-2.0 */
/* policy_tenant.c - a tenant's request: the site's policy narrowed by the
 * tenant's allowed_* lists, the tenant's account as the default, and the
 * render checked after the defaults were applied (render.h, "tenants").
 *
 * Notes:
 * - The tenant of a request is the tenant part of its launch key (the HTTP
 *   layer qualified the caller's id): callers of this file pass the
 *   tenant they found there.
 * - The parser sees the narrowed lists, so a value the request names is
 *   refused there.  A value the request does not name comes from the
 *   study's or the site's defaults at render time; it is checked here,
 *   after the render, so that a default never carries a job out of the
 *   tenant's lists.  A field left to Slurm (NULL) while the tenant has a
 *   list is refused: Slurm's default is not known to be in it.
 * - Images: a job image (the request's own) must be allowed by the tenant's
 *   allowed_images as well as the site's (both canonical: a link in a
 *   directory the tenant can write does not lead to another's image).  The
 *   study's and the site's own images stay trusted.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/render.h>

#include "render_int.h"

void sluice_launch_policy_narrow(sluice_launch_policy_t *p, const sluice_tenant_t *t)
{
    if (p == NULL || t == NULL)
        return;
    if (t->n_allowed_partitions > 0) {
        p->partitions = (const char *const *)t->allowed_partitions;
        p->n_partitions = t->n_allowed_partitions;
    }
    if (t->n_allowed_accounts > 0) {
        p->accounts = (const char *const *)t->allowed_accounts;
        p->n_accounts = t->n_allowed_accounts;
    }
    if (t->n_allowed_qos > 0) {
        p->qos = (const char *const *)t->allowed_qos;
        p->n_qos = t->n_allowed_qos;
    }
}

static bool listed(char *const *list, size_t n, const char *v)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], "*") == 0 || strcmp(list[i], v) == 0)
            return true;
    return false;
}

/* Field `what` of job `i` (value v, NULL: left to Slurm) against the
 * tenant's list of it (empty: the site's rule alone, already applied). */
static sluice_err check_field(const sluice_tenant_t *t,
                              const char *what,
                              char *const *list,
                              size_t n,
                              const char *v,
                              size_t i,
                              sluice_error_t *err)
{
    if (n == 0 || (v != NULL && listed(list, n, v)))
        return SLUICE_OK;
    if (v == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "%s: job %zu names none and tenant %s may use only the %ss of its "
                             "policy.allowed_%s%s: name one",
                             what, i, t->name, what, what, strcmp(what, "qos") == 0 ? "" : "s");
    return sluice_errorf(err, SLUICE_EINVAL,
                         "%s: \"%s\" (a default of the study or the site) is not one tenant %s may "
                         "use (its policy.allowed_%s%s): name one it may",
                         what, v, t->name, what, strcmp(what, "qos") == 0 ? "" : "s");
}

sluice_err sluice_render_for_tenant(const sluice_config_t *cfg,
                                    const sluice_tenant_t *t,
                                    const sluice_launch_t *launch,
                                    sluice_render_t *r,
                                    sluice_error_t *err)
{
    const sluice_launch_spec_t *s;
    sluice_err rc;

    if (t == NULL)
        return SLUICE_OK;
    if (cfg == NULL || launch == NULL || r == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "render: missing argument");
    s = sluice_launch_spec(launch);
    for (size_t i = 0; i < r->n_jobs; i++) {
        sluice_jobdesc_t *d = &r->jobs[i];

        if (s->account == NULL && t->account != NULL) {
            char *a = strdup(t->account);
            if (a == NULL)
                return sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
            free(d->account);
            d->account = a;
        }
        if ((rc = check_field(t, "partition", t->allowed_partitions, t->n_allowed_partitions,
                              d->partition, i, err)) != SLUICE_OK ||
            (rc = check_field(t, "account", t->allowed_accounts, t->n_allowed_accounts, d->account,
                              i, err)) != SLUICE_OK ||
            (rc = check_field(t, "qos", t->allowed_qos, t->n_allowed_qos, d->qos, i, err)) !=
                SLUICE_OK)
            return rc;
    }
    if (s->image != NULL && t->n_allowed_images > 0) {
        int ok = render_image_listed(cfg, s->image, t->allowed_images, t->n_allowed_images);
        if (ok < 0)
            return sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        if (ok == 0)
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "image: %s is not one tenant %s may use: no entry of its "
                                 "policy.allowed_images allows its canonical path; refused",
                                 s->image, t->name);
    }
    return SLUICE_OK;
}
