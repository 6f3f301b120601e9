/* SPDX-License-Identifier: Apache-2.0 */
/* test_log.c - the log sink and the redactor: no credential shape survives. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <sluice/log.h>

#define JWT                                                                                        \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE3MDAwMDAwMDAsInN1biI6InUifQ."                 \
    "c2lnbmF0dXJlX2J5dGVz"

/* Criterion copies parameters into the test process, so they hold the
 * text itself rather than pointers into this process's image. */
struct redact_case {
    char in[256];
    char out[256];
};

static struct redact_case cases[] = {
    {"plain text stays", "plain text stays"},
    {"Authorization: Bearer abc.def", "Authorization: Bearer [REDACTED]"},
    {"X-SLURM-USER-TOKEN: " JWT, "X-SLURM-USER-TOKEN: [REDACTED]"},
    {"x-slurm-user-token:secretvalue next", "x-slurm-user-token:[REDACTED] next"},
    {"SLURM_JWT=" JWT, "SLURM_JWT=[REDACTED]"},
    {"env SLURM_JWT=opaque123;rest", "env SLURM_JWT=[REDACTED];rest"},
    {"url?token=zzz&x=1", "url?token=[REDACTED]&x=1"},
    {"bare " JWT " tail", "bare [REDACTED] tail"},
    {"{\"token\": \"abc\"}", "{\"token\": \"[REDACTED]\"}"},
    {"eyJnot-a-jwt", "eyJnot-a-jwt"},
    {"Bearer ", "Bearer "},
};

ParameterizedTestParameters(log, redacts)
{
    return cr_make_param_array(struct redact_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct redact_case *c, log, redacts)
{
    char text[512];

    snprintf(text, sizeof(text), "%s", c->in);
    sluice_redact(text, sizeof(text));
    cr_assert_str_eq(text, c->out, "in: %s", c->in);
}

Test(log, redaction_never_overflows_a_small_buffer)
{
    char text[16];

    snprintf(text, sizeof(text), "Bearer abcdefgh");
    sluice_redact(text, sizeof(text));
    cr_assert_lt(strlen(text), sizeof(text));
    cr_assert_null(strstr(text, "abcdefgh"));
}

static char captured[1024];
static int captured_level;

static void capture(int level, const char *msg, void *arg)
{
    (void)arg;
    captured_level = level;
    snprintf(captured, sizeof(captured), "%s", msg);
}

Test(log, callback_receives_redacted_messages_at_or_above_level)
{
    captured[0] = '\0';
    sluice_log_set(capture, SLUICE_LOG_INFO, NULL);
    sluice_log(SLUICE_LOG_DEBUG, "dropped");
    cr_assert_str_eq(captured, "");
    sluice_log(SLUICE_LOG_WARNING, "sent header X-SLURM-USER-TOKEN: %s", JWT);
    cr_assert_eq(captured_level, SLUICE_LOG_WARNING);
    cr_assert_str_eq(captured, "sent header X-SLURM-USER-TOKEN: [REDACTED]");
    cr_assert_null(strstr(captured, "eyJ"));
    sluice_log_set(NULL, SLUICE_LOG_INFO, NULL);
}

Test(log, level_names)
{
    cr_assert_str_eq(sluice_log_level_name(SLUICE_LOG_ERR), "error");
    cr_assert_str_eq(sluice_log_level_name(SLUICE_LOG_DEBUG), "debug");
}
