/* SPDX-License-Identifier: Apache-2.0 */
/* common.h - export macro and basic definitions shared by every public header. */
#ifndef SLUICE_COMMON_H
#define SLUICE_COMMON_H

#if defined(SLUICE_BUILDING_SHARED) || defined(SLUICE_STATIC_BUILD)
#define SLUICE_API __attribute__((visibility("default")))
#else
#define SLUICE_API
#endif

#if defined(__GNUC__)
#define SLUICE_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define SLUICE_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define SLUICE_PRINTF(fmt, args)
#define SLUICE_WARN_UNUSED
#endif

#endif /* SLUICE_COMMON_H */
