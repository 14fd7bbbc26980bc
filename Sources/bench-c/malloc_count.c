// An LD_PRELOAD malloc counter for scripts/bench: counts every allocation call
// (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc) in the
// process, on every thread, and forwards it to glibc. The runner reads the count
// with bench_malloc_count(), found through dlsym(RTLD_DEFAULT, …), before and after
// a dispatch loop. free() is not counted: a loop that allocates and frees still counts.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

// glibc's own entry points (exported for exactly this use).
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static _Atomic unsigned long long calls;

__attribute__((visibility("default"))) unsigned long long bench_malloc_count(void) {
    return atomic_load_explicit(&calls, memory_order_relaxed);
}

static inline void count(void) { atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *valloc(size_t size) { count(); return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    count();
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (!p && size) return ENOMEM;
    *out = p;
    return 0;
}
