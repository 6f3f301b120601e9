/* SPDX-License-Identifier: Apache-2.0 */
/* client_config.c - the slurmrestd client and its token source made from a
 * site configuration: which of rest.jwt_file, rest.jwt_key_file,
 * rest.jwt_rs256_key_file, rest.jwt_command or $SLURM_JWT gives the token,
 * the Slurm user taken from the token when rest.user is unset, and the
 * client's options from rest.* and the launcher's timeouts.
 *
 * Notes:
 * - A user taken from the token (sluice_client_resolve_user()) is checked
 *   again each time a source is made: a token that now names someone else
 *   is refused, never followed.
 */
#include <stdbool.h>
#include <string.h>

#include <sluice/auth.h>
#include <sluice/client.h>
#include <sluice/config.h>

#include "site/config_model.h"

/* Which setting holds the token source (for error text). */
static const char *token_setting(const sluice_config_t *cfg)
{
    return cfg->rest.jwt_file             ? "rest.jwt_file"
           : cfg->rest.jwt_key_file       ? "rest.jwt_key_file"
           : cfg->rest.jwt_rs256_key_file ? "rest.jwt_rs256_key_file"
           : cfg->rest.jwt_command.n > 0  ? "rest.jwt_command"
                                          : "the SLURM_JWT environment variable";
}

