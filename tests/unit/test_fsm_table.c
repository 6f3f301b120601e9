/* SPDX-License-Identifier: Apache-2.0 */
/* test_fsm_table.c - the code's transition table is the documented one.
 *
 * Reads the section "## Transition table" of docs/state-machine.md (found
 * through $SLUICE_SOURCE_DIR, as the other tests find their fixtures) and
 * checks that its rows `| `FROM` | `event` | `TO` |` are exactly the rows of
 * fsm_table_rows(), no more, no fewer, no duplicate.  Also checks the public
 * face of every state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/fsm.h>

#include "supervise/fsm_int.h"

#define MAX_ROWS 256

/* Parse one row "| `A` | `b` | `C` |" into its three names; false for any
 * other line. */
static bool parse_row(const char *line, char cells[3][64])
{
    const char *p = line;
    int i;

    for (i = 0; i < 3; i++) {
        const char *open = strstr(p, "| `"), *close;

        if (open == NULL)
            return false;
        open += 3;
        close = strchr(open, '`');
        if (close == NULL || (size_t)(close - open) >= 64)
            return false;
        memcpy(cells[i], open, (size_t)(close - open));
        cells[i][close - open] = '\0';
        p = close + 1;
    }
    return strncmp(p, " |", 2) == 0;
}

static size_t read_doc_rows(fsm_row_t *out, size_t cap)
{
    const char *dir = getenv("SLUICE_SOURCE_DIR");
    char path[1024], line[512], cells[3][64];
    bool in_section = false;
    size_t n = 0;
    FILE *f;

    cr_assert_not_null(dir, "SLUICE_SOURCE_DIR is not set");
    snprintf(path, sizeof(path), "%s/docs/state-machine.md", dir);
    f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "## ", 3) == 0) {
            in_section = strcmp(line, "## Transition table\n") == 0;
            continue;
        }
        if (!in_section || !parse_row(line, cells))
            continue;
        cr_assert_lt(n, cap);
        cr_assert(sluice_fsm_state_from_name(cells[0], &out[n].from), "unknown state %s", cells[0]);
        cr_assert(sluice_fsm_event_from_name(cells[1], &out[n].event), "unknown event %s",
                  cells[1]);
        cr_assert(sluice_fsm_state_from_name(cells[2], &out[n].to), "unknown state %s", cells[2]);
        n++;
    }
    fclose(f);
    return n;
}

static bool has_row(const fsm_row_t *rows, size_t n, const fsm_row_t *r)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (rows[i].from == r->from && rows[i].event == r->event && rows[i].to == r->to)
            return true;
    }
    return false;
}

static void row_text(const fsm_row_t *r, char *dst, size_t cap)
{
    snprintf(dst, cap, "%s --%s--> %s", sluice_fsm_state_name(r->from),
             sluice_fsm_event_name(r->event), sluice_fsm_state_name(r->to));
}

Test(fsm_table, doc_table_is_the_code_table)
{
    fsm_row_t doc[MAX_ROWS];
    const fsm_row_t *code;
    size_t n_doc, n_code, i;
    char text[160];

    n_doc = read_doc_rows(doc, MAX_ROWS);
    code = fsm_table_rows(&n_code);
    cr_assert_gt(n_doc, 0, "no rows under \"## Transition table\"");
    for (i = 0; i < n_doc; i++) {
        row_text(&doc[i], text, sizeof(text));
        cr_assert(has_row(code, n_code, &doc[i]), "documented but not in the code: %s", text);
        cr_assert_not(has_row(doc, i, &doc[i]), "documented twice: %s", text);
    }
    for (i = 0; i < n_code; i++) {
        row_text(&code[i], text, sizeof(text));
        cr_assert(has_row(doc, n_doc, &code[i]), "in the code but not documented: %s", text);
        cr_assert_not(has_row(code, i, &code[i]), "in the code twice: %s", text);
    }
    cr_assert_eq(n_doc, n_code);
}

Test(fsm_table, done_has_no_row_and_every_row_is_lookup_consistent)
{
    const fsm_row_t *code;
    size_t n, i;

    code = fsm_table_rows(&n);
    for (i = 0; i < n; i++) {
        cr_assert_neq(code[i].from, SLUICE_FSM_DONE);
        cr_assert(fsm_table_allows(code[i].from, code[i].event));
        cr_assert(fsm_table_has(code[i].from, code[i].event, code[i].to));
    }
    cr_assert_not(fsm_table_allows(SLUICE_FSM_NEW, SLUICE_EV_CANCEL_REQUESTED));
}

Test(fsm_table, inner_states_show_as_submitting)
{
    int i;

    cr_assert_eq(sluice_fsm_state_public(SLUICE_FSM_RECONCILING), SLUICE_FSM_SUBMITTING);
    cr_assert_eq(sluice_fsm_state_public(SLUICE_FSM_RETRYING), SLUICE_FSM_SUBMITTING);
    for (i = 0; i < SLUICE_FSM_STATE_COUNT_; i++) {
        if (i != SLUICE_FSM_RECONCILING && i != SLUICE_FSM_RETRYING)
            cr_assert_eq((int)sluice_fsm_state_public((sluice_fsm_state)i), i);
    }
}
