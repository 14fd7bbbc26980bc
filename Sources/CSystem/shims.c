// Compiled with _GNU_SOURCE, which Glibc's Swift module is not: see CSystem.h.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <ucontext.h>
#include <stddef.h>
#include <linux/magic.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/landlock.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/inotify.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "CSystem.h"

int csystem_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

int csystem_accept4(int fd, int flags) { return accept4(fd, NULL, NULL, flags); }

long csystem_sendfile(int out, int in, long *offset, unsigned long count) {
    off_t position = *offset;
    ssize_t sent = sendfile(out, in, &position, count);
    *offset = position;
    return sent;
}

int csystem_malloc_trim(void) { return malloc_trim(0); }

int csystem_is_executable_tmpfs(const char *path) {
    struct statfs system;
    struct statvfs mount;
    if (statfs(path, &system) != 0 || statvfs(path, &mount) != 0) return -1;
    return system.f_type == TMPFS_MAGIC && !(mount.f_flag & ST_NOEXEC);
}

int csystem_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int csystem_epoll_add(int epoll, int fd, unsigned long long token) {
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = token};
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int csystem_epoll_add_for(int epoll, int fd, int writable, unsigned long long token) {
    struct epoll_event event = {.events = EPOLLIN | (writable ? EPOLLOUT : 0), .data.u64 = token};
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int csystem_epoll_add_priority(int epoll, int fd, unsigned long long token) {
    struct epoll_event event = {.events = EPOLLPRI, .data.u64 = token};
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int csystem_epoll_modify(int epoll, int fd, int writable, unsigned long long token) {
    struct epoll_event event = {.events = EPOLLIN | (writable ? EPOLLOUT : 0), .data.u64 = token};
    return epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event);
}

int csystem_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int csystem_epoll_remove(int epoll, int fd) {
    struct epoll_event unused = {0};  // kernels before 2.6.9 required one
    return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &unused);
}

int csystem_epoll_wait(int epoll, unsigned long long *tokens, unsigned int *events, int max, int timeout) {
    struct epoll_event ready[64];
    if (max > 64) max = 64;
    int count = epoll_wait(epoll, ready, max, timeout);
    for (int index = 0; index < count; index++) {
        tokens[index] = ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

int csystem_allowed_cores(int pid, int *cores, int max) {
    cpu_set_t set;
    if (sched_getaffinity(pid, sizeof set, &set) != 0) return -1;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < max; cpu++)
        if (CPU_ISSET(cpu, &set)) cores[count++] = cpu;
    return count;
}

int csystem_pin(int pid, const int *cores, int count) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++)
        if (cores[i] >= 0 && cores[i] < CPU_SETSIZE) CPU_SET(cores[i], &set);
    return sched_setaffinity(pid, sizeof set, &set);
}

unsigned long csystem_load_address(void *handle) {
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL) return 0;
    return (unsigned long)map->l_addr;
}

#define DENIED(name) {#name, __NR_##name}
static const csystem_syscall denied[] = {
    DENIED(ptrace), DENIED(mount), DENIED(umount2), DENIED(pivot_root), DENIED(swapon), DENIED(swapoff),
    DENIED(reboot), DENIED(kexec_load), DENIED(kexec_file_load), DENIED(init_module), DENIED(finit_module),
    DENIED(delete_module), DENIED(bpf), DENIED(perf_event_open), DENIED(keyctl), DENIED(add_key),
    DENIED(request_key), DENIED(open_by_handle_at), DENIED(io_uring_setup), DENIED(io_uring_enter),
    DENIED(io_uring_register),
};

int csystem_denied_syscalls(const csystem_syscall **table) {
    *table = denied;
    return (int)(sizeof denied / sizeof denied[0]);
}

int csystem_socket_syscall(void) { return __NR_socket; }

unsigned int csystem_audit_arch(void) {
#if defined(__x86_64__)
    return AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    return AUDIT_ARCH_AARCH64;
#else
    return 0;
#endif
}

int csystem_no_new_privs(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }

int csystem_install_filter(const void *instructions, unsigned short count) {
    struct sock_fprog program = {.len = count, .filter = (struct sock_filter *)instructions};
    // Every thread of the worker, not only the calling one (TSYNC).
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
}

// The write end of the audit pipe: set once, before the filter is installed, read by the handler.
static int audit_pipe = -1;

