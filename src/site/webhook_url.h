/* SPDX-License-Identifier: Apache-2.0 */
/* webhook_url.h - what a webhook target URL may be, and the site's prefix
 * allow-list of request URLs (internal; docs/api.md, "Webhooks").
 *
 * One rule for every place a webhook URL enters: the site file
 * (webhooks.url, webhooks.request_url_prefixes), a launch request's
 * `webhook.url`, and the delivery worker, which checks a request's URL
 * against the site's current policy again before it queues a delivery.
 *
 * A webhook URL is `https://HOST[:PORT][/PATH]`, or `http://` to a
 * loopback host (localhost, 127.0.0.0/8, [::1]) unless the site allows
 * plain http elsewhere (webhooks.allow_insecure_http).  No user or
 * password (`@`), no query string, no fragment, no empty path segment
 * (`//`), no whitespace or control byte, at most 2048 bytes.  The path
 * must mean what its text says, since the prefix rule compares text: no
 * dot segment in any spelling ("..", ".", "%2e%2e", ".%2E", "..;x"), no
 * backslash, no encoded '/', '\' or '%' (%2F, %5C, %25), no broken or
 * NUL escape (issue 27: "https://h/allowed/../secret" starts with the prefix
 * "https://h/allowed/" but is posted to /secret).  What was matched is
 * what is sent: the delivery worker gives the URL to the HTTP client as
 * is (http_opts_t.exact_url), never rebuilt or normalised.
 *
 * Everything here is pure and thread-safe.
 */
#ifndef SLUICE_SITE_WEBHOOK_URL_H
#define SLUICE_SITE_WEBHOOK_URL_H

#include <stdbool.h>
#include <stddef.h>

#define WEBHOOK_URL_MAX 2048

/* NULL when `url` may be a webhook target; else why not (a static string
 * such as "expected an https:// URL ..."). */
const char *webhook_url_problem(const char *url, bool allow_insecure_http);

/* True when `url` starts with `prefix` at a boundary: the prefix ends with
 * '/', or the URL ends right after it or goes on with '/'.  So the prefix
 * "https://hooks.example.com" matches "https://hooks.example.com/a" but
 * not "https://hooks.example.com.evil.net/".  Bytes compare exactly. */
bool webhook_url_prefix_match(const char *url, const char *prefix);

/* True when `url` matches one of prefixes[0..n). */
bool webhook_url_allowed(const char *url, char *const *prefixes, size_t n);

#endif /* SLUICE_SITE_WEBHOOK_URL_H */
