// The libc calls HostCore needs that Glibc's Swift module hides: they are declared only
// with _GNU_SOURCE, which a Swift module cannot set for the C library it imports. Internal
// to HostCore, as swift-system's CSystem is to SystemPackage.
#ifndef CSYSTEM_H
#define CSYSTEM_H


/// pipe2(2): a pipe whose ends get `flags` (O_CLOEXEC) in the same call.
int csystem_pipe2(int fds[2], int flags);

/// accept4(2) without the peer's address: the connection gets `flags` (SOCK_CLOEXEC) in the
/// same call.
int csystem_accept4(int fd, int flags);

/// sendfile(2): copies up to `count` bytes of `in` from `*offset` to `out`.
long csystem_sendfile(int out, int in, long *offset, unsigned long count);

/// malloc_trim(3) with no padding, which Glibc's Swift module does not import: gives the
/// allocator's free memory back to the system (every arena). Returns 1 when some was.
int csystem_malloc_trim(void);

/// Whether `path` is on tmpfs mounted without noexec (statfs(2) and statvfs(3), whose
/// TMPFS_MAGIC and ST_NOEXEC Glibc's Swift module does not import): 1 yes, 0 no, -1 errno.
int csystem_is_executable_tmpfs(const char *path);

/// sched_getaffinity(2) of thread or process `pid` (0: the calling thread) as a list: the
/// first `max` cores it may run on, in `cores`. Returns their count, or -1 with errno.
/// (servicehost-bench pins row 4's round trips with these two.)
int csystem_allowed_cores(int pid, int *cores, int max);

/// sched_setaffinity(2): thread or process `pid` (0: the calling thread) may run on the
/// `count` cores of `cores` only. Returns 0, or -1 with errno.
int csystem_pin(int pid, const int *cores, int count);

/// The load address of the library `handle` (from dlopen): what its link-time addresses are
/// relative to (dlinfo(3) RTLD_DI_LINKMAP, link_map's l_addr). 0 when dlinfo fails.
unsigned long csystem_load_address(void *handle);

/// epoll_create1(EPOLL_CLOEXEC): Glibc's Swift module does not import sys/epoll.h.
int csystem_epoll_create(void);

/// Adds `fd` to the set for readability (EPOLLIN, level-triggered), its events reported with
/// `token` (struct epoll_event is packed on x86_64, so Swift never builds one).
int csystem_epoll_add(int epoll, int fd, unsigned long long token);

/// Adds `fd` to the set (level-triggered) for readability, and for writability too when
/// `writable` is not 0 (EPOLLOUT), its events reported with `token`.
int csystem_epoll_add_for(int epoll, int fd, int writable, unsigned long long token);

/// Adds `fd` to the set for priority events only (EPOLLPRI, level-triggered: a PSI trigger
/// reports through it, and resets when polled), its events reported with `token`.
int csystem_epoll_add_priority(int epoll, int fd, unsigned long long token);

/// Changes what `fd`, already in the set, is watched for (EPOLL_CTL_MOD), as csystem_epoll_add_for.
int csystem_epoll_modify(int epoll, int fd, int writable, unsigned long long token);

/// pidfd_open(2): a descriptor that becomes readable when process `pid` exits (Linux 5.3), -1
/// with errno. Close-on-exec.
int csystem_pidfd_open(int pid);

/// Removes `fd` from the set.
int csystem_epoll_remove(int epoll, int fd);

/// epoll_wait(2) into two parallel arrays of at most `max` entries: each ready registration's
/// token and its events. Returns the count, or -1 with errno.
int csystem_epoll_wait(int epoll, unsigned long long *tokens, unsigned int *events, int max, int timeout);

/// libdispatch's handle for waking the main queue (an eventfd on Linux), created on first use;
/// libdispatch writes to it each time work is queued on the main queue while nothing drains it.
/// Exported for CoreFoundation's run loop (this is how CFRunLoop drives the main queue on
/// Linux); declared here because Dispatch's Swift module does not. Main thread only.
int _dispatch_get_main_queue_handle_4CF(void);

/// Runs what is queued on the main queue now (its jobs, MainActor jobs, main-queue timers'
/// handlers); `msg` is unused on Linux (pass NULL). Main thread only.
void _dispatch_main_queue_callback_4CF(void *msg);

// Sandboxed workers (issue 43): the kernel's numbers for this architecture, which Glibc's
// Swift module does not import (sys/syscall.h, linux/audit.h, linux/seccomp.h).

/// A system call: its name and this architecture's number. Static storage.
typedef struct csystem_syscall {
    const char *name;
    int number;
} csystem_syscall;

/// The system calls the "default" seccomp profile denies, as this architecture numbers them:
/// `*table` points to static storage; returns their count.
int csystem_denied_syscalls(const csystem_syscall **table);

