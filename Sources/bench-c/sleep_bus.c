// Row 13's sleep line (issue 38), both ends of logind's delay inhibitor on a private dbus-daemon
// (DBUS_SYSTEM_BUS_ADDRESS), written against libsystemd's sd-bus as a C program uses it: linked
// (scripts/bench links libsystemd.so.0 by name; the few functions used are declared below, as
// the build machine has no libsystemd headers).
//
//   bench-sleep-bus logind   a minimal systemd-logind: owns org.freedesktop.login1, answers
//                            Inhibit with a pipe's write end (keeping the read end) and
//                            InhibitDelayMaxUSec; on stdin, "sleep" emits PrepareForSleep(true)
//                            and prints "released NS" when the inhibitor's read end hangs up (the
//                            client closed it), NS from just before the emit; "wake" emits
//                            PrepareForSleep(false). Prints "ready" once it owns the name and
//                            "inhibited" for each Inhibit; errors as "error …" lines.
//   bench-sleep-bus client   the floor: a bare sd-bus client that holds a delay inhibitor,
//                            closes it on PrepareForSleep(true) and takes a new one on
//                            PrepareForSleep(false), as the host's sleep source does.
//
// python3-dbusmock's logind template watches its inhibitors' hang-up too, but shows it only in
// ListInhibitors, which the bench would have to poll over the bus: this mock times the hang-up
// itself, on the same clock as the emit.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// sd-bus (sd-bus.h): opaque types and the functions used.
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot sd_bus_slot;
typedef struct sd_bus_error {
    const char *name;
    const char *message;
    int _need_free;
} sd_bus_error;
typedef int (*sd_bus_message_handler_t)(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);
int sd_bus_open_system(sd_bus **bus);
int sd_bus_request_name(sd_bus *bus, const char *name, uint64_t flags);
int sd_bus_add_object(sd_bus *bus, sd_bus_slot **slot, const char *path, sd_bus_message_handler_t callback,
                      void *userdata);
int sd_bus_match_signal(sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path, const char *interface,
                        const char *member, sd_bus_message_handler_t callback, void *userdata);
int sd_bus_call_method(sd_bus *bus, const char *destination, const char *path, const char *interface,
                       const char *member, sd_bus_error *ret_error, sd_bus_message **reply, const char *types, ...);
int sd_bus_message_is_method_call(sd_bus_message *m, const char *interface, const char *member);
int sd_bus_message_read(sd_bus_message *m, const char *types, ...);
sd_bus_message *sd_bus_message_unref(sd_bus_message *m);
int sd_bus_reply_method_return(sd_bus_message *call, const char *types, ...);
int sd_bus_emit_signal(sd_bus *bus, const char *path, const char *interface, const char *member, const char *types,
                       ...);
int sd_bus_process(sd_bus *bus, sd_bus_message **ret);
int sd_bus_wait(sd_bus *bus, uint64_t timeout_usec);
int sd_bus_get_fd(sd_bus *bus);
int sd_bus_get_events(sd_bus *bus);
int sd_bus_flush(sd_bus *bus);
void sd_bus_error_free(sd_bus_error *e);

static const char *const login1 = "org.freedesktop.login1";
static const char *const path = "/org/freedesktop/login1";
static const char *const manager = "org.freedesktop.login1.Manager";

static uint64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// MARK: the floor

// The inhibitor held (-1: none).
static int held = -1;

static int take(sd_bus *bus) {
    sd_bus_error error = {NULL, NULL, 0};
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(bus, login1, path, manager, "Inhibit", &error, &reply, "ssss", "sleep:shutdown",
                               "bench-floor", "the floor finishes entering the background", "delay");
    if (r < 0) {
        fprintf(stderr, "Inhibit: %s\n", error.message ? error.message : strerror(-r));
        sd_bus_error_free(&error);
        return r;
    }
    int fd = -1;
    r = sd_bus_message_read(reply, "h", &fd);
    // The message owns its descriptor: a copy outlives it.
    if (r >= 0) held = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    sd_bus_message_unref(reply);
    return r < 0 ? r : 0;
}

static int prepare_for_sleep(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    int sleeping = 0;
    if (sd_bus_message_read(m, "b", &sleeping) < 0) return 0;
    if (sleeping) {
        if (held >= 0) close(held);
        held = -1;
    } else if (held < 0) {
        take(userdata);
    }
    return 0;
}

