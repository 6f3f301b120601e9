/* SPDX-License-Identifier: Apache-2.0 */
/* server_access.c - who may talk to `sluice serve` and where it listens:
 * the tokens file, the constant-time token compare, callers and admins
 * (bearer tokens on TCP, SO_PEERCRED on the Unix socket), TLS PEM reading
 * and zeroing, and the listening sockets handed to libmicrohttpd.
 *
 * Notes:
 * - No libmicrohttpd call here (server.c is its only user): server.c takes
 *   the Authorization header and the peer's fd from the connection and
 *   passes them in.
 * - Tokens and key material never reach an error text or a log; buffers
 *   that held them are wiped before they are freed.
 */
#define _GNU_SOURCE 1 /* struct ucred (SO_PEERCRED) */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <sluice/log.h>

#include "base/opts.h"
#include "base/wipe.h"
#include "server_access.h"
#include "server_util.h"

/* Connections the kernel queues before accept (it caps this at
 * net.core.somaxconn).  A burst such as hundreds of event watchers
 * reconnecting at once must wait in that queue: a SYN dropped on a full
 * queue is retried only after a second (128 here cost 200 watchers 1 s). */
#define SERVER_LISTEN_BACKLOG 4096

#define MAX_PEM (1024u * 1024u)

#define TOKENS_FILE_MAX (1024u * 1024u)
#define TOKENS_LINE_MAX 1022 /* bytes of a line without its newline */

/* ---- secrets ------------------------------------------------------------ */

/* Constant-time equality (the time depends on the lengths only). */
static int secret_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i;
    unsigned char diff = (unsigned char)(la != lb);

    for (i = 0; i < lb; i++)
        diff |= (unsigned char)(a[la ? i % la : 0] ^ b[i]);
    return la > 0 && diff == 0;
}

/* ---- auth --------------------------------------------------------------- */

/* Caller names in the tokens file: [A-Za-z0-9._@-]{1,63}; "unix:" names
 * belong to socket peers, so a token cannot take one. */
static int caller_name_ok(const char *n)
{
    size_t i, len = strlen(n);

    if (len == 0 || len >= SLUICE_FSM_NAME_MAX)
        return 0;
    for (i = 0; i < len; i++) {
        char ch = n[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '@' || ch == '-'))
            return 0;
    }
    return 1;
}

/* The site's own secret files (the tokens file, the TLS key) are named by
 * the operator, never by a request or a job, so a link is followed (Kubernetes
 * mounts secrets as links) and the file opened is judged by fstat: a regular
 * file, owned by the service's user or root (the rule of the Slurm key files,
 * src/slurm/auth_token.c), so no other user can swap one in. */
static bool owned_by_service(const struct stat *st)
{
    return st->st_uid == geteuid() || st->st_uid == 0;
}

/* One line of a tokens file, line[0..len) (no '\n'), into tokens[*n]. */
static sluice_err parse_token_line(
    const char *text, size_t len, unsigned lineno, token_t *tokens, size_t *n, sluice_error_t *err)
{
    char line[TOKENS_LINE_MAX + 1];
    char *name, *tok, *role, *extra, *save = NULL;
    sluice_err rc = SLUICE_OK;

    if (len > TOKENS_LINE_MAX)
        return sluice_errorf(err, SLUICE_EINVAL, "tokens file line %u is too long", lineno);
    if (memchr(text, '\0', len) != NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "tokens file line %u: a NUL byte", lineno);
    memcpy(line, text, len);
    line[len] = '\0';
    name = strtok_r(line, " \t\r", &save);
    if (name == NULL || name[0] == '#')
        goto out;
    tok = strtok_r(NULL, " \t\r", &save);
    role = strtok_r(NULL, " \t\r", &save);
    extra = role ? strtok_r(NULL, " \t\r", &save) : NULL;
    if (tok == NULL || extra != NULL || strlen(tok) < 16) {
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "tokens file line %u: expected `<caller> <token> [admin]` with a "
                           "token of 16 characters or more",
                           lineno);
        goto out;
    }
    if (role != NULL && strcmp(role, "admin") != 0) {
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "tokens file line %u: role: expected `admin` or nothing", lineno);
        goto out;
    }
    if (!caller_name_ok(name)) {
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "tokens file line %u: caller: expected 1-%d characters from "
                           "[A-Za-z0-9._@-], not starting with `unix:`",
                           lineno, SLUICE_FSM_NAME_MAX - 1);
        goto out;
    }
    if (*n == MAX_TOKENS) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "tokens file: more than %d tokens", MAX_TOKENS);
        goto out;
    }
    tokens[*n].name = strdup(name);
    tokens[*n].token = strdup(tok);
    tokens[*n].admin = role != NULL;
    (*n)++;
    if (!tokens[*n - 1].name || !tokens[*n - 1].token)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
