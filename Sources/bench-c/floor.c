// bench-floor: what the machine allows, for scripts/bench to compare the host against.
// Plain C, compiled by scripts/bench with cc, so it carries no Swift runtime. It does only
// the unavoidable part of the host's work, with no checks:
//   bench-floor startup DIR   dlopen() every *.so of DIR in name order and call its
//                             servicehost_entry, then print "bench-floor: active with N
//                             service(s)" on stderr and wait to be killed (start-up and
//                             memory rows: the runner times exec → that line, reads VmRSS)
//   bench-floor load DIR      the same, then exit (the `host inspect` row)
//   bench-floor dispatch DIR ROUNDS REPS
//                             a C loop over the services' handle_event pointers, ROUNDS
//                             times willResignActive (reverse order) + didBecomeActive,
//                             REPS times; prints the median ns per service call on stdout
//                             (the floor of the dispatch row; services without attach only)
//   bench-floor jsonscan FILE ROUNDS REPS
//                             validates FILE as JSON (jsonscan.c) ROUNDS times, REPS times;
//                             prints the median ns per scan (the floor of the JSON rows)
//   bench-floor faults FILE REPS
//                             what one minor page fault costs here (row 3's fixed cost is
//                             mostly faults), each the median of REPS rounds over fresh
//                             mappings of 2 MiB: an anonymous page written (heap, runtime
//                             metadata); a page of FILE read through a private mapping, FILE
//                             in the page cache, where the kernel maps the cached pages of
//                             the 64 KiB around it at once (a library's code); a page of FILE
//                             written (copy on write: data the loader relocates); prints
//                             "ANON FILE COW" in ns per fault on stdout
#define _GNU_SOURCE
#include <servicehost.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "jsonscan.h"
#include "timing.h"

static int is_plugin(const struct dirent *entry) {
    size_t length = strlen(entry->d_name);
    return length > 3 && strcmp(entry->d_name + length - 3, ".so") == 0;
}

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "bench-floor: %s: %s\n", what, detail);
    exit(1);
}

// Loads every plugin of dir; returns its services (count in *count).
static const sh_service **load(const char *dir, size_t *count) {
    struct dirent **names;
    int n = scandir(dir, &names, is_plugin, alphasort);
    if (n < 0) fail(dir, "cannot read the directory");
    const sh_host_offer offer = {sizeof(sh_host_offer), SH_HOST_OFFER_VERSION, SH_ABI_VERSION_MIN,
                                 SH_ABI_VERSION, "bench-floor"};
    size_t capacity = 16, used = 0;
    const sh_service **services = malloc(capacity * sizeof *services);
    char path[4096];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!library) fail("dlopen", dlerror());
        sh_entry_fn entry = (sh_entry_fn)dlsym(library, SH_ENTRY_SYMBOL);
        if (!entry) fail(path, "no servicehost_entry");
        const sh_plugin *plugin = entry(&offer);
        if (!plugin) fail(path, "servicehost_entry returned NULL");
        for (uint32_t s = 0; s < plugin->service_count; s++) {
            if (used == capacity) services = realloc(services, (capacity *= 2) * sizeof *services);
            services[used++] = plugin->services[s];
        }
        free(names[i]);
    }
    free(names);
    *count = used;
    return services;
}

