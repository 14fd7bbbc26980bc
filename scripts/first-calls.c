// first-calls: the functions a program enters before it prints a line, in the order it first
// enters them. Used by scripts/startup-order to lay out the host's start-up code contiguously.
//
//   first-calls ENTRIES MARKER -- PROGRAM [ARGUMENTS…]
//
// ENTRIES lists the program's function entry offsets (hex, one per line, from the link map).
// At exec the tracer writes a breakpoint (int3) over the first byte of each; the first time any
// thread reaches one, the tracer prints its offset on stdout, restores the byte and goes on.
// When MARKER appears on the program's stderr, the program is killed and the tracer exits 0.
// The program's stdout is left alone; its stderr is read by the tracer (and not shown).
//
// Linux x86_64 only (ptrace, int3), like the host. A development tool: nothing links it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

struct entry {
    uint64_t offset;
    uint8_t original;
    int armed;
};

static int compare(const void *a, const void *b) {
    uint64_t x = ((const struct entry *)a)->offset, y = ((const struct entry *)b)->offset;
    return x < y ? -1 : x > y;
}

static void die(const char *what) {
    fprintf(stderr, "first-calls: %s: %s\n", what, strerror(errno));
    exit(1);
}

// The address the executable's first mapping starts at (its load base: a PIE maps offset 0 there).
static uint64_t load_base(pid_t pid, const char *program) {
    char path[64], line[PATH_MAX + 128], *real = realpath(program, NULL);
    if (!real) die(program);
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *maps = fopen(path, "r");
    if (!maps) die(path);
    uint64_t base = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, offset;
        char *name = strchr(line, '/');
        if (!name) continue;
        name[strcspn(name, "\n")] = 0;
        if (sscanf(line, "%lx-%*x %*s %lx", &start, &offset) == 2 && offset == 0 && strcmp(name, real) == 0) {
            base = start;
            break;
        }
    }
    fclose(maps);
    free(real);
    if (!base) {
        fprintf(stderr, "first-calls: %s is not mapped in the child\n", program);
        exit(1);
    }
    return base;
}

int main(int argc, char **argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: first-calls ENTRIES MARKER -- PROGRAM [ARGUMENTS...]\n");
        return 2;
    }
    const char *marker = argv[2];
    FILE *list = fopen(argv[1], "r");
    if (!list) die(argv[1]);
    size_t count = 0, capacity = 1024;
    struct entry *entries = malloc(capacity * sizeof *entries);
    unsigned long long offset;
    while (fscanf(list, "%llx", &offset) == 1) {
        if (count == capacity && !(entries = realloc(entries, (capacity *= 2) * sizeof *entries))) die("realloc");
        entries[count++] = (struct entry){.offset = offset};
    }
    fclose(list);
    qsort(entries, count, sizeof *entries, compare);

    int output[2];
    if (pipe2(output, O_CLOEXEC) != 0) die("pipe2");
    // A child's stop wakes the poll below as its stderr does.
    sigset_t child_signals;
    sigemptyset(&child_signals);
    sigaddset(&child_signals, SIGCHLD);
    sigprocmask(SIG_BLOCK, &child_signals, NULL);
    int stops = signalfd(-1, &child_signals, SFD_NONBLOCK | SFD_CLOEXEC);
    if (stops < 0) die("signalfd");
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        dup2(output[1], STDERR_FILENO);
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        sigprocmask(SIG_UNBLOCK, &child_signals, NULL);
        execv(argv[4], argv + 4);
        _exit(127);
    }
    close(output[1]);
    fcntl(output[0], F_SETFL, O_NONBLOCK);

    int status;
    if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) die("waiting for exec");
    ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL);
    uint64_t base = load_base(child, argv[4]);
    for (size_t i = 0; i < count; i++) {
        uint64_t address = base + entries[i].offset;
        errno = 0;
        long word = ptrace(PTRACE_PEEKTEXT, child, address, 0);
        if (errno) continue;  // not mapped (a section outside the text): never hit
        entries[i].original = (uint8_t)word;
        entries[i].armed = 1;
        ptrace(PTRACE_POKETEXT, child, address, (word & ~0xffL) | 0xcc);
    }
    ptrace(PTRACE_CONT, child, 0, 0);

    // Stops are handled as they come; between them the tracer looks at the child's stderr.
    char seen[1 << 16];
    size_t length = 0;
    int running = 1;
    while (running) {
        struct pollfd readable[2] = {{.fd = output[0], .events = POLLIN}, {.fd = stops, .events = POLLIN}};
        poll(readable, 2, 100);
        struct signalfd_siginfo drained;
        while (read(stops, &drained, sizeof drained) > 0) {}
        if (readable[0].revents) {
            ssize_t got = read(output[0], seen + length, sizeof seen - 1 - length);
            if (got > 0) {
                length += (size_t)got;
                seen[length] = 0;
                if (strstr(seen, marker)) break;
                if (length > sizeof seen / 2) {  // keep the tail, where the marker may be starting
                    memmove(seen, seen + length - 256, 256);
                    length = 256;
                }
            }
        }
        pid_t thread;
        while ((thread = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
            if (WIFEXITED(status) || WIFSIGNALED(status)) {
                if (thread == child) running = 0;
                continue;
            }
            int signal = WSTOPSIG(status), forward = 0;
            if (signal == SIGTRAP && (status >> 16) == 0) {
                struct user_regs_struct registers;
                ptrace(PTRACE_GETREGS, thread, 0, &registers);
                struct entry key = {.offset = registers.rip - 1 - base};
                struct entry *hit = bsearch(&key, entries, count, sizeof *entries, compare);
                if (hit && hit->armed) {
                    uint64_t address = base + hit->offset;
                    long word = ptrace(PTRACE_PEEKTEXT, thread, address, 0);
                    ptrace(PTRACE_POKETEXT, thread, address, (word & ~0xffL) | hit->original);
                    hit->armed = 0;
                    registers.rip -= 1;
                    ptrace(PTRACE_SETREGS, thread, 0, &registers);
                    printf("%llx\n", (unsigned long long)hit->offset);
                } else {
                    forward = signal;  // a trap the program raised itself
                }
            } else if (signal != SIGTRAP && signal != SIGSTOP) {
                forward = signal;
            }
            ptrace(PTRACE_CONT, thread, 0, forward);
        }
        if (thread < 0 && errno == ECHILD) running = 0;
    }
    kill(child, SIGKILL);
    fflush(stdout);
    return 0;
}