static int client(sd_bus *bus) {
    int r = sd_bus_match_signal(bus, NULL, login1, path, manager, "PrepareForSleep", prepare_for_sleep, bus);
    if (r < 0) {
        fprintf(stderr, "AddMatch: %s\n", strerror(-r));
        return 1;
    }
    if (take(bus) < 0) return 1;
    for (;;) {
        r = sd_bus_process(bus, NULL);
        if (r > 0) continue;
        if (r == 0) r = sd_bus_wait(bus, UINT64_MAX);
        if (r < 0 && r != -EINTR) return r == -ECONNRESET || r == -ENOTCONN ? 0 : 1;
    }
}

// MARK: the mock logind

// The read end of the inhibitor handed out last (-1: none).
static int watched = -1;

static int logind_call(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata;
    (void)error;
    if (sd_bus_message_is_method_call(m, manager, "Inhibit")) {
        int ends[2];
        if (pipe2(ends, O_CLOEXEC) != 0) return -errno;
        // sd-bus sends a copy of the write end: ours is closed at once, the client's is the only one.
        int r = sd_bus_reply_method_return(m, "h", ends[1]);
        close(ends[1]);
        if (r < 0) {
            close(ends[0]);
            return r;
        }
        if (watched >= 0) close(watched);
        watched = ends[0];
        printf("inhibited\n");
        fflush(stdout);
        return 1;
    }
    if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "Get")) {
        const char *interface = NULL, *name = NULL;
        if (sd_bus_message_read(m, "ss", &interface, &name) < 0) return 0;
        if (strcmp(interface, manager) != 0 || strcmp(name, "InhibitDelayMaxUSec") != 0) return 0;
        return sd_bus_reply_method_return(m, "v", "t", (uint64_t)5000000);
    }
    return 0;
}

static int logind(sd_bus *bus) {
    int r = sd_bus_request_name(bus, login1, 0);
    if (r >= 0) r = sd_bus_add_object(bus, NULL, path, logind_call, NULL);
    if (r < 0) {
        printf("error owning %s: %s\n", login1, strerror(-r));
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    char command[64];
    size_t length = 0;
    // When the emit was (0: not waiting for a release).
    uint64_t emitted = 0;
    for (;;) {
        while ((r = sd_bus_process(bus, NULL)) > 0) {}
        if (r < 0) {
            printf("error: sd_bus_process: %s\n", strerror(-r));
            return 1;
        }
        struct pollfd fds[3] = {
            {0, POLLIN, 0},
            {sd_bus_get_fd(bus), (short)sd_bus_get_events(bus), 0},
            // Only the hang-up is asked for: nothing is ever written to the pipe.
            {emitted ? watched : -1, 0, 0},
        };
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR) continue;
            printf("error: poll: %s\n", strerror(errno));
            return 1;
        }
        if (fds[2].revents & (POLLHUP | POLLERR)) {
            uint64_t released = now_ns();
            printf("released %llu\n", (unsigned long long)(released - emitted));
            fflush(stdout);
            close(watched);
            watched = -1;
            emitted = 0;
        }
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            ssize_t count = read(0, command + length, sizeof command - 1 - length);
            if (count <= 0) return 0;  // the bench closed our stdin: done
            length += (size_t)count;
            char *newline;
            while ((newline = memchr(command, '\n', length))) {
                *newline = 0;
                if (strcmp(command, "sleep") == 0 || strcmp(command, "wake") == 0) {
                    int sleeping = command[0] == 's';
                    if (sleeping) {
                        if (watched < 0) {
                            printf("error: sleep without an inhibitor held\n");
                            fflush(stdout);
                        } else {
                            emitted = now_ns();
                        }
                    }
                    r = sd_bus_emit_signal(bus, path, manager, "PrepareForSleep", "b", sleeping);
                    if (r < 0) {
                        printf("error: PrepareForSleep: %s\n", strerror(-r));
                        return 1;
                    }
                    sd_bus_flush(bus);
                }
                length -= (size_t)(newline + 1 - command);
                memmove(command, newline + 1, length);
            }
            if (length == sizeof command - 1) length = 0;  // a line too long for any command
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "logind") != 0 && strcmp(argv[1], "client") != 0)) {
        fprintf(stderr, "usage: bench-sleep-bus logind|client (on DBUS_SYSTEM_BUS_ADDRESS)\n");
        return 2;
    }
    sd_bus *bus = NULL;
    int r = sd_bus_open_system(&bus);
    if (r < 0) {
        printf("error: sd_bus_open_system: %s\n", strerror(-r));
        fprintf(stderr, "sd_bus_open_system: %s\n", strerror(-r));
        return 1;
    }
    return strcmp(argv[1], "logind") == 0 ? logind(bus) : client(bus);
}