/// socket(2)'s number (the "strict" profile reads its first argument, the family).
int csystem_socket_syscall(void);

/// The AUDIT_ARCH_* value seccomp_data.arch carries for this build's architecture (0: unknown).
unsigned int csystem_audit_arch(void);

/// prctl(PR_SET_NO_NEW_PRIVS, 1): 0, or -1 with errno.
int csystem_no_new_privs(void);

/// seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC) with `count` classic BPF
/// instructions (struct sock_filter, 8 bytes each) read during the call, for every thread of the
/// process: 0, or -1 with errno (or a thread's id that could not take it). Needs no_new_privs first.
int csystem_install_filter(const void *instructions, unsigned short count);

/// This architecture's number of the system call `name` (`"ptrace"`), -1 when it has none:
/// the sandbox's custom allow and deny lists (syscalls.c).
int csystem_syscall_number(const char *name);

/// The name of this architecture's system call `number` (static storage), NULL when unknown.
const char *csystem_syscall_name(int number);

/// Handles SIGSYS from a seccomp filter's SECCOMP_RET_TRAP (`"audit": true`): the refused call
/// returns -EPERM to its caller, and its number (an int) is written to `pipe_write_end`
/// (non-blocking: dropped when full). 0, or -1 with errno (sigaction).
int csystem_audit_refusals(int pipe_write_end);

/// Runs the process as `uid` and `gid` for good: no supplementary group, real, effective and saved
/// ids all changed (checked), and dumpable again (its own user may read it: a crash backtrace).
/// 0, or -1 with errno. Needs CAP_SETUID and CAP_SETGID unless they are already the process's.
int csystem_drop_identity(unsigned int uid, unsigned int gid);

/// Moves the calling thread into a new network namespace (unshare(CLONE_NEWNET), CAP_SYS_ADMIN)
/// and brings its loopback up: only `lo` is there. 0, or -1 with errno.
int csystem_private_network(void);

/// The Landlock ABI version the kernel offers (landlock_create_ruleset with
/// LANDLOCK_CREATE_RULESET_VERSION); -1 with errno (ENOSYS: not built, EOPNOTSUPP: not enabled).
int csystem_landlock_abi(void);

/// Restricts the calling thread (and what it starts) to write only beneath the `count` `paths`
/// (a file: that file): every right that changes the file system is handled, reading and
/// executing are not. Needs no_new_privs. 0, or -1 with errno and `*failed` the index of the
/// path that could not be opened or added (-1: the ruleset itself). `paths` are read during the call.
int csystem_landlock_restrict(const char *const *paths, int count, int *failed);
/// A timer on CLOCK_REALTIME (timerfd_create(2), non-blocking, close-on-exec) for the time
/// source: glibc's timerfd.h is not in Glibc's Swift module. -1 with errno.
int csystem_realtime_timer(void);

/// Arms `timer` to expire at `seconds` (CLOCK_REALTIME, absolute) and to be cancelled when the
/// clock is set (TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET): a read then fails with ECANCELED.
/// 0, or -1 with errno.
int csystem_realtime_timer_arm(int timer, long long seconds);

/// inotify_init1(IN_NONBLOCK | IN_CLOEXEC). -1 with errno.
int csystem_inotify_init(void);

/// Watches directory `path` for entries created, moved in, written and closed, or deleted
/// (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_ONLYDIR). The watch, or -1 with errno.
int csystem_inotify_watch_directory(int inotify, const char *path);

/// A NETLINK_ROUTE socket (close-on-exec; non-blocking when `nonblocking`), bound to the
/// multicast `groups` (RTMGRP_* bits; 0: none, for requests). -1 with errno.
int csystem_route_netlink_socket(unsigned int groups, int nonblocking);

/// A NETLINK_KOBJECT_UEVENT socket (close-on-exec, non-blocking) bound to the kernel's uevent
/// group (1): a datagram each time a device changes. -1 with errno.
int csystem_uevent_socket(void);

// sd-bus (libsystemd.so.0), loaded at run time by HostCore's SDBusLibrary: no build-time
// header or package. Only what Swift cannot declare itself is here: the error struct's C
// layout and the callback's type. sd_bus, sd_bus_message and sd_bus_slot stay opaque (void *).

/// sd_bus_error (sd-bus.h): `name` and `message` are owned by the struct when `need_free`,
/// freed by sd_bus_error_free; set by the callee, read on the thread that made the call.
typedef struct csystem_sd_bus_error {
    const char *name;
    const char *message;
    int need_free;
} csystem_sd_bus_error;

/// sd_bus_message_handler_t: called by sd_bus_process on the thread processing the bus (the
/// main thread); `message` is borrowed for the call, `userdata` is what the match was given.
typedef int (*csystem_sd_bus_handler)(void *message, void *userdata, csystem_sd_bus_error *error);

#include "dispatch.h"

#endif
