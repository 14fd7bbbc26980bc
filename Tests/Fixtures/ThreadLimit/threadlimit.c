// An LD_PRELOAD library for the thread-limit tests: it makes the host's own pthread_create
// fail with EAGAIN, as a process or cgroup limit on threads would (root is exempt from
// RLIMIT_NPROC, so a test cannot reach the limit for real). Threads the runtime libraries
// start (libdispatch's workers) are left alone: only calls made from the main executable
// are counted.
//   THREADLIMIT_ALLOW=N    the executable's first N calls succeed, every later one fails
//   THREADLIMIT_IN=host    only in the host process (the default)
//   THREADLIMIT_IN=worker  only in worker processes (`host __worker …`)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

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

static int counted(void) {
    const char *where = getenv("THREADLIMIT_IN");
    int worker = where && strcmp(where, "worker") == 0;
    return is_worker() == worker;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    static create_fn real;
    static int calls;
    if (!real) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    Dl_info caller, program;
    // The main executable is the object that holds the program headers the kernel passed.
    int fromProgram = dladdr(__builtin_return_address(0), &caller) && dladdr((void *)getauxval(AT_PHDR), &program) &&
                      caller.dli_fbase == program.dli_fbase;
    if (fromProgram && counted()) {
        const char *allow = getenv("THREADLIMIT_ALLOW");
        if (__atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST) >= (allow ? atoi(allow) : 0)) return EAGAIN;
    }
    return real(thread, attributes, start, argument);
}
