/* SPDX-License-Identifier: Apache-2.0 */
/* test_syntax.c - the Slurm value syntaxes of base/syntax.h: time limits,
 * memory sizes, durations, signals, variable names and paths; valid values,
 * boundaries, and errors that name the field and the reason. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "base/syntax.h"

#define TIME_BAD "expected minutes or a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)"

static void time_ok(const char *in, uint32_t max, uint32_t want)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    uint32_t m = 0;

    cr_assert_eq(syntax_slurm_time(&m, in, max, "time", &err), SLUICE_OK, "%s: %s", in, err.text);
    cr_expect_eq(m, want, "%s -> %u, want %u", in, m, want);
}

static void time_bad(const char *in, uint32_t max, const char *text)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    uint32_t m = 7;

    cr_assert_eq(syntax_slurm_time(&m, in, max, "job.time", &err), SLUICE_EINVAL, "%s", in);
    cr_expect_str_eq(err.text, text, "%s", in);
    cr_expect_eq(m, 7, "%s: *minutes set on failure", in);
}

Test(syntax, time_forms)
{
    time_ok("90", 525600, 90);
    time_ok("30:30", 525600, 31); /* M:S, seconds round up */
    time_ok("30:00", 525600, 30);
    time_ok("01:30:00", 525600, 90); /* H:M:S */
    time_ok("0:10:01", 525600, 11);
    time_ok("00:00:01", 525600, 1);
    time_ok("1-0", 525600, 1440); /* D-H */
    time_ok("1-02:30", 525600, 1590);
    time_ok("1-00:00:01", 525600, 1441);
    time_ok("7-00:00:00", 525600, 10080);
}

Test(syntax, time_parts_add_up_as_in_slurm)
{
    time_ok("1:60", 525600, 2);        /* 1 min 60 s */
    time_ok("1:75", 525600, 3);        /* 135 s, rounded up */
    time_ok("25:61:00", 525600, 1561); /* 25 h 61 min */
    time_ok("2-25", 525600, 4380);     /* 2 days 25 h */
    time_ok("0-0:0:59", 525600, 1);    /* below a minute rounds up */
    time_ok("000000090", 525600, 90);  /* nine digits */
    time_ok("0-23:59:60", 525600, 1440);
}

Test(syntax, time_bounds)
{
    time_ok("365-00:00:00", 525600, 525600);
    time_ok("525600", 525600, 525600);
    time_bad("525601", 525600, "job.time: must be at most 365 days");
    time_bad("365-00:00:01", 525600, "job.time: must be at most 365 days");
    time_bad("100", 99, "job.time: must be at most 99 minutes");
    time_ok("2982616-0", SYNTAX_TIME_MAX_MINUTES, 4294967040U);
    time_bad("2982617-0", SYNTAX_TIME_MAX_MINUTES, "job.time: must be at most 4294967293 minutes");
    time_bad("999999999-999999999:999999999:999999999", SYNTAX_TIME_MAX_MINUTES,
             "job.time: must be at most 4294967293 minutes");
    time_bad("0", 525600, "job.time: must be at least 1 minute");
    time_bad("00:00:00", 525600, "job.time: must be at least 1 minute");
    time_bad("0-0", 525600, "job.time: must be at least 1 minute");
}

Test(syntax, time_refused)
{
    static const char *const bad[] = {"",      "a",       "1-",    "1:",         ":5",       "1::2",
                                      "1-2-3", "1:2:3:4", "-5",    "+5",         " 5",       "5 ",
                                      "1.5",   "5m",      "1-:30", "1234567890", "1-1:2:3:4"};
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        time_bad(bad[i], 525600, "job.time: " TIME_BAD);
    time_bad("UNLIMITED", 525600,
             "job.time: no limit (UNLIMITED, INFINITE, -1) is refused: give a finite time");
    time_bad("infinite", 525600,
             "job.time: no limit (UNLIMITED, INFINITE, -1) is refused: give a finite time");
    time_bad("-1", 525600,
             "job.time: no limit (UNLIMITED, INFINITE, -1) is refused: give a finite time");
}

