/* SPDX-License-Identifier: Apache-2.0 */
/* server_assets.h - files built into the binary (internal): the status
 * page under src/serve/ui/ and the OpenAPI document, as
 * cmake/embed.cmake writes them into the generated server_assets_gen.c.
 *
 * Notes:
 * - The bytes are static and read-only; nothing here is ever freed.
 * - `data[len]` is a NUL byte, so a text asset is also a C string.
 */
#ifndef SLUICE_SERVER_ASSETS_H
#define SLUICE_SERVER_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *path; /* relative to the source tree: "src/serve/ui/index.html" */
    const unsigned char *data;
    size_t len;
} server_asset_t;

/* The generated table (server_assets_gen.c). */
extern const server_asset_t server_assets[];
extern const size_t server_n_assets;

/* The asset whose path is `path`, or NULL. */
const server_asset_t *server_asset_find(const char *path);

/* The Content-Type for an asset's path, by its extension ("text/html;
 * charset=utf-8", ...; "application/octet-stream" for any other). */
const char *server_asset_type(const char *path);

#endif