out:
    wipe(line, sizeof(line));
    return rc;
}

sluice_err server_parse_tokens(
    const char *name, const char *text, size_t len, token_t *tokens, size_t *n, sluice_error_t *err)
{
    size_t at = 0;
    unsigned lineno = 0;
    sluice_err rc;

    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t ll = nl != NULL ? (size_t)(nl - (text + at)) : len - at;

        lineno++;
        if ((rc = parse_token_line(text + at, ll, lineno, tokens, n, err)) != SLUICE_OK)
            return rc;
        at += ll + (nl != NULL);
    }
    if (*n == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "tokens file %s names no caller", name);
    return SLUICE_OK;
}

void server_tokens_free(token_t *tokens, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (tokens[i].token)
            wipe(tokens[i].token, strlen(tokens[i].token));
        free(tokens[i].token);
        free(tokens[i].name);
        tokens[i].token = tokens[i].name = NULL;
    }
}

sluice_err server_load_tokens(sluice_server_t *s, const char *path, sluice_error_t *err)
{
    struct stat st;
    char *buf = NULL;
    size_t got = 0, cap = 0;
    sluice_err rc = SLUICE_OK;
    int fd = -1;

    if (path == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "a tokens file is required");
    /* The site's own path: a symlink is followed (Kubernetes mounts secrets
     * as links) and judged by fstat below; O_NONBLOCK so that a FIFO is
     * refused as not a regular file instead of stopping the start. */
    if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
        return sluice_errorf(err, SLUICE_ECONFIG, "tokens file %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = sluice_errorf(err, SLUICE_ECONFIG, "tokens file %s is not a regular file", path);
        goto out;
    }
    if (!owned_by_service(&st)) {
        rc = sluice_errorf(err, SLUICE_ECONFIG,
                           "tokens file %s is owned by uid %ld, neither the service's user "
                           "(uid %ld) nor root; chown it",
                           path, (long)st.st_uid, (long)geteuid());
        goto out;
    }
    if (st.st_mode & 077) {
        rc = sluice_errorf(err, SLUICE_ECONFIG,
                           "tokens file %s is readable by group or others (mode %03o); chmod 600",
                           path, (unsigned)(st.st_mode & 0777));
        goto out;
    }
    if ((uint64_t)st.st_size > TOKENS_FILE_MAX) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "tokens file %s is larger than %u bytes", path,
                           TOKENS_FILE_MAX);
        goto out;
    }
    cap = (size_t)st.st_size + 1;
    if ((buf = malloc(cap)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    while (got < cap - 1) {
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = sluice_errorf(err, SLUICE_ECONFIG, "tokens file %s: %s", path,
                               r < 0 ? strerror(errno) : "shorter than its size");
            goto out;
        }
        got += (size_t)r;
    }
    rc = server_parse_tokens(path, buf, got, s->tokens, &s->n_tokens, err);
out:
    if (buf != NULL)
        wipe_free(buf, cap);
    close(fd);
    return rc;
}

/* The token's entry, or NULL when the request carries no valid token.
 * Every token is compared (no early exit). */
