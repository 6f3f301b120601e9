/* SPDX-License-Identifier: Apache-2.0 */
/* sluice.h - umbrella header of libsluice. */
#ifndef SLUICE_SLUICE_H
#define SLUICE_SLUICE_H

#include <sluice/common.h>
#include <sluice/accept.h>
#include <sluice/auth.h>
#include <sluice/client.h>
#include <sluice/cluster.h>
#include <sluice/config.h>
#include <sluice/error.h>
#include <sluice/fsm.h>
#include <sluice/jobdesc.h>
#include <sluice/launch.h>
#include <sluice/launch_view.h>
#include <sluice/launcher.h>
#include <sluice/lease.h>
#include <sluice/leader.h>
#include <sluice/log.h>
#include <sluice/ops.h>
#include <sluice/render.h>
#include <sluice/server.h>
#include <sluice/store.h>
#include <sluice/supervisor.h>
#include <sluice/timing.h>
#include <sluice/version.h>

#endif /* SLUICE_SLUICE_H */
