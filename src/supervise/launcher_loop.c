/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_loop.c - the one loop that drives a launcher
 * (sluice_launcher_loop): ask the caller, step, idle.
 *
 * Purpose:
 *   `sluice serve` runs it once per cluster (server_driver.c: each cycle
 *   under the cluster's mutex, retention before the first cluster's
 *   cycles, no step while a replica does not lead) and `sluice launch
 *   --wait` until its launch ends (cmd_launch.c: the progress line between
 *   steps).  What differs between them is configuration
 *   (sluice_launcher_loop_t), not another loop.
 *
 * Notes:
 *   - It uses the launcher's public calls only (step, interval, idle): it
 *     sits above launcher.c, and nothing in the launcher calls it.
 *   - The idle is cut in slices (slice_ms) so that *stop is seen; a wake-up
 *     (an accept, a cancel) ends it at once.
 */
#include <sluice/launcher.h>
#include <sluice/log.h>

static sluice_err default_step(sluice_launcher_t *l, int64_t *next_ms, sluice_error_t *err)
{
    sluice_err rc = sluice_launcher_step(l, err);

    *next_ms = sluice_launcher_next_interval_ms(l);
    return rc;
}

/* Idle up to ms in slices of slice_ms (0: one), leaving early on a wake-up
 * or once *stop is set. */
static void idle_sliced(sluice_launcher_t *l, int64_t ms, int64_t slice_ms, volatile int *stop)
{
    int64_t slept = 0;

    if (slice_ms <= 0)
        slice_ms = ms;
    do {
        int64_t slice = ms - slept < slice_ms ? ms - slept : slice_ms;
        if (sluice_launcher_idle(l, slice))
            return;
        slept += slice;
    } while (slept < ms && (stop == NULL || !*stop));
}

sluice_err
sluice_launcher_loop(sluice_launcher_t *l, const sluice_launcher_loop_t *lo, sluice_error_t *err)
{
    sluice_launcher_loop_t o = SLUICE_LAUNCHER_LOOP_INIT;

    if (l == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launcher: required");
    if (lo != NULL)
        o = *lo;
    while (o.stop == NULL || !*o.stop) {
        sluice_loop_next next = o.before != NULL ? o.before(o.arg) : SLUICE_LOOP_STEP;
        int64_t wait_ms = o.skip_idle_ms > 0 ? o.skip_idle_ms : 200;

        if (next == SLUICE_LOOP_STOP)
            break;
        if (next == SLUICE_LOOP_STEP) {
            sluice_error_t e = SLUICE_ERROR_INIT;
            sluice_err rc =
                o.step != NULL ? o.step(l, o.arg, &wait_ms, &e) : default_step(l, &wait_ms, &e);
            if (rc != SLUICE_OK && !o.keep_going) {
                if (err != NULL)
                    *err = e;
                return rc;
            }
            if (rc != SLUICE_OK)
                sluice_log(SLUICE_LOG_WARNING, "launcher cycle%s: %s", o.name ? o.name : "",
                           e.text);
            if (o.max_idle_ms > 0 && wait_ms > o.max_idle_ms)
                wait_ms = o.max_idle_ms;
        }
        if (o.stop == NULL || !*o.stop)
            idle_sliced(l, wait_ms, o.slice_ms, o.stop);
    }
    return SLUICE_OK;
}
