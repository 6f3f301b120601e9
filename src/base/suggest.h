/* SPDX-License-Identifier: Apache-2.0 */
/* suggest.h - "did you mean": the known word closest to a misspelt one
 * (internal).
 *
 * The distance is Damerau-Levenshtein's (optimal string alignment): one
 * insertion, deletion, substitution or swap of two neighbours costs 1, so
 * "partiton" is 1 from "partition" and "tiemout" 1 from "timeout".  Bytes
 * are compared as they are (ASCII keys; case counts).
 *
 * A suggestion is made only when it helps: the closest candidate is at most
 * a third of the misspelt word's length away (at least 1, at most
 * SUGGEST_MAX_DISTANCE), and no other candidate is as close.  Candidates are
 * fed one at a time, so a caller walks whatever table it has:
 *
 *     suggest_t s;
 *     suggest_init(&s, key);
 *     for (i = 0; known[i] != NULL; i++)
 *         suggest_add(&s, known[i]);
 *     if (suggest_best(&s) != NULL)
 *         ... "unknown key (did you mean %s?)", suggest_best(&s)
 *
 * Nothing allocates; words longer than SUGGEST_WORD_MAX bytes are never
 * close to anything.  The candidate returned is the caller's pointer.
 */
#ifndef SLUICE_SUGGEST_H
#define SLUICE_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

/* The longest word compared (longer ones have no suggestion). */
#define SUGGEST_WORD_MAX 64
/* The farthest a suggestion may be, however long the word. */
#define SUGGEST_MAX_DISTANCE 3

typedef struct {
    const char *word; /* the misspelt word (borrowed) */
    const char *best; /* the closest candidate so far, or NULL */
    size_t best_d;    /* its distance */
    bool tie;         /* another candidate is as close */
} suggest_t;

/* The edit distance between a and b; SIZE_MAX when either is longer than
 * SUGGEST_WORD_MAX bytes. */
size_t suggest_distance(const char *a, const char *b);

void suggest_init(suggest_t *s, const char *word);
/* Consider `cand` (NULL and the word itself are ignored). */
void suggest_add(suggest_t *s, const char *cand);
/* The one closest candidate within reach, or NULL. */
const char *suggest_best(const suggest_t *s);

#endif /* SLUICE_SUGGEST_H */