sluice_err
sluice_client_auth_from_config(sluice_auth_t **out, const sluice_config_t *cfg, sluice_error_t *err)
{
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    bool from_token;
    sluice_err rc;

    if (out == NULL || cfg == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    /* A user the token gave (sluice_client_resolve_user()) is taken from the
     * token again, so that the source keeps refusing a token for another
     * user; it must still be the same one. */
    from_token = sluice_config_source(cfg, "rest.user") == SLUICE_SRC_TOKEN;
    ao.user = from_token ? NULL : cfg->rest.user;
    ao.lifespan = cfg->rest.jwt_lifespan_s;
    ao.strict_permissions = cfg->rest.strict_permissions;
    if (cfg->rest.jwt_file != NULL) {
        ao.kind = SLUICE_AUTH_TOKEN_FILE;
        ao.path = cfg->rest.jwt_file;
    } else if (cfg->rest.jwt_key_file != NULL) {
        ao.kind = SLUICE_AUTH_HS256_KEY;
        ao.path = cfg->rest.jwt_key_file;
    } else if (cfg->rest.jwt_rs256_key_file != NULL) {
        ao.kind = SLUICE_AUTH_RS256_KEY;
        ao.path = cfg->rest.jwt_rs256_key_file;
        ao.kid = cfg->rest.jwt_kid;
    } else if (cfg->rest.jwt_command.n > 0) {
        ao.kind = SLUICE_AUTH_COMMAND;
        ao.argv = (const char *const *)cfg->rest.jwt_command.items;
    } else {
        ao.kind = SLUICE_AUTH_ENV;
    }
    rc = sluice_auth_new(out, &ao, err);
    if (rc == SLUICE_OK && from_token && strcmp(sluice_auth_user(*out), cfg->rest.user) != 0) {
        rc = sluice_errorf(err, SLUICE_EAUTH,
                           "rest.user: the token of %s now names %s, not %s (the user taken from "
                           "it before); refused",
                           token_setting(cfg), sluice_auth_user(*out), cfg->rest.user);
        sluice_auth_free(*out);
        *out = NULL;
        return rc;
    }
    if (rc == SLUICE_ECONFIG && (cfg->rest.user == NULL || cfg->rest.user[0] == '\0')) {
        /* No identity at all: name the setting that gives one. */
        if (ao.kind == SLUICE_AUTH_HS256_KEY || ao.kind == SLUICE_AUTH_RS256_KEY)
            return sluice_errorf(err, SLUICE_ECONFIG,
                                 "rest.user: required: the token is minted from %s and names "
                                 "this user (set rest.user or FORGE_SLURM_REST_USER)",
                                 token_setting(cfg));
        sluice_error_prefix(err,
                            "rest.user: not set, and the token of %s names no Slurm user (set "
                            "rest.user or FORGE_SLURM_REST_USER, or use a token with a `sun` "
                            "claim)",
                            token_setting(cfg));
    }
    return rc;
}

sluice_err
sluice_client_resolve_user(sluice_config_t *cfg, const char **claim_out, sluice_error_t *err)
{
    sluice_auth_t *a = NULL;
    const char *claim;
    sluice_err rc;

    if (claim_out != NULL)
        *claim_out = NULL;
    if (cfg == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    if (cfg->rest.user != NULL && cfg->rest.user[0] != '\0')
        return SLUICE_OK;
    if ((rc = sluice_client_auth_from_config(&a, cfg, err)) != SLUICE_OK)
        return rc;
    claim = sluice_auth_user_claim(a);
    rc = sluice_config_set_token_user(cfg, sluice_auth_user(a), claim, err);
    if (rc == SLUICE_OK && claim_out != NULL)
        *claim_out = claim;
    sluice_auth_free(a);
    return rc;
}

/* A client on the rest.* settings of `cfg` with the token source `auth`
 * (taken over on success; the caller's on failure). */
static sluice_err client_with_auth(sluice_client_t **out,
                                   const sluice_config_t *cfg,
                                   sluice_auth_t *auth,
                                   sluice_error_t *err)
{
    sluice_client_opts_t co = SLUICE_CLIENT_OPTS_INIT;

    co.url = cfg->rest.url;
    co.api_version = cfg->rest.api_version;
    co.allow_insecure_http = cfg->rest.allow_insecure_http;
    co.tls_no_verify = !cfg->rest.tls_verify;
    co.ca_file = cfg->rest.ca_file;
    co.ca_path = cfg->rest.ca_path;
    co.pinned_pubkey = cfg->rest.pinned_pubkey;
    co.client_cert = cfg->rest.client_cert;
    co.client_key = cfg->rest.client_key;
    co.submit_timeout_ms = cfg->launcher.submit_timeout_s * 1000;
    co.query_timeout_ms = cfg->launcher.query_timeout_s * 1000;
    co.cancel_timeout_ms = cfg->launcher.cancel_timeout_s * 1000;
    co.auth = auth;
    return sluice_client_new(out, &co, err);
}

sluice_err sluice_client_new_from_config(sluice_client_t **out,
                                         const sluice_config_t *cfg,
                                         sluice_error_t *err)
{
    sluice_auth_t *auth = NULL;
    sluice_err rc;

    if (out == NULL || cfg == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    if (cfg->rest.url == NULL)
        return sluice_errorf(err, SLUICE_ECONFIG, "rest.url: required");
    if ((rc = sluice_client_auth_from_config(&auth, cfg, err)) != SLUICE_OK)
        return rc;
    if ((rc = client_with_auth(out, cfg, auth, err)) != SLUICE_OK)
        sluice_auth_free(auth);
    return rc;
}

sluice_err sluice_client_auth_for_tenant(sluice_auth_t **out,
                                         const sluice_config_t *cfg,
                                         const sluice_tenant_t *t,
                                         sluice_auth_t *site,
                                         sluice_error_t *err)
{
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    sluice_err rc;

    if (out == NULL || cfg == NULL || t == NULL || t->slurm_user == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    ao.user = t->slurm_user;
    ao.lifespan = cfg->rest.jwt_lifespan_s;
    ao.strict_permissions = cfg->rest.strict_permissions;
    switch (t->identity) {
    case SLUICE_TENANT_TOKEN_FILE:
        /* The site rotates the tenant's token; one naming anyone else
         * (the site's user, another tenant's) is refused, never sent. */
        ao.kind = SLUICE_AUTH_TOKEN_FILE;
        ao.path = t->jwt_file;
        ao.token_names_user = 1;
        break;
    case SLUICE_TENANT_MINT:
        if (cfg->rest.jwt_key_file != NULL) {
            ao.kind = SLUICE_AUTH_HS256_KEY;
            ao.path = cfg->rest.jwt_key_file;
        } else if (cfg->rest.jwt_rs256_key_file != NULL) {
            ao.kind = SLUICE_AUTH_RS256_KEY;
            ao.path = cfg->rest.jwt_rs256_key_file;
            ao.kid = cfg->rest.jwt_kid;
        } else {
            return sluice_errorf(err, SLUICE_ECONFIG,
                                 "tenants.%s.identity: mint needs the cluster's "
                                 "rest.jwt_key_file or rest.jwt_rs256_key_file",
                                 t->name);
        }
        break;
    case SLUICE_TENANT_PROXY:
        /* Slurm lets SlurmUser or root name another user: the site's own
         * token, the tenant's user in X-SLURM-USER-NAME (`sluice check`
         * shows whether slurmrestd agrees). */
        if (site == NULL)
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "tenants.%s.identity: proxy needs the cluster's token source",
                                 t->name);
        ao.kind = SLUICE_AUTH_PROXY;
        ao.base = site;
        break;
    default:
        return sluice_errorf(err, SLUICE_ECONFIG, "tenants.%s.identity: unknown", t->name);
    }
    if ((rc = sluice_auth_new(out, &ao, err)) != SLUICE_OK)
        sluice_error_prefix(err, "tenant %s (Slurm user %s, identity %s)", t->name, t->slurm_user,
                            sluice_tenant_identity_name(t->identity));
    return rc;
}

sluice_err sluice_client_new_for_tenant(sluice_client_t **out,
                                        const sluice_config_t *cfg,
                                        const sluice_tenant_t *t,
                                        sluice_client_t *site,
                                        sluice_error_t *err)
{
    sluice_auth_t *auth = NULL;
    sluice_err rc;

    if (out == NULL || cfg == NULL || t == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    if (cfg->rest.url == NULL)
        return sluice_errorf(err, SLUICE_ECONFIG, "rest.url: required");
    if ((rc = sluice_client_auth_for_tenant(&auth, cfg, t, sluice_client_auth(site), err)) !=
        SLUICE_OK)
        return rc;
    if ((rc = client_with_auth(out, cfg, auth, err)) != SLUICE_OK)
        sluice_auth_free(auth);
    return rc;
}