// The dispatcher with nothing but the calls: what the host's dispatch loop does minus
// its bookkeeping (handler lists, call tracker, trace check, result check).
static void dispatch_rounds(const sh_service **services, size_t count, long rounds, uint64_t *seq) {
    sh_event event = {sizeof(sh_event), SH_EVENT_VERSION, 0, 0, 0, NULL, NULL};
    for (long r = 0; r < rounds; r++) {
        event.kind = SH_EVENT_WILL_RESIGN_ACTIVE;
        event.app_state = SH_APP_ACTIVE;
        for (size_t i = count; i-- > 0;) {
            event.seq = ++*seq;
            services[i]->handle_event(services[i], &event);
        }
        event.kind = SH_EVENT_DID_BECOME_ACTIVE;
        for (size_t i = 0; i < count; i++) {
            event.seq = ++*seq;
            services[i]->handle_event(services[i], &event);
        }
    }
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// jsonscan FILE ROUNDS REPS: the median ns per validating scan.
static int scan_file(const char *path, long rounds, long reps) {
    FILE *file = fopen(path, "rb");
    if (!file) fail(path, "cannot open");
    static uint8_t buffer[4 << 20];
    size_t length = fread(buffer, 1, sizeof buffer, file);
    fclose(file);
    if (rounds <= 0 || reps <= 0 || reps > 99) fail("jsonscan", "bad arguments");
    if (!jsonscan_validate(buffer, length)) fail(path, "not valid JSON");
    double samples[99];
    volatile int valid = 0;
    for (long r = 0; r < reps; r++) {
        double start = seconds();
        for (long i = 0; i < rounds; i++) valid += jsonscan_validate(buffer, length);
        samples[r] = (seconds() - start) * 1e9 / (double)rounds;
    }
    qsort(samples, (size_t)reps, sizeof samples[0], compare);
    printf("%.2f\n", samples[reps / 2]);
    return valid == 0;
}

// faults FILE REPS: see the top of the file.
static int fault_costs(const char *path, long reps) {
    enum { size = 2 << 20, page = 4096, around = 65536 };
    if (reps <= 0 || reps > 99) fail("faults", "bad arguments");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot open");
    // Into the page cache first: a fault that reads the disk is a major one, not measured here.
    static char buffer[size];
    if (pread(fd, buffer, size, 0) != size) fail(path, "shorter than 2 MiB");
    double samples[3][99];
    for (long r = 0; r < reps; r++) {
        for (int kind = 0; kind < 3; kind++) {
            int prot = kind == 1 ? PROT_READ : PROT_READ | PROT_WRITE;
            int flags = kind == 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_PRIVATE;
            volatile char *memory = mmap(NULL, size, prot, flags, kind == 0 ? -1 : fd, 0);
            if (memory == MAP_FAILED) fail("faults", "mmap failed");
            // Small pages only: where transparent huge pages are "always", the anonymous
            // mapping would take one fault for 2 MiB, which is not what a start's heap takes.
            madvise((void *)memory, size, MADV_NOHUGEPAGE);
            size_t stride = kind == 1 ? around : page;
            volatile char sink = 0;
            double start = seconds();
            for (size_t offset = 0; offset < size; offset += stride) {
                if (kind == 1) sink += memory[offset];
                else memory[offset] = 1;
            }
            samples[kind][r] = (seconds() - start) * 1e9 / (double)(size / stride);
            (void)sink;
            munmap((void *)memory, size);
        }
    }
    for (int kind = 0; kind < 3; kind++) qsort(samples[kind], (size_t)reps, sizeof samples[kind][0], compare);
    printf("%.1f %.1f %.1f\n", samples[0][reps / 2], samples[1][reps / 2], samples[2][reps / 2]);
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "jsonscan") == 0) return scan_file(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc == 4 && strcmp(argv[1], "faults") == 0) return fault_costs(argv[2], atol(argv[3]));
    if (argc < 3) fail("usage", "bench-floor startup|load DIR | dispatch DIR ROUNDS REPS | jsonscan FILE ROUNDS REPS | faults FILE REPS");
    size_t count;
    const sh_service **services = load(argv[2], &count);
    if (strcmp(argv[1], "load") == 0) return 0;
    if (strcmp(argv[1], "startup") == 0) {
        char line[80];
        int length = snprintf(line, sizeof line, "bench-floor: active with %zu service(s)\n", count);
        if (write(STDERR_FILENO, line, (size_t)length) != length) return 1;
        for (;;) pause();  // until the runner kills it
    }
    if (strcmp(argv[1], "dispatch") != 0 || argc != 5) fail("usage", "unknown mode or arguments");
    long rounds = atol(argv[3]), reps = atol(argv[4]);
    if (count == 0 || rounds <= 0 || reps <= 0 || reps > 99) fail("dispatch", "bad arguments");
    uint64_t seq = 0;
    double samples[99];
    dispatch_rounds(services, count, rounds, &seq);  // warm-up
    for (long rep = 0; rep < reps; rep++) {
        double start = now_ns();
        dispatch_rounds(services, count, rounds, &seq);
        samples[rep] = (now_ns() - start) / ((double)rounds * 2.0 * (double)count);
    }
    qsort(samples, (size_t)reps, sizeof samples[0], by_value);
    printf("%.4f\n", samples[reps / 2]);
    return 0;
}
