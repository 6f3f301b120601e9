/* SPDX-License-Identifier: Apache-2.0 */
/* suggest.c - see suggest.h. */
#include <stdint.h>
#include <string.h>

#include "suggest.h"

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;

    return m < c ? m : c;
}

size_t suggest_distance(const char *a, const char *b)
{
    /* Three rows of the table: two back (for a swap), one back, this one. */
    size_t rows[3][SUGGEST_WORD_MAX + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2], *t;
    size_t la = strlen(a), lb = strlen(b), i, j, cost;

    if (la > SUGGEST_WORD_MAX || lb > SUGGEST_WORD_MAX)
        return SIZE_MAX;
    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        cur[0] = i;
        for (j = 1; j <= lb; j++) {
            cost = a[i - 1] == b[j - 1] ? 0 : 1;
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
        t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

void suggest_init(suggest_t *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->best_d = SIZE_MAX;
    s->tie = false;
}

void suggest_add(suggest_t *s, const char *cand)
{
    size_t d;

    if (cand == NULL || s->word == NULL || strcmp(cand, s->word) == 0)
        return;
    if (s->best != NULL && strcmp(cand, s->best) == 0)
        return; /* the same word offered twice is one candidate */
    d = suggest_distance(s->word, cand);
    if (d < s->best_d) {
        s->best = cand;
        s->best_d = d;
        s->tie = false;
    } else if (d == s->best_d && d != SIZE_MAX) {
        s->tie = true;
    }
}

const char *suggest_best(const suggest_t *s)
{
    size_t reach;

    if (s->best == NULL || s->tie)
        return NULL;
    reach = strlen(s->word) / 3;
    if (reach < 1)
        reach = 1;
    if (reach > SUGGEST_MAX_DISTANCE)
        reach = SUGGEST_MAX_DISTANCE;
    return s->best_d <= reach ? s->best : NULL;
}