const token_t *server_authenticate(sluice_server_t *s, const char *h, size_t len)
{
    const token_t *who = NULL;
    size_t i;

    if (h == NULL || strlen(h) != len || strncmp(h, "Bearer ", 7) != 0)
        return NULL;
    h += 7;
    for (i = 0; i < s->n_tokens; i++) {
        if (secret_equal(s->tokens[i].token, h) && who == NULL)
            who = &s->tokens[i];
    }
    return who;
}

/* The Unix socket's peer as "unix:<user>" (SO_PEERCRED); root and the
 * service's own user are admins.  0, or -1 when the peer is unknown. */
int server_peer_caller(int fd, caller_t *out)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    struct passwd pw, *res = NULL;
    char buf[1024];

    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -1;
    if (getpwuid_r(cred.uid, &pw, buf, sizeof(buf), &res) == 0 && res != NULL &&
        strlen(res->pw_name) < sizeof(out->name) - 5)
        snprintf(out->name, sizeof(out->name), "unix:%s", res->pw_name);
    else
        snprintf(out->name, sizeof(out->name), "unix:uid-%u", (unsigned)cred.uid);
    out->admin = cred.uid == 0 || cred.uid == geteuid();
    return 0;
}

/* The tokens and the TLS key are wiped before they are freed. */
void server_access_free(sluice_server_t *s)
{
    server_tokens_free(s->tokens, s->n_tokens);
    s->n_tokens = 0;
    /* GnuTLS keeps its own copy; ours is zeroed once the daemon is gone. */
    wipe(s->key_pem, s->key_len);
    free(s->key_pem);
    free(s->cert_pem);
}

/* libmicrohttpd's messages: kept while starting (for the error text), else
 * logged at debug level (failed handshakes are routine on an open port).
 * They never hold key material. */
void server_mhd_log(void *cls, const char *fmt, va_list ap)
{
    sluice_server_t *s = cls;
    char msg[256];
    size_t n;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
        msg[--n] = '\0';
    if (s->starting)
        snprintf(s->mhd_msg, sizeof(s->mhd_msg), "%s", msg);
    else
        sluice_log(SLUICE_LOG_DEBUG, "libmicrohttpd: %s", msg);
}

/* ---- TLS material and sockets ----------------------------------------- */

/* Read a PEM file whole (at most MAX_PEM bytes) into a new NUL-terminated
 * buffer.  A key must not be readable by others and must not be
 * encrypted.  Errors name the file, never its content. */
sluice_err
server_read_pem(const char *path, int is_key, char **out, size_t *len_out, sluice_error_t *err)
{
    const char *what = is_key ? "TLS key" : "TLS certificate";
    struct stat st;
    char *buf = NULL;
    size_t got = 0;
    int fd;
    sluice_err rc = SLUICE_OK;

    /* as the tokens file: links followed, a FIFO refused, never waited on */
    if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
        return sluice_errorf(err, SLUICE_ECONFIG, "%s %s: %s", what, path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = sluice_errorf(err, SLUICE_ECONFIG, "%s %s is not a regular file", what, path);
        goto out;
    }
    if (is_key && !owned_by_service(&st)) {
        rc = sluice_errorf(err, SLUICE_ECONFIG,
                           "%s %s is owned by uid %ld, neither the service's user (uid %ld) "
                           "nor root; chown it",
                           what, path, (long)st.st_uid, (long)geteuid());
        goto out;
    }
    if (is_key && (st.st_mode & 007)) {
        rc = sluice_errorf(err, SLUICE_ECONFIG,
                           "%s %s is readable by others (mode %03o); chmod 600 or 640", what, path,
                           (unsigned)(st.st_mode & 0777));
        goto out;
    }
    if (st.st_size <= 0 || (uint64_t)st.st_size > MAX_PEM) {
        rc = sluice_errorf(err, SLUICE_ECONFIG, "%s %s: expected a PEM file of 1 to %u bytes", what,
                           path, MAX_PEM);
        goto out;
    }
    if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = sluice_errorf(err, SLUICE_ECONFIG, "%s %s: %s", what, path,
                               n < 0 ? strerror(errno) : "shorter than its size");
            goto out;
        }
        got += (size_t)n;
    }
    buf[got] = '\0';
    if (is_key && strstr(buf, "ENCRYPTED") != NULL)
        rc = sluice_errorf(err, SLUICE_ECONFIG,
                           "%s %s is encrypted; give sluice an unencrypted key (mode 0600)", what,
                           path);
    else if (is_key &&
             (strstr(buf, "-----BEGIN ") == NULL || strstr(buf, "PRIVATE KEY-----") == NULL))
        rc = sluice_errorf(err, SLUICE_ECONFIG, "%s %s: no PEM private key in it", what, path);
    else if (!is_key && strstr(buf, "-----BEGIN CERTIFICATE-----") == NULL)
        rc = sluice_errorf(err, SLUICE_ECONFIG, "%s %s: no PEM certificate in it", what, path);
