/* SPDX-License-Identifier: Apache-2.0 */
/* constraint.c - the Slurm constraint evaluator of `sluice check`: does a
 * node with a set of features satisfy a constraint expression?
 *
 * Notes:
 * - Only feature names joined by '&' and '|' are understood ('&' binds
 *   tighter); brackets, counts and other syntax are reported as -1 so the
 *   caller can say that it cannot judge (sluice_constraint_match() in
 *   client.h).
 * - Pure text work: no allocation, no I/O.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <sluice/client.h>

static bool feature_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-' || ch == '.' || ch == ':';
}

static bool has_feature(const char *features, const char *name, size_t len)
{
    const char *p = features;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);

        while (n > 0 && *p == ' ') {
            p++;
            n--;
        }
        while (n > 0 && p[n - 1] == ' ')
            n--;
        if (n == len && strncmp(p, name, len) == 0)
            return true;
        p = end != NULL ? end + 1 : NULL;
    }
    return false;
}

int sluice_constraint_match(const char *constraint, const char *features)
{
    const char *p = constraint;
    bool any = false;  /* some OR-term was satisfied */
    bool term = true;  /* the current AND-term so far */
    bool seen = false; /* a name was read in this term */

    if (constraint == NULL)
        return -1;
    if (features == NULL)
        features = "";
    for (;;) {
        while (*p == ' ')
            p++;
        if (feature_char(*p)) {
            const char *s = p;

            if (seen)
                return -1;
            while (feature_char(*p))
                p++;
            term = term && has_feature(features, s, (size_t)(p - s));
            seen = true;
            continue;
        }
        if (!seen)
            return -1; /* empty operand or unsupported syntax */
        if (*p == '&') {
            seen = false;
            p++;
        } else if (*p == '|' || *p == '\0') {
            any = any || term;
            if (*p == '\0')
                break;
            term = true;
            seen = false;
            p++;
        } else {
            return -1;
        }
    }
    return any ? 1 : 0;
}
