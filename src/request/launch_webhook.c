/* SPDX-License-Identifier: Apache-2.0 */
/* launch_webhook.c - a request's own webhook receiver: `webhook: {"url":
 * "..."}` (docs/launch-request.md, docs/api.md "Webhooks").
 *
 * Notes:
 * - Off unless the site says so (webhooks.allow_request_urls) and only to
 *   URLs under one of the site's prefixes (webhooks.request_url_prefixes):
 *   a URL from a request is a server-side request forgery risk.
 * - A launch reloaded from the store (SLUICE_LAUNCH_PARSE_STORED) keeps
 *   its URL even when the site has since changed its policy: the delivery
 *   worker checks the URL against the current policy again before it
 *   queues anything, and skips (and logs) a URL no longer allowed.
 */
#include <stddef.h>
#include <string.h>

#include <jansson.h>

#include "site/webhook_url.h"

#include "launch_int.h"

sluice_err launch_parse_webhook(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    static const char *const keys[] = {"url", NULL};
    const sluice_launch_policy_t *pol = c->pol;
    const char *url = NULL, *why;
    jdec_cur_t hook;
    sluice_err rc;

    if (jdec_object(root, "webhook", JDEC_SILENT, &hook) != SLUICE_OK)
        return jdec_fail(root, "webhook", "expected an object {\"url\": \"https://...\"}");
    LAUNCH_GO_ON(c, jdec_keys(&hook, keys));
    if ((rc = jdec_string(&hook, "url", JDEC_REQUIRED | JDEC_NONEMPTY, WEBHOOK_URL_MAX, &url)) !=
            SLUICE_OK ||
        url == NULL)
        return rc;
    if ((why = webhook_url_problem(url, pol->webhook_allow_insecure_http)) != NULL)
        return jdec_fail(&hook, "url", "%s", why);
    if (!(c->flags & SLUICE_LAUNCH_PARSE_STORED)) {
        if (!pol->allow_webhook_urls)
            return jdec_fail(&hook, "url",
                             "site policy does not allow a request to name a webhook URL "
                             "(webhooks.allow_request_urls is false)");
        if (!webhook_url_allowed(url, pol->webhook_prefixes, pol->n_webhook_prefixes))
            return jdec_fail(&hook, "url",
                             "not under a URL prefix the site allows "
                             "(webhooks.request_url_prefixes)");
    }
    if ((s->webhook_url = launch_strdup(url)) == NULL)
        return launch_oom(c);
    return SLUICE_OK;
}