out:
    close(fd);
    if (rc != SLUICE_OK) {
        wipe(buf, got);
        free(buf);
        return rc;
    }
    *out = buf;
    *len_out = got;
    return SLUICE_OK;
}

sluice_err server_check_opts(const sluice_server_opts_t *opts, sluice_error_t *err)
{
    if (opts == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "server: no options");
    if (opts_check_version("server", opts->version, SLUICE_SERVER_OPTS_VERSION, err) != SLUICE_OK)
        return SLUICE_EINVAL;
    if (opts->launcher == NULL || opts->store == NULL || opts->cfg == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "server: launcher, store and config are required");
    if (opts->listen == NULL && opts->socket_path == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "server: a listen address or a socket path is required");
    if ((opts->tls_cert == NULL) != (opts->tls_key == NULL))
        return sluice_errorf(err, SLUICE_EINVAL, "server: tls_cert and tls_key go together");
    if (opts->tls_cert && opts->listen == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "server: tls_cert and tls_key need a listen address");
    if (opts->n_clusters > 0 &&
        (opts->clusters == NULL || opts->clusters[0].launcher != opts->launcher))
        return sluice_errorf(err, SLUICE_EINVAL, "server: clusters[0] must be the launcher");
    return SLUICE_OK;
}

sluice_err server_parse_listen(
    const char *listen, int tls, struct sockaddr_storage *ss, int *v6, sluice_error_t *err)
{
    char host[64];
    const char *colon;
    long long port;
    size_t hl;

    memset(ss, 0, sizeof(*ss));
    *v6 = 0;
    if (listen == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "no listen address");
    if (listen[0] == '[') {
        const char *end = strchr(listen, ']');
        if (end == NULL || end[1] != ':')
            return sluice_errorf(err, SLUICE_EINVAL, "listen: expected [ADDR]:PORT");
        hl = (size_t)(end - listen - 1);
        colon = end + 1;
        listen++;
    } else {
        if ((colon = strrchr(listen, ':')) == NULL)
            return sluice_errorf(err, SLUICE_EINVAL, "listen: expected HOST:PORT");
        hl = (size_t)(colon - listen);
    }
    if (hl == 0 || hl >= sizeof(host))
        return sluice_errorf(err, SLUICE_EINVAL, "listen: bad host");
    memcpy(host, listen, hl);
    host[hl] = '\0';
    port = server_parse_count(colon + 1);
    if (port < 0 || port > 65535)
        return sluice_errorf(err, SLUICE_EINVAL, "listen: bad port '%s'", colon + 1);
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof(host), "127.0.0.1");
    {
        struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
        if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
            if (!tls && (ntohl(a4->sin_addr.s_addr) >> 24) != 127)
                return sluice_errorf(err, SLUICE_EINVAL,
                                     "listen: %s is not a loopback address (plain HTTP is only "
                                     "served on loopback; set --tls-cert and --tls-key to listen "
                                     "on other addresses)",
                                     host);
            a4->sin_family = AF_INET;
            a4->sin_port = htons((uint16_t)port);
            return SLUICE_OK;
        }
        if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
            if (!tls && !IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr))
                return sluice_errorf(err, SLUICE_EINVAL,
                                     "listen: %s is not a loopback address (plain HTTP is only "
                                     "served on loopback; set --tls-cert and --tls-key to listen "
                                     "on other addresses)",
                                     host);
            a6->sin6_family = AF_INET6;
            a6->sin6_port = htons((uint16_t)port);
            *v6 = 1;
            return SLUICE_OK;
        }
    }
    return sluice_errorf(err, SLUICE_EINVAL, "listen: '%s' is not a numeric address", host);
}

