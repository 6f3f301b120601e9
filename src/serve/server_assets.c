/* SPDX-License-Identifier: Apache-2.0 */
/* server_assets.c - look up the files built into the binary
 * (server_assets.h) and name their media types. */
#include <string.h>

#include "server_assets.h"

const server_asset_t *server_asset_find(const char *path)
{
    size_t i;

    if (path == NULL)
        return NULL;
    for (i = 0; i < server_n_assets; i++)
        if (strcmp(server_assets[i].path, path) == 0)
            return &server_assets[i];
    return NULL;
}

const char *server_asset_type(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".json", "application/json"},
        {".yaml", "application/yaml"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
    };
    const char *dot = path ? strrchr(path, '.') : NULL;
    size_t i;

    for (i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}
