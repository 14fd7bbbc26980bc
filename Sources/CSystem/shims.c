// Compiled with _GNU_SOURCE, which Glibc's Swift module is not: see CSystem.h.
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
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
