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

/* The initialiser of a versioned options struct (every `sluice_*_opts_t`):
 * its `version` member (always the first) set to `v`, every other member
 * zero.  Each header defines SLUICE_<NAME>_OPTS_INIT with it; see
 * docs/architecture.md, "The public API and ABI". */
#ifdef __cplusplus
#define SLUICE_OPTS_INIT_V(v)                                                                      \
    {                                                                                              \
        (v)                                                                                        \
    }
#else
#define SLUICE_OPTS_INIT_V(v)                                                                      \
    {                                                                                              \
        .version = (v)                                                                             \
    }
#endif

#endif /* SLUICE_COMMON_H */