/* A listening TCP socket on `ss`, or -1.  Bound here (not by
 * libmicrohttpd) so that an address error and a TLS error are told
 * apart. */
int server_tcp_listen(const struct sockaddr_storage *ss,
                      int v6,
                      const char *listen_s,
                      sluice_error_t *err)
{
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    if (fd < 0) {
        sluice_errorf(err, SLUICE_ETRANSPORT, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (v6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)ss,
             v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) != 0 ||
        listen(fd, SERVER_LISTEN_BACKLOG) != 0) {
        sluice_errorf(err, SLUICE_ETRANSPORT, "cannot listen on %s: %s", listen_s, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

uint16_t server_bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return 0;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

/* Bind a Unix stream socket at `path` with `mode`; a stale socket file is
 * replaced, any other file is refused.  Returns the listening fd or -1. */
int server_unix_listen(const char *path, unsigned mode, const char *group, sluice_error_t *err)
{
    struct sockaddr_un a;
    struct stat st;
    mode_t old;
    gid_t gid = (gid_t)-1;
    int fd = -1;

    if (mode & 007) {
        sluice_errorf(err, SLUICE_EINVAL,
                      "socket mode %04o is accessible by others; use 0660 or stricter", mode);
        return -1;
    }
    if ((mode & 0600) != 0600 || mode > 0777) {
        sluice_errorf(err, SLUICE_EINVAL, "socket mode %04o: the owner needs read and write", mode);
        return -1;
    }
    if (group != NULL) {
        struct group gr, *res = NULL;
        char buf[4096];
        int e = getgrnam_r(group, &gr, buf, sizeof(buf), &res);
        if (res == NULL) {
            sluice_errorf(err, SLUICE_ECONFIG, "socket group '%s': %s", group,
                          e ? strerror(e) : "no such group");
            return -1;
        }
        gid = res->gr_gid;
    }
    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(a.sun_path)) {
        sluice_errorf(err, SLUICE_EINVAL, "socket path %s is too long", path);
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            sluice_errorf(err, SLUICE_EINVAL, "%s exists and is not a socket", path);
            return -1;
        }
        unlink(path);
    }
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
        sluice_errorf(err, SLUICE_ETRANSPORT, "socket: %s", strerror(errno));
        return -1;
    }
    /* Created with no more than `mode` from the start: no window in which
     * others could connect. */
    old = umask((mode_t)(~mode & 0777));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        umask(old);
        sluice_errorf(err, SLUICE_ETRANSPORT, "bind %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    umask(old);
    if (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) != 0) {
        sluice_errorf(err, SLUICE_EPERM, "socket %s: cannot give it to group '%s': %s", path, group,
                      strerror(errno));
        close(fd);
        unlink(path);
        return -1;
    }
    if (chmod(path, (mode_t)mode) != 0 || listen(fd, SERVER_LISTEN_BACKLOG) != 0) {
        sluice_errorf(err, SLUICE_ETRANSPORT, "listen %s: %s", path, strerror(errno));
        close(fd);
        unlink(path);
        return -1;
    }
    return fd;
}

sluice_err
sluice_server_opts_init(sluice_server_opts_t *opts, unsigned int version, sluice_error_t *err)
{
    static const sluice_server_opts_t tmpl = SLUICE_SERVER_OPTS_INIT;

    return opts_init(opts, &tmpl, sizeof(tmpl), "server", version, SLUICE_SERVER_OPTS_VERSION, err);
}
