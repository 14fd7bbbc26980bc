// The dispatcher's loop (HostCore's Dispatcher.deliver, DispatchTable), in a header of its own:
// it spells out nullability, which clang then asks of every pointer in the same file.
// All of it runs on the main thread; the entries are the dispatcher's (valid while its table
// is), the event is the caller's (the stack), `current` is the call tracker's (read by its
// watchdog threads).
#ifndef CSYSTEM_DISPATCH_H
#define CSYSTEM_DISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include <servicehost.h>

/// One entry of the dispatcher's handler table: what one call into a service needs.
typedef struct csystem_dispatch_entry {
    /// The service's `handle_event` (cached: the plugin promises it never changes).
    int32_t (*_Nonnull handle)(const sh_service *_Nullable, const sh_event *_Nullable);
    /// The service's descriptor (the plugin's), passed back as the call's first argument.
    const sh_service *_Nonnull service;
    /// The service's index in the dispatcher's service list.
    intptr_t index;
    /// The service's statistics row (HostCore's ServiceStats); NULL while statistics are off.
    uint64_t *_Nullable stats;
} csystem_dispatch_entry;

/// Calls `entries[from ..< end]` in order with `event`, each after adding one to `event->seq`
/// and storing its index into `*current` (releasing: the tracker's watchdogs read it) and, when
/// `sentinel` is not NULL, into `*sentinel` (plain: read only after this process died).
/// Stops at the first call that answers other than SH_OK: returns its position, its answer in
/// `*result`. Returns `end` when every call answered SH_OK.
ptrdiff_t csystem_dispatch_forward(const csystem_dispatch_entry *_Nonnull entries, ptrdiff_t from, ptrdiff_t end,
                                   sh_event *_Nonnull event, intptr_t *_Nonnull current,
                                   int64_t *_Nullable sentinel, int32_t *_Nonnull result);

/// The same, backwards: `entries[below - 1]` down to `entries[0]`. Returns -1 when every call
/// answered SH_OK.
ptrdiff_t csystem_dispatch_backward(const csystem_dispatch_entry *_Nonnull entries, ptrdiff_t below,
                                    sh_event *_Nonnull event, intptr_t *_Nonnull current,
                                    int64_t *_Nullable sentinel, int32_t *_Nonnull result);

/// An acquiring load and a releasing store of a word another thread shares (the call tracker's
/// current service, which the C loop above stores too).
static inline intptr_t csystem_load_acquire(const intptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}
static inline void csystem_store_release(intptr_t *_Nonnull word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

#endif
