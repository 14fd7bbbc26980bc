// An LD_PRELOAD library for the tests of resource limits the host must survive: it makes the
// host's own calls fail as the kernel would at a limit, which a test cannot reach for real
// (root is exempt from RLIMIT_NPROC; fs.epoll.max_user_watches is machine-wide). Only calls
// made from the main executable are touched: the runtime libraries' own (libdispatch's
// threads and epoll set) are left alone.
//   FAULT_THREADS_ALLOW=N    pthread_create: the first N calls succeed, every later one fails
//                            with EAGAIN (unset: threads are left alone)
//   FAULT_THREADS_IN=host    ... only in the host process (the default)
//   FAULT_THREADS_IN=worker  ... only in worker processes (`host __worker …`)
//   FAULT_WATCH_FAILS=N      epoll_ctl(EPOLL_CTL_ADD) of a connected Unix stream socket (a
//                            control connection): the first N fail with ENOSPC
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/socket.h>

// Whether `address` (a return address) lies in the main executable: the object that holds
// the program headers the kernel passed.
static int in_program(void *address) {
    Dl_info caller, program;
    return dladdr(address, &caller) && dladdr((void *)getauxval(AT_PHDR), &program) &&
           caller.dli_fbase == program.dli_fbase;
}

// Whether this process is a worker: its second argument is "__worker".
static int is_worker(void) {
    char arguments[256] = {0};
    FILE *file = fopen("/proc/self/cmdline", "r");
    if (!file) return 0;
    size_t length = fread(arguments, 1, sizeof arguments - 1, file);
    fclose(file);
    size_t first = strnlen(arguments, length);
    return first + 1 < length && strcmp(arguments + first + 1, "__worker") == 0;
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    static create_fn real;
    static int calls;
    if (!real) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    const char *allow = getenv("FAULT_THREADS_ALLOW");
    const char *where = getenv("FAULT_THREADS_IN");
    int inWorkers = where && strcmp(where, "worker") == 0;
    if (allow && in_program(__builtin_return_address(0)) && is_worker() == inWorkers &&
        __atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST) >= atoi(allow))
        return EAGAIN;
    return real(thread, attributes, start, argument);
}

typedef int (*epoll_ctl_fn)(int, int, int, struct epoll_event *);

// A connected (not listening) Unix stream socket.
static int is_connection(int fd) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    int type = 0, listening = 0;
    socklen_t size = sizeof type;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0 || address.ss_family != AF_UNIX) return 0;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_STREAM) return 0;
    size = sizeof listening;
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 && !listening;
}

int epoll_ctl(int epoll, int operation, int fd, struct epoll_event *event) {
    static epoll_ctl_fn real;
    static int failed;
    if (!real) real = (epoll_ctl_fn)dlsym(RTLD_NEXT, "epoll_ctl");
    const char *fails = getenv("FAULT_WATCH_FAILS");
    if (fails && operation == EPOLL_CTL_ADD && in_program(__builtin_return_address(0)) && is_connection(fd) &&
        __atomic_fetch_add(&failed, 1, __ATOMIC_SEQ_CST) < atoi(fails)) {
        errno = ENOSPC;
        return -1;
    }
    return real(epoll, operation, fd, event);
}
