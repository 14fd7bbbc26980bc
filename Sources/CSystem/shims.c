// Compiled with _GNU_SOURCE, which Glibc's Swift module is not: see CSystem.h.
#define _GNU_SOURCE
#include <stddef.h>
#include <linux/magic.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
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

int csystem_is_executable_tmpfs(const char *path) {
    struct statfs system;
    struct statvfs mount;
    if (statfs(path, &system) != 0 || statvfs(path, &mount) != 0) return -1;
    return system.f_type == TMPFS_MAGIC && !(mount.f_flag & ST_NOEXEC);
}
