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

static sluice_log_record_t last;
static char last_sub[64], last_id[160], last_msg[1024];
static int n_records;

static void capture_record(const sluice_log_record_t *rec, void *arg)
{
    (void)arg;
    last = *rec;
    snprintf(last_sub, sizeof(last_sub), "%s", rec->subsystem);
    snprintf(last_id, sizeof(last_id), "%s", rec->launch_id ? rec->launch_id : "(none)");
    snprintf(last_msg, sizeof(last_msg), "%s", rec->msg);
    n_records++;
}

Test(log, records_carry_time_subsystem_and_launch_id)
{
    n_records = 0;
    sluice_log_set_records(capture_record, SLUICE_LOG_INFO, NULL);
    sluice_log_from("/x/src/supervise/launcher_poll.c", SLUICE_LOG_WARNING,
                    "launch tr-1.a_b: lookup failed: %s", "timeout");
    cr_assert_eq(n_records, 1);
    cr_assert_str_eq(last_sub, "launcher_poll");
    cr_assert_str_eq(last_id, "tr-1.a_b");
    cr_assert_str_eq(last_msg, "launch tr-1.a_b: lookup failed: timeout");
    cr_assert_gt(last.time_ms, 1700000000000LL);
    /* No "launch <id>:" prefix, no launch id; a message below the level is dropped. */
    sluice_log_from("http.c", SLUICE_LOG_NOTICE, "launcher: started");
    cr_assert_str_eq(last_id, "(none)");
    cr_assert_str_eq(last_sub, "http");
    sluice_log_from("http.c", SLUICE_LOG_DEBUG, "dropped");
    cr_assert_eq(n_records, 2);
    cr_assert(sluice_log_enabled(SLUICE_LOG_INFO));
    cr_assert_not(sluice_log_enabled(SLUICE_LOG_DEBUG));
    /* Redaction happens before the record sink too. */
    sluice_log_from("auth.c", SLUICE_LOG_ERR, "token %s", JWT);
    cr_assert_null(strstr(last_msg, "eyJ"));
    sluice_log_set_records(NULL, SLUICE_LOG_INFO, NULL);
    cr_assert_not(sluice_log_enabled(SLUICE_LOG_ERR));
}

static sluice_log_record_t rec_at(const char *msg, const char *id)
{
    sluice_log_record_t r;

    r.time_ms = 1764641465123LL; /* 2025-12-02T02:11:05.123Z */
    r.level = SLUICE_LOG_WARNING;
    r.subsystem = "launcher_poll";
    r.launch_id = id;
    r.msg = msg;
    return r;
}

Test(log, text_format_has_time_level_and_subsystem_on_one_line)
{
    char line[256];
    sluice_log_record_t r = rec_at("launch a: two\nlines", "a");
    size_t n = sluice_log_format_record(&r, SLUICE_LOG_FORMAT_TEXT, line, sizeof(line));

    cr_assert_str_eq(line, "2025-12-02T02:11:05.123Z warning launcher_poll: launch a: two lines\n");
    cr_assert_eq(n, strlen(line));
}

Test(log, journald_format_has_the_priority_prefix_and_no_time)
{
    char line[256];
    sluice_log_record_t r = rec_at("slurmrestd unreachable", NULL);

    sluice_log_format_record(&r, SLUICE_LOG_FORMAT_JOURNALD, line, sizeof(line));
    cr_assert_str_eq(line, "<4>launcher_poll: slurmrestd unreachable\n");
}

Test(log, json_format_escapes_and_names_the_launch)
{
    char line[512];
    sluice_log_record_t r = rec_at("launch a: say \"hi\"\\ \x01 \xc3\xa9", "a");

    sluice_log_format_record(&r, SLUICE_LOG_FORMAT_JSON, line, sizeof(line));
    cr_assert_str_eq(line, "{\"time\":\"2025-12-02T02:11:05.123Z\",\"level\":\"warning\","
                           "\"subsystem\":\"launcher_poll\",\"launch_id\":\"a\","
                           "\"msg\":\"launch a: say \\\"hi\\\"\\\\ \\u0001 \xc3\xa9\"}\n");
}

Test(log, json_line_cut_to_fit_stays_valid_json)
{
    char msg[600], line[160];
    size_t i, n;

    for (i = 0; i + 2 < sizeof(msg); i += 2) {
        msg[i] = '\xc3'; /* é, two bytes: a cut must not split it */
        msg[i + 1] = '\xa9';
    }
    msg[i] = '\0';
    for (size_t size = 120; size <= sizeof(line); size++) {
        sluice_log_record_t r = rec_at(msg, NULL);

        n = sluice_log_format_record(&r, SLUICE_LOG_FORMAT_JSON, line, size);
        cr_assert_lt(n, size);
        cr_assert_eq(line[n - 1], '\n');
        cr_assert_eq(line[n - 2], '}', "size %zu: %s", size, line);
        cr_assert_eq(line[n - 3], '"');
        /* The text before the closing quote ends on a whole character. */
        cr_assert_eq((unsigned char)line[n - 4], 0xa9, "size %zu: %s", size, line);
    }
}

Test(log, level_and_format_names_parse)
{
    cr_assert_eq(sluice_log_level_parse("warning"), SLUICE_LOG_WARNING);
    cr_assert_eq(sluice_log_level_parse("WARN"), SLUICE_LOG_WARNING);
    cr_assert_eq(sluice_log_level_parse("debug"), SLUICE_LOG_DEBUG);
    cr_assert_eq(sluice_log_level_parse("6"), SLUICE_LOG_INFO);
    cr_assert_eq(sluice_log_level_parse("8"), -1);
    cr_assert_eq(sluice_log_level_parse("loud"), -1);
    cr_assert_eq(sluice_log_level_parse(NULL), -1);
    cr_assert_eq(sluice_log_format_parse("json"), SLUICE_LOG_FORMAT_JSON);
    cr_assert_eq(sluice_log_format_parse("journald"), SLUICE_LOG_FORMAT_JOURNALD);
    cr_assert_eq(sluice_log_format_parse("text"), SLUICE_LOG_FORMAT_TEXT);
    cr_assert_eq(sluice_log_format_parse("xml"), -1);
}
