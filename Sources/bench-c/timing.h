// The floors' shared timing: a monotonic clock in nanoseconds and the comparison qsort needs
// to take a median. Header-only (static functions), so each floor stays one cc command.
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <time.h>

static inline double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
