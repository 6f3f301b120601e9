/* SPDX-License-Identifier: Apache-2.0 */
/* access_capture.h - the access log of `sluice serve` as a test sees it:
 * a record sink that keeps the "access" subsystem's lines (the first
 * ACCESS_CAPTURE_MAX of them). */
#ifndef SLUICE_TEST_ACCESS_CAPTURE_H
#define SLUICE_TEST_ACCESS_CAPTURE_H

#define ACCESS_CAPTURE_MAX 32

/* Forget the lines kept and install the sink (INFO and above). */
void access_capture_start(void);
/* Index of the first line holding `needle`, or -1. */
int access_find(const char *needle);
/* Line `i` (a copy in a static buffer), "" when there is none; i < 0: the
 * last one. */
const char *access_line(int i);

#endif /* SLUICE_TEST_ACCESS_CAPTURE_H */
