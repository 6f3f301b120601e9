/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_ha.c - a launcher of a replica that stops leading (leader.h):
 * forget everything tracked, so that the next lead starts from the store
 * alone, by the recovery rules.
 *
 * Notes:
 * - What is forgotten is durable: every tracked launch and every accept on
 *   the intake was committed before it was tracked.  Secret values (held
 *   only in memory) are wiped; a launch that still needed them ends as
 *   `secret-unavailable` at the next leader's recovery, as after a
 *   restart.
 */
#include <stdlib.h>

#include <sluice/launcher.h>

#include "launcher_intake.h"
#include "launcher_poll.h"

void sluice_launcher_forget(sluice_launcher_t *l)
{
    if (l == NULL)
        return;
    launcher_intake_discard(l);
    while (l->n > 0)
        launcher_drop_launch(l, l->v[l->n - 1]);
    l->gseq = 0;
    l->asks_pending = false;
    l->activity = false;
    launcher_poll_forget(l);
}
