/* SPDX-License-Identifier: Apache-2.0 */
/* test_suggest.c - the edit distance and the "did you mean" pick. */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "base/suggest.h"

static const char *pick(const char *word, const char *const *known)
{
    suggest_t s;

    suggest_init(&s, word);
    for (; *known != NULL; known++)
        suggest_add(&s, *known);
    return suggest_best(&s);
}

Test(suggest, distance_counts_edits)
{
    cr_assert_eq(suggest_distance("", ""), 0);
    cr_assert_eq(suggest_distance("abc", ""), 3);
    cr_assert_eq(suggest_distance("", "abc"), 3);
    cr_assert_eq(suggest_distance("partition", "partition"), 0);
    cr_assert_eq(suggest_distance("partiton", "partition"), 1);   /* deletion */
    cr_assert_eq(suggest_distance("partitionn", "partition"), 1); /* insertion */
    cr_assert_eq(suggest_distance("partitiom", "partition"), 1);  /* substitution */
    cr_assert_eq(suggest_distance("kitten", "sitting"), 3);
    cr_assert_eq(suggest_distance("Rest", "rest"), 1); /* case counts */
}

Test(suggest, a_swap_of_neighbours_is_one_edit)
{
    cr_assert_eq(suggest_distance("tiemout", "timeout"), 1);
    cr_assert_eq(suggest_distance("ab", "ba"), 1);
    cr_assert_eq(suggest_distance("ca", "abc"), 3); /* optimal string alignment */
}

Test(suggest, too_long_words_are_far)
{
    char big[SUGGEST_WORD_MAX + 2];

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cr_assert_eq(suggest_distance(big, "a"), SIZE_MAX);
    cr_assert_eq(suggest_distance("a", big), SIZE_MAX);
    big[SUGGEST_WORD_MAX] = '\0';
    cr_assert_eq(suggest_distance(big, big), 0);
}

Test(suggest, picks_the_one_closest)
{
    static const char *const keys[] = {"url",      "api_version", "user",
                                       "jwt_file", "tls_verify",  NULL};

    cr_assert_str_eq(pick("api_verison", keys), "api_version");
    cr_assert_str_eq(pick("tls_verfy", keys), "tls_verify");
    cr_assert_str_eq(pick("usr", keys), "user");
    cr_assert_str_eq(pick("jwtfile", keys), "jwt_file");
}

Test(suggest, nothing_close_gives_nothing)
{
    static const char *const keys[] = {"url", "api_version", "user", NULL};

    cr_assert_null(pick("completely_different", keys));
    cr_assert_null(pick("xyz", keys));
    /* Short words get one edit only: "ab" is 2 from "url". */
    cr_assert_null(pick("ab", keys));
}

Test(suggest, a_tie_gives_nothing)
{
    static const char *const keys[] = {"qos", "pos", NULL};

    cr_assert_null(pick("xos", keys));
}

Test(suggest, the_reach_grows_with_the_word_and_stops_at_three)
{
    static const char *const keys[] = {"gpus_per_node", "user", "abcdefghijklmnopqrst", NULL};

    cr_assert_str_eq(pick("gpu_per_nod", keys), "gpus_per_node"); /* 2 edits, 11 letters */
    cr_assert_null(pick("usr_x", keys)); /* 2 edits, 5 letters: one is the reach */
    cr_assert_str_eq(pick("abcdefghijklmnopqXYZ", keys), "abcdefghijklmnopqrst");
    cr_assert_null(pick("abcdefghijklmnopWXYZ", keys)); /* 4 edits: never */
}

Test(suggest, duplicates_and_the_word_itself_are_ignored)
{
    static const char *const keys[] = {"user", "user", "usr", NULL};
    suggest_t s;

    cr_assert_str_eq(pick("usera", keys), "user");
    suggest_init(&s, "user");
    suggest_add(&s, "user");
    suggest_add(&s, NULL);
    cr_assert_null(suggest_best(&s));
}