// SIGSYS from the filter's SECCOMP_RET_TRAP: the call was not made. It returns -EPERM (the
// ERRNO action's answer) and its number goes down the pipe, unless the pipe is full (a
// refusal already waiting says the same). Async-signal-safe: write(2) only; errno kept.
static void audit_refused(int signal, siginfo_t *info, void *context) {
    (void)signal;
    ucontext_t *state = context;
#if defined(__x86_64__)
    state->uc_mcontext.gregs[REG_RAX] = -EPERM;
#elif defined(__aarch64__)
    state->uc_mcontext.regs[0] = (unsigned long long)-EPERM;
#endif
    int saved = errno;
    int number = info->si_syscall;
    ssize_t unused = write(audit_pipe, &number, sizeof number);
    (void)unused;
    errno = saved;
}

int csystem_audit_refusals(int pipe_write_end) {
    audit_pipe = pipe_write_end;
    struct sigaction action = {0};
    action.sa_sigaction = audit_refused;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGSYS, &action, NULL);
}

int csystem_drop_identity(unsigned int uid, unsigned int gid) {
    if (setgroups(0, NULL) != 0) return -1;
    if (setresgid(gid, gid, gid) != 0) return -1;
    if (setresuid(uid, uid, uid) != 0) return -1;
    uid_t real, effective, saved;
    gid_t greal, geffective, gsaved;
    if (getresuid(&real, &effective, &saved) != 0 || getresgid(&greal, &geffective, &gsaved) != 0) return -1;
    if (real != uid || effective != uid || saved != uid || greal != gid || geffective != gid || gsaved != gid) {
        errno = EPERM;
        return -1;
    }
    // The kernel made the process undumpable when its user changed: without this its crash
    // backtracer (a process of the same user) could not read it. Only its own user may.
    return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

int csystem_private_network(void) {
    if (unshare(CLONE_NEWNET) != 0) return -1;
    int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (probe < 0) return -1;
    struct ifreq request = {0};
    strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    int result = ioctl(probe, SIOCGIFFLAGS, &request);
    if (result == 0) {
        request.ifr_flags |= IFF_UP;
        result = ioctl(probe, SIOCSIFFLAGS, &request);
    }
    int saved = errno;
    close(probe);
    errno = saved;
    return result;
}

// Rights of later ABIs than this system's linux/landlock.h may name (linux/landlock.h, v3).
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

int csystem_landlock_abi(void) {
    return (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
}

int csystem_landlock_restrict(const char *const *paths, int count, int *failed) {
    int abi = csystem_landlock_abi();
    *failed = -1;
    if (abi < 1) return -1;
    // Every right that changes the file system; reading and executing stay allowed everywhere.
    __u64 files = LANDLOCK_ACCESS_FS_WRITE_FILE;
    __u64 handled = files | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                    LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2) handled |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) {
        handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
        files |= LANDLOCK_ACCESS_FS_TRUNCATE;
    }
    struct landlock_ruleset_attr attributes = {.handled_access_fs = handled};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attributes, sizeof attributes, 0);
    if (ruleset < 0) return -1;
    for (int index = 0; index < count; index++) {
        int fd = open(paths[index], O_PATH | O_CLOEXEC);
        struct stat status;
        if (fd < 0 || fstat(fd, &status) != 0) {
            int saved = errno;
            if (fd >= 0) close(fd);
            close(ruleset);
            *failed = index;
            errno = saved;
            return -1;
        }
        // A file takes only the rights of a file (the others are EINVAL).
        struct landlock_path_beneath_attr rule = {
            .allowed_access = S_ISDIR(status.st_mode) ? handled : files, .parent_fd = fd};
        int added = (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        int saved = errno;
        close(fd);
        if (added != 0) {
            close(ruleset);
            *failed = index;
            errno = saved;
            return -1;
        }
    }
    int result = (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
    int saved = errno;
    close(ruleset);
    errno = saved;
    return result;
}

int csystem_realtime_timer(void) { return timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC); }

int csystem_realtime_timer_arm(int timer, long long seconds) {
    struct itimerspec spec = {.it_interval = {0, 0}, .it_value = {(time_t)seconds, 0}};
    return timerfd_settime(timer, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL);
}

int csystem_inotify_init(void) { return inotify_init1(IN_NONBLOCK | IN_CLOEXEC); }

int csystem_inotify_watch_directory(int inotify, const char *path) {
    return inotify_add_watch(inotify, path, IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_ONLYDIR);
}

int csystem_route_netlink_socket(unsigned int groups, int nonblocking) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl address = {.nl_family = AF_NETLINK, .nl_groups = groups};
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int csystem_uevent_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) return -1;
    struct sockaddr_nl address = {.nl_family = AF_NETLINK, .nl_groups = 1};
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}
