// The libc calls HostCore needs that Glibc's Swift module hides: they are declared only
// with _GNU_SOURCE, which a Swift module cannot set for the C library it imports. Internal
// to HostCore, as swift-system's CSystem is to SystemPackage.
#ifndef CSYSTEM_H
#define CSYSTEM_H

/// pipe2(2): a pipe whose ends get `flags` (O_CLOEXEC) in the same call.
int csystem_pipe2(int fds[2], int flags);

/// accept4(2) without the peer's address: the connection gets `flags` (SOCK_CLOEXEC) in the
/// same call.
int csystem_accept4(int fd, int flags);

/// sendfile(2): copies up to `count` bytes of `in` from `*offset` to `out`.
long csystem_sendfile(int out, int in, long *offset, unsigned long count);

/// Whether `path` is on tmpfs mounted without noexec (statfs(2) and statvfs(3), whose
/// TMPFS_MAGIC and ST_NOEXEC Glibc's Swift module does not import): 1 yes, 0 no, -1 errno.
int csystem_is_executable_tmpfs(const char *path);

#endif
