/*
 * servicehost/version.h — ABI versions and the result codes every call shares.
 *
 * Rationale: the ABI version is one integer for what appending cannot
 * express: a member that moved, went away or changed meaning. ABI version 1
 * promises that never happens (below), so it grows within version 1 by
 * appending: a struct gains members at its end (with its own *_VERSION and
 * *_SIZE_Vn) and a table gains functions at its end (SH_HOST_VERSION), each
 * found by its size, while SH_ABI_VERSION stays 1. A host that speaks
 * versions [min, max] can run any plugin whose range overlaps it.
 */
#ifndef SERVICEHOST_VERSION_H
#define SERVICEHOST_VERSION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version 1 is frozen. Every struct of version 1 keeps its members, their
 * offsets and its size (SH_*_SIZE_V1, pinned by servicehost/layout.h) for
 * good. A later version only appends members at the end of a struct (raising
 * that struct's version, not SH_ABI_VERSION); nothing moves or changes meaning.
 * The same holds for every table handed across (sh_host, sh_completion,
 * extensions): append-only, a member only ever added at the end.
 *
 * Rule for every struct with a `size` member, on both sides: accept it when
 * size covers version 1 (size >= SH_<STRUCT>_SIZE_V1), and read a member
 * added later only when size covers it (SH_HAS_MEMBER). So a plugin built
 * against an older header runs in a newer host, and one built against a newer
 * header runs in an older host within the ABI range both speak. */

/* Whether the struct at ptr (whose first member is its size) was compiled
 * with member: use it before reading a member added after version 1. */
#define SH_HAS_MEMBER(ptr, type, member)                                       \
    ((size_t)(ptr)->size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* The layouts are defined for 64-bit targets (LP64: x86_64, aarch64). */
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ != 8
#error "the ServiceHost ABI is defined for 64-bit targets only"
#endif

/* The newest ABI version this header describes. A plugin built against this
 * header declares it in its static metadata and answers it in sh_plugin. */
#define SH_ABI_VERSION 1u

/* The oldest ABI version this header can still speak. */
#define SH_ABI_VERSION_MIN 1u

/* Result codes. Zero is success; negative values are failures; positive values
 * are successful answers with a meaning (SH_FALSE: "I declined"). */
enum {
    /* The call did what was asked. */
    SH_OK = 0,
    /* The call succeeded and its answer is "no" (e.g. didFinishLaunching
     * returning false, as UIApplicationDelegate's launch methods can). */
    SH_FALSE = 1,
    /* The call failed; the service should log why through sh_host.log. */
    SH_ERROR = -1,
    /* The host or service does not implement this call yet. */
    SH_UNSUPPORTED = -2,
    /* An argument was invalid (NULL where not allowed, too long, bad UTF-8). */
    SH_INVALID = -3,
    /* The value asked for does not exist (e.g. a store key). */
    SH_NOT_FOUND = -4,
    /* The buffer given was too small; the needed size was written back. */
    SH_TOO_SMALL = -5,
};

/* Log levels for sh_host.log, from most to least severe. */
enum {
    SH_LOG_ERROR = 0,
    SH_LOG_WARN = 1,
    SH_LOG_INFO = 2,
    SH_LOG_DEBUG = 3,
};

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_VERSION_H */
