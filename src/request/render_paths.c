/* SPDX-License-Identifier: Apache-2.0 */
/* render_paths.c - paths of a render: the service side (storage.root) and
 * the cluster side (storage.cluster_root) of the same files, and the shape
 * a path must have before it goes into a script or a mount.
 *
 * Notes:
 * - Every function is pure but render_canonical(), which reads the file
 *   system (realpath(3)); new strings are the caller's to free().
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "render_int.h"

/* Length of `root` without trailing slashes ("/" counts as 0). */
size_t render_root_len(const char *root)
{
    size_t n = strlen(root);

    while (n > 0 && root[n - 1] == '/')
        n--;
    return n;
}

/* True when `path` is `root` or below it. */
bool render_under(const char *root, const char *path)
{
    size_t n;

    if (!root || !root[0])
        return false;
    n = render_root_len(root);
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* `path` with the prefix `from` replaced by `to` (path is under `from`). */
char *render_reroot(const char *from, const char *to, const char *path)
{
    buf_t b = BUF_INIT;
    const char *rest = path + render_root_len(from);

    buf_init(&b, 0);
    if (buf_append(&b, to, render_root_len(to)) != SLUICE_OK || buf_puts(&b, rest) != SLUICE_OK ||
        (b.len == 0 && buf_puts(&b, "/") != SLUICE_OK)) {
        buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}

const char *render_cluster_root(const sluice_config_t *cfg)
{
    return cfg->storage.cluster_root && cfg->storage.cluster_root[0] ? cfg->storage.cluster_root
                                                                     : cfg->storage.root;
}

/* Service-side path -> cluster-side path (unchanged outside the root). */
char *render_to_cluster(const sluice_config_t *cfg, const char *path)
{
    if (render_under(cfg->storage.root, path))
        return render_reroot(cfg->storage.root, render_cluster_root(cfg), path);
    return strdup(path);
}

bool render_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool render_normalised(const char *p)
{
    return p[0] == '/' && !strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../") &&
           !render_has_suffix(p, "/..") && !render_has_suffix(p, "/.") &&
           (strlen(p) == 1 || !render_has_suffix(p, "/"));
}

bool render_overlap(const char *a, const char *b)
{
    return render_under(a, b) || render_under(b, a);
}

char *render_canonical(const char *path)
{
    char *head = strdup(path), *real = NULL, *cut;
    buf_t b = BUF_INIT;
    size_t kept;

    if (!head)
        return NULL;
    buf_init(&b, 0);
    /* Shorten `head` one component at a time until realpath() knows it;
     * "/" always resolves. */
    for (;;) {
        if ((real = realpath(head[0] ? head : "/", NULL)) != NULL)
            break;
        if ((cut = strrchr(head, '/')) == NULL)
            break;
        *cut = '\0';
    }
    kept = strlen(head);
    free(head);
    if (!real)
        return strdup(path);
    if (buf_append(&b, real, render_root_len(real)) != SLUICE_OK ||
        buf_puts(&b, path + kept) != SLUICE_OK || (b.len == 0 && buf_puts(&b, "/") != SLUICE_OK)) {
        free(real);
        buf_free(&b);
        return NULL;
    }
    free(real);
    return buf_take(&b);
}
