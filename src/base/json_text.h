/* SPDX-License-Identifier: Apache-2.0 */
/* json_text.h - JSON values to text, fast (internal).
 *
 * The one serialiser of the launch path: the canonical request, the stored
 * render, event contexts and the REST body of a submit all go through
 * json_text_dump().  Its output is byte for byte what jansson's json_dumps()
 * writes with the same flags (tests/unit/test_json_text.c compares them,
 * and fuzz_json_text does on any document), so stored texts and the hashes
 * made of them do not change; it is faster on long strings (a batch script
 * is ~6 KB) because it copies each run of characters that need no escape
 * at once, where jansson decodes and tests every character.
 *
 * Flags: JSON_COMPACT, JSON_SORT_KEYS and JSON_ENCODE_ANY are understood;
 * any other flag (indentation, JSON_ENSURE_ASCII, JSON_ESCAPE_SLASH, a real
 * precision) makes it call json_dumps() itself.  A real number is written
 * by jansson too (its shortest round-trip form).
 */
#ifndef SLUICE_JSON_TEXT_H
#define SLUICE_JSON_TEXT_H

#include <stddef.h>

#include <jansson.h>

/* The text of `v` (NUL-terminated; caller frees with free()), or NULL when
 * out of memory, or when `v` is not an object or array and JSON_ENCODE_ANY
 * is not in `flags` (as json_dumps()). */
char *json_text_dump(const json_t *v, size_t flags);

#endif /* SLUICE_JSON_TEXT_H */
