// bench-pingpong: the floor of the control-channel row (row 4), in plain C. A server process
// and a client over a real AF_UNIX stream socket (listen/accept/connect, as the host's
// control socket), with newline-framed messages of the host's sizes and no parsing at all:
// the server answers every '\n' it reads with a reply of REPLY bytes.
//   bench-pingpong REQUEST REPLY PIPELINED ROUNDTRIPS REPS
// REQUEST and REPLY: message sizes in bytes (newline included). Prints on stdout
//   <median events/s over REPS pipelined runs of PIPELINED requests> <p50 ns> <p99 ns>
//   <p50 ns> <p99 ns> on one core, <p50 ns> <p99 ns> across two cores
// where the latencies are of ROUNDTRIPS single request/reply round trips, with the client
// and the server pinned to one core, then to two (the first two this process may run on; on
// one core only, the second pair is 0 0). Pinned, because where the scheduler puts the two
// decides a round trip: on this farm's virtual machines a wake-up on the other core costs
// 20–40 µs of the hypervisor's, one on the same core a context switch (~8 µs), and unpinned
// runs landed on either. The pipelined requests are written by a second thread while the main
// thread reads the replies, as the runner does against the host.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static void fail(const char *what) {
    perror(what);
    exit(1);
}

static void write_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n <= 0) fail("write");
        data += n;
        length -= (size_t)n;
    }
}

// The server: one connection; a reply per newline read, written as one batch per read.
static void serve(int listener, size_t reply) {
    int fd = accept(listener, NULL, NULL);
    if (fd < 0) _exit(1);
    char in[65536];
    char *out = malloc(reply * sizeof in);
    memset(out, 'x', reply * sizeof in);
    for (size_t i = reply - 1; i < reply * sizeof in; i += reply) out[i] = '\n';
    for (;;) {
        ssize_t n = read(fd, in, sizeof in);
        if (n <= 0) _exit(0);
        size_t lines = 0;
        for (ssize_t i = 0; i < n; i++) lines += in[i] == '\n';
        if (lines) write_all(fd, out, lines * reply);
    }
}

struct writer { int fd; const char *data; size_t length; };

static void *write_requests(void *argument) {
    struct writer *w = argument;
    write_all(w->fd, w->data, w->length);
    return NULL;
}

// Reads until `lines` newlines arrived.
static void read_lines(int fd, long lines) {
    char buffer[65536];
    while (lines > 0) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n <= 0) fail("read");
        for (ssize_t i = 0; i < n; i++) lines -= buffer[i] == '\n';
    }
}

// Pins process (or thread) `pid` to `cpu`; false when that cannot be done.
static int pin(pid_t pid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(pid, sizeof set, &set) == 0;
}

// ROUNDTRIPS single round trips (after 100 unmeasured); their p50 and p99 in p[0], p[1].
static void round_trips(int fd, const char *requests, size_t request, long roundtrips, double *p) {
    double *latency = malloc(sizeof(double) * (size_t)roundtrips);
    for (long i = -100; i < roundtrips; i++) {
        double start = now_ns();
        write_all(fd, requests, request);
        read_lines(fd, 1);
        if (i >= 0) latency[i] = now_ns() - start;
    }
    qsort(latency, (size_t)roundtrips, sizeof latency[0], by_value);
    p[0] = latency[roundtrips / 2];
    p[1] = latency[(size_t)((double)roundtrips * 0.99)];
    free(latency);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: bench-pingpong REQUEST REPLY PIPELINED ROUNDTRIPS REPS\n");
        return 1;
    }
    size_t request = (size_t)atol(argv[1]), reply = (size_t)atol(argv[2]);
    long pipelined = atol(argv[3]), roundtrips = atol(argv[4]), reps = atol(argv[5]);
    if (request < 1 || reply < 1 || pipelined < 1 || roundtrips < 1 || reps < 1 || reps > 99) {
        fprintf(stderr, "bench-pingpong: bad arguments\n");
        return 1;
    }
    char directory[] = "/tmp/bench-pingpong.XXXXXX";
    if (!mkdtemp(directory)) fail("mkdtemp");
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s/socket", directory);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0)
        fail("listen");
    pid_t server = fork();
    if (server == 0) serve(listener, reply);
    close(listener);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
    unlink(address.sun_path);
    rmdir(directory);

    char *requests = malloc(request * (size_t)pipelined);
    memset(requests, 'x', request * (size_t)pipelined);
    for (size_t i = request - 1; i < request * (size_t)pipelined; i += request) requests[i] = '\n';

    double samples[99];
    for (long rep = -1; rep < reps; rep++) {  // rep -1: warm-up
        struct writer w = {fd, requests, request * (size_t)pipelined};
        pthread_t thread;
        double start = now_ns();
        if (pthread_create(&thread, NULL, write_requests, &w) != 0) fail("pthread_create");
        read_lines(fd, pipelined);
        double elapsed = now_ns() - start;
        pthread_join(thread, NULL);
        if (rep >= 0) samples[rep] = (double)pipelined / (elapsed / 1e9);
    }
    qsort(samples, (size_t)reps, sizeof samples[0], by_value);
    double throughput = samples[reps / 2];

    // The first two cores this process may run on.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) fail("sched_getaffinity");
    int cores[2] = {-1, -1}, found = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++)
        if (CPU_ISSET(cpu, &allowed)) cores[found++] = cpu;
    double one[2], two[2] = {0, 0};
    if (!pin(0, cores[0]) || !pin(server, cores[0])) fail("sched_setaffinity");
    round_trips(fd, requests, request, roundtrips, one);
    if (found == 2) {
        if (!pin(server, cores[1])) fail("sched_setaffinity");
        round_trips(fd, requests, request, roundtrips, two);
    }
    printf("%.1f %.1f %.1f %.1f %.1f\n", throughput, one[0], one[1], two[0], two[1]);
    close(fd);
    waitpid(server, NULL, 0);
    return 0;
}