Test(syntax, memory_sizes)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    uint64_t mib = 0;

    cr_assert_eq(syntax_mem_size(&mib, "4096", "mem", &err), SLUICE_OK);
    cr_expect_eq(mib, 4096);
    cr_assert_eq(syntax_mem_size(&mib, "1k", "mem", &err), SLUICE_OK);
    cr_expect_eq(mib, 1);
    cr_assert_eq(syntax_mem_size(&mib, "1025K", "mem", &err), SLUICE_OK);
    cr_expect_eq(mib, 2);
    cr_assert_eq(syntax_mem_size(&mib, "512m", "mem", &err), SLUICE_OK);
    cr_expect_eq(mib, 512);
    cr_assert_eq(syntax_mem_size(&mib, "32G", "mem", &err), SLUICE_OK);
    cr_expect_eq(mib, 32768);
    cr_assert_eq(syntax_mem_size(&mib, "64T", "mem", &err), SLUICE_OK);
    cr_expect_eq(mib, SYNTAX_MEM_MAX_MIB);
    cr_assert_eq(syntax_mem_size(&mib, "65T", "pool.mem", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "pool.mem: must be at most 64 TiB");
    cr_assert_eq(syntax_mem_size(&mib, "0G", "pool.mem", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "pool.mem: must be at least 1 MiB");
    cr_assert_eq(syntax_mem_size(&mib, "32GB", "pool.mem", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "pool.mem: expected MiB as an integer or a size like \"512M\", "
                               "\"32G\" or \"1T\"");
    cr_assert_eq(syntax_mem_size(&mib, "", "pool.mem", &err), SLUICE_EINVAL);
    cr_assert_eq(syntax_mem_size(&mib, "-1", "pool.mem", &err), SLUICE_EINVAL);
    cr_assert_eq(syntax_mem_size(&mib, "1234567890123", "pool.mem", &err), SLUICE_EINVAL);
}

Test(syntax, durations)
{
    static const struct {
        const char *in;
        long secs;
    } ok[] = {{"0", 0}, {"45", 45}, {"30s", 30}, {"5m", 300}, {"2h", 7200}, {"1d", 86400}};
    static const char *const bad[] = {"",     "-5", "5 m", "5min",
                                      "1.5h", "m",  "+5",  "99999999999999999999"};
    sluice_error_t err = SLUICE_ERROR_INIT;
    long v = 0;
    size_t i;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        cr_assert_eq(syntax_duration(&v, ok[i].in, "d", &err), SLUICE_OK, "%s", ok[i].in);
        cr_expect_eq(v, ok[i].secs, "%s", ok[i].in);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(syntax_duration(&v, bad[i], "poll_interval", &err), SLUICE_EINVAL, "%s",
                     bad[i]);
        cr_expect_str_eq(err.text,
                         "poll_interval: expected a duration: seconds, or a number with s, m, h "
                         "or d (\"30s\", \"5m\", \"2h\")",
                         "%s", bad[i]);
    }
}

Test(syntax, signals)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *out = NULL;

    cr_assert_eq(syntax_signal(&out, "USR1", "signal", &err), SLUICE_OK);
    cr_expect_str_eq(out, "USR1@60");
    free(out);
    cr_assert_eq(syntax_signal(&out, "SIGTERM@0", "signal", &err), SLUICE_OK);
    cr_expect_str_eq(out, "TERM@0");
    free(out);
    cr_assert_eq(syntax_signal(&out, "64@65535", "signal", &err), SLUICE_OK);
    cr_expect_str_eq(out, "64@65535");
    free(out);
    out = NULL;
    cr_assert_eq(syntax_signal(&out, "USR1@65536", "signal", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "signal: seconds must be between 0 and 65535");
    cr_expect_null(out);
    cr_assert_eq(syntax_signal(&out, "FOO", "signal", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "signal: expected <signal>[@<seconds>], e.g. \"USR1@120\"; signal "
                               "is a name (HUP, INT, USR1, TERM, ...) or a number 1-64");
    cr_assert_eq(syntax_signal(&out, "0", "signal", &err), SLUICE_EINVAL);
    cr_assert_eq(syntax_signal(&out, "65", "signal", &err), SLUICE_EINVAL);
    cr_assert_eq(syntax_signal(&out, "usr1", "signal", &err), SLUICE_EINVAL);
    cr_assert_eq(syntax_signal(&out, "USR1@-1", "signal", &err), SLUICE_EINVAL);
    cr_assert_eq(syntax_signal(&out, "", "signal", &err), SLUICE_EINVAL);
}

Test(syntax, variable_names)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char name[130];

    cr_expect_eq(syntax_envname("PATH", "env", &err), SLUICE_OK);
    cr_expect_eq(syntax_envname("_x1", "env", &err), SLUICE_OK);
    memset(name, 'A', 128);
    name[128] = '\0';
    cr_expect_eq(syntax_envname(name, "env", &err), SLUICE_OK);
    name[128] = 'A';
    name[129] = '\0';
    cr_assert_eq(syntax_envname(name, "env.X", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "env.X: expected a variable name of 1 to 128 bytes");
    cr_assert_eq(syntax_envname("", "env.X", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "env.X: expected a variable name of 1 to 128 bytes");
    cr_assert_eq(syntax_envname("1A", "env.1A", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "env.1A: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*");
    cr_assert_eq(syntax_envname("A-B", "env.A-B", &err), SLUICE_EINVAL);
    cr_assert_eq(syntax_envname("A\xc3\xa9", "env", &err), SLUICE_EINVAL);
    cr_expect_null(syntax_envname_reason("SLURM_JOB_ID")); /* prefixes are the caller's rule */
}

Test(syntax, paths)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *out = NULL;
    char *big = malloc(4098);

    cr_assert_eq(syntax_path_normalize(&out, "//a/./b//c/", "workdir", &err), SLUICE_OK);
    cr_expect_str_eq(out, "/a/b/c");
    free(out);
    out = NULL;
    cr_assert_eq(syntax_path_normalize(&out, "relative", "workdir", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "workdir: expected an absolute path");
    cr_assert_eq(syntax_path_normalize(&out, "/a/../b", "workdir", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "workdir: path must not contain \"..\"");
    cr_assert_eq(syntax_path_normalize(&out, "/a\tb", "workdir", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "workdir: path contains a control character");
    memset(big, 'a', 4097);
    big[0] = '/';
    big[4097] = '\0';
    cr_assert_eq(syntax_path_normalize(&out, big, "workdir", &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "workdir: path longer than 4096 bytes");
    big[4096] = '\0';
    cr_assert_eq(syntax_path_normalize(&out, big, "workdir", &err), SLUICE_OK);
    free(out);
    free(big);

    cr_expect(syntax_path_plain("/", 1));
    cr_expect(syntax_path_plain("/usr/bin", 8));
    cr_expect_not(syntax_path_plain("/usr/bin/", 9));
    cr_expect_not(syntax_path_plain("/usr//bin", 9));
    cr_expect_not(syntax_path_plain("/usr/./bin", 10));
    cr_expect_not(syntax_path_plain("/usr/../bin", 11));
    cr_expect_not(syntax_path_plain("/a:b", 4));
    cr_expect_not(syntax_path_plain("/a$b", 4));
    cr_expect_not(syntax_path_plain("usr", 3));
    cr_expect(syntax_path_list("/usr/bin:/bin"));
    cr_expect_not(syntax_path_list("/usr/bin::/bin"));
    cr_expect_not(syntax_path_list("/usr/bin:"));
    cr_expect_not(syntax_path_list(""));
}
