/* SPDX-License-Identifier: Apache-2.0 */
/* test_marker.c - the exactly-once marker (base/marker.c): SHA-256 against
 * known vectors, sha8, the exact job name and comment, and the launch_id
 * rule with its message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/launcher.h>
#include <sluice/render.h>

#include "base/marker.h"

TestSuite(marker, .timeout = 10);

/* ---- SHA-256 ----------------------------------------------------------- */

Test(marker, sha256_hex_matches_the_fips_180_vectors)
{
    char hex[MARKER_SHA256_HEX_SIZE];

    cr_assert(marker_sha256_hex("", hex));
    cr_expect_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    cr_assert(marker_sha256_hex("abc", hex));
    cr_expect_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    cr_assert(marker_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", hex));
    cr_expect_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* ---- HMAC-SHA256 (the webhook signature) -------------------------------- */

/* RFC 4231, test cases 1, 2, 3 and 6 (a key longer than the block). */
Test(marker, hmac_sha256_matches_the_rfc_4231_vectors)
{
    char hex[MARKER_SHA256_HEX_SIZE];
    unsigned char k1[20], k3[20], d3[50], k6[131];
    const char *d6 = "Test Using Larger Than Block-Size Key - Hash Key First";

    memset(k1, 0x0b, sizeof(k1));
    cr_assert(marker_hmac_sha256_hex(k1, sizeof(k1), "Hi There", 8, hex));
    cr_expect_str_eq(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    cr_assert(marker_hmac_sha256_hex("Jefe", 4, "what do ya want for nothing?", 28, hex));
    cr_expect_str_eq(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(k3, 0xaa, sizeof(k3));
    memset(d3, 0xdd, sizeof(d3));
    cr_assert(marker_hmac_sha256_hex(k3, sizeof(k3), d3, sizeof(d3), hex));
    cr_expect_str_eq(hex, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    memset(k6, 0xaa, sizeof(k6));
    cr_assert(marker_hmac_sha256_hex(k6, sizeof(k6), d6, strlen(d6), hex));
    cr_expect_str_eq(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

/* The signed text of a delivery is "<timestamp>.<body>" (docs/api.md);
 * the value is Python's hmac.new(b"k", ..., sha256). */
Test(marker, hmac_sha256_signs_a_webhook_payload)
{
    char hex[MARKER_SHA256_HEX_SIZE];
    const char *text = "1700000000.{\"a\":1}";

    cr_assert(marker_hmac_sha256_hex("k", 1, text, strlen(text), hex));
    cr_expect_str_eq(hex, "1b6ad1bc9bf48c52ce01939866d5877c6cc4e87ddad27e16673cb8c4964394a3");
    cr_expect_not(marker_hmac_sha256_hex(NULL, 0, text, strlen(text), hex));
    cr_expect_str_eq(hex, "");
}

Test(marker, sha256_raw_bytes_agree_with_the_hex)
{
    unsigned char md[MARKER_SHA256_LEN];

    cr_assert(marker_sha256("abc", 3, md));
    cr_expect_eq(md[0], 0xba);
    cr_expect_eq(md[1], 0x78);
    cr_expect_eq(md[31], 0xad);
}

Test(marker, sha8_is_the_first_eight_hex_digits)
{
    char h[MARKER_SHA8_SIZE];

    marker_sha8("abc", h);
    cr_expect_str_eq(h, "ba7816bf");
    marker_sha8("", h);
    cr_expect_str_eq(h, "e3b0c442");
}

/* ---- job name and comment ---------------------------------------------- */

Test(marker, job_name_has_the_exact_format)
{
    char buf[200];
    char h[MARKER_SHA8_SIZE];
    char want[200];
    int n;

    marker_sha8("L1", h);
    snprintf(want, sizeof(want), "sluice-site1-%s.1", h);
    n = marker_job_name(buf, sizeof(buf), "sluice", "site1", "L1", 1);
    cr_expect_str_eq(buf, want);
    cr_expect_eq(n, (int)strlen(want));
}

Test(marker, job_name_cuts_the_site_at_32_characters)
{
    char buf[200];
    char h[MARKER_SHA8_SIZE];
    char want[200];

    marker_sha8("L1", h);
    snprintf(want, sizeof(want), "nvfl-a-very-long-site-name-that-goes--%s.3", h);
    marker_job_name(buf, sizeof(buf), "nvfl", "a-very-long-site-name-that-goes-beyond-32", "L1", 3);
    cr_expect_str_eq(buf, want);
}

Test(marker, job_name_defaults)
{
    char buf[200];
    char h[MARKER_SHA8_SIZE];
    char want[200];

    marker_sha8("L1", h);
    snprintf(want, sizeof(want), "sluice-default-%s.2", h);
    marker_job_name(buf, sizeof(buf), NULL, NULL, "L1", 2);
    cr_expect_str_eq(buf, want);
    marker_job_name(buf, sizeof(buf), "", NULL, "L1", 2);
    cr_expect_str_eq(buf, want);
    marker_sha8("", h);
    snprintf(want, sizeof(want), "sluice-s-%s.1", h);
    marker_job_name(buf, sizeof(buf), NULL, "s", NULL, 1);
    cr_expect_str_eq(buf, want);
}

Test(marker, job_name_truncates_like_snprintf)
{
    char buf[8];
    int n = marker_job_name(buf, sizeof(buf), "sluice", "site1", "L1", 1);

    cr_expect_eq(n, (int)strlen("sluice-site1-") + 8 + 2);
    cr_expect_str_eq(buf, "sluice-");
    cr_expect_eq(marker_job_name(NULL, 0, "sluice", "site1", "L1", 1), n);
}

Test(marker, job_name_dup_is_the_same_name)
{
    char a[200];
    char *d = marker_job_name_dup("sluice", "site1", "launch-7", 4);

    marker_job_name(a, sizeof(a), "sluice", "site1", "launch-7", 4);
    cr_assert_not_null(d);
    cr_expect_str_eq(d, a);
    free(d);
}

Test(marker, comment_has_the_exact_format)
{
    char buf[200];
    char *d;

    cr_expect_eq(marker_comment(buf, sizeof(buf), "job-1", 3), 14);
    cr_expect_str_eq(buf, "sluice:job-1:3");
    marker_comment(buf, sizeof(buf), NULL, 1);
    cr_expect_str_eq(buf, "sluice::1");
    d = marker_comment_dup("a.b_c", 4294967295u);
    cr_assert_not_null(d);
    cr_expect_str_eq(d, "sluice:a.b_c:4294967295");
    free(d);
}

/* ---- the launch_id rule ------------------------------------------------ */

Test(marker, launch_id_valid_cases)
{
    static const char *const ok[] = {"a",   "A",  "0",   "job-1", "a.b_c-D",
                                     "...", ".a", "a..", "x.y.z"};
    char longest[MARKER_LAUNCH_ID_MAX + 1];
    size_t i;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        cr_expect(marker_launch_id_ok(ok[i], strlen(ok[i])), "%s", ok[i]);
        cr_expect_eq(marker_check_launch_id("launch_id", ok[i], NULL), SLUICE_OK, "%s", ok[i]);
    }
    memset(longest, 'a', MARKER_LAUNCH_ID_MAX);
    longest[MARKER_LAUNCH_ID_MAX] = '\0';
    cr_expect(marker_launch_id_ok(longest, strlen(longest)));
    cr_expect_eq(marker_check_launch_id("launch_id", longest, NULL), SLUICE_OK);
}

Test(marker, launch_id_invalid_cases)
{
    static const char *const bad[] = {"",   "a b", "a/b", "a:b", "a\nb",     "ü",
                                      "a$", "a;b", ".",   "..",  "../../x/", "id\t"};
    char toolong[MARKER_LAUNCH_ID_MAX + 2];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect(!marker_launch_id_ok(bad[i], strlen(bad[i])), "%s", bad[i]);
    memset(toolong, 'a', MARKER_LAUNCH_ID_MAX + 1);
    toolong[MARKER_LAUNCH_ID_MAX + 1] = '\0';
    cr_expect(!marker_launch_id_ok(toolong, strlen(toolong)));
    cr_expect(!marker_launch_id_ok(NULL, 0));
    /* Only len bytes count: no NUL needed. */
    cr_expect(marker_launch_id_ok("ab/c", 2));
}

Test(marker, launch_id_error_names_the_field)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char toolong[MARKER_LAUNCH_ID_MAX + 2];

    cr_expect_eq(marker_check_launch_id("depends_on.launch_id", "a b", &err), SLUICE_EINVAL);
    cr_expect_str_eq(
        err.text,
        "depends_on.launch_id: expected 1 to 128 characters from [A-Za-z0-9._-], not . or ..");
    cr_expect_eq(marker_check_launch_id("launch_id", NULL, &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text,
                     "launch_id: expected 1 to 128 characters from [A-Za-z0-9._-], not . or ..");
    memset(toolong, 'a', MARKER_LAUNCH_ID_MAX + 1);
    toolong[MARKER_LAUNCH_ID_MAX + 1] = '\0';
    cr_expect_eq(marker_check_launch_id("launch_id", toolong, &err), SLUICE_EINVAL);
    cr_expect_eq(marker_check_launch_id("launch_id", "", &err), SLUICE_EINVAL);
}
