/* SPDX-License-Identifier: Apache-2.0 */
/* store_case.c - see store_case.h. */
#include <criterion/criterion.h>
#include <jansson.h>

#include "sluice_assert.h"
#include "store_case.h"

void store_case_make_launch(sluice_store_t *st, const char *id, const char *site)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_pack("{s:s}", "launch_id", id);
    sluice_store_launch_spec_t spec = {0};

    cr_assert_not_null(req);
    spec.launch_id = id;
    spec.site = site;
    spec.request = req;
    cr_assert_sluice_ok(sluice_store_create_launch(st, &spec, NULL, &err), &err);
    json_decref(req);
}
