// A service that tries its sandbox on didBecomeActive (issue 43), for the end-to-end tests.
// Compile with -DSANDBOX_ACTION=N and -DSANDBOX_ID='"test.x"':
//   1  unless the file SANDBOX_MARKER exists (it creates it): allocates and touches 16 MiB at a
//      time, up to 2 GiB (a worker held to memoryMax is OOM-killed on the way)
//   2  forks children (each waits for its parent to go) until a fork fails, up to 512; prints
//      "sandbox: fork errno=E after N" (0: none failed), then kills them
//   3  spins on a thread of its own, for ever (cpuQuota holds it)
//   4  tries ptrace, mount and sockets; prints "sandbox: ptrace=E mount=E inet=E unix=E",
//      each the call's errno (0: it succeeded). Chosen so that, unfiltered, each fails harmlessly
//      with another errno: ptrace(PTRACE_ATTACH, 0) ESRCH, a mount on a missing folder ENOENT.
//   5  prints "sandbox: uid=U gid=G groups=N state=E other=E": its ids, its supplementary groups'
//      count, and the errno of opening the folder SANDBOX_STATE and the file SANDBOX_OTHER (0: it could)
//   6  writes a file in the folder SANDBOX_GRANTED and in SANDBOX_OUTSIDE; prints
//      "sandbox: granted=E outside=E" (each errno, 0: written)
//   7  prints "sandbox: interfaces=lo,eth0 up=lo" (the interfaces it sees, those up, sorted as
//      the kernel numbers them) and "sandbox: inet-connect=E" (a TCP connection begun to
//      192.0.2.1:9, not waited for: EINPROGRESS with a route there, ENETUNREACH without)
//   8  prints "sandbox: ptrace=E mkdir=E" (ptrace as 4, and mkdir of a missing folder's child:
//      ENOENT unfiltered)
#define _GNU_SOURCE
#include <servicehost.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <dirent.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SANDBOX_ID
#define SANDBOX_ID "test.sandbox"
#endif

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(sandbox_meta, SANDBOX_ID, "Sandbox", "0.1.0", SH_EVENT_BIT(SH_EVENT_DID_BECOME_ACTIVE), 0);

#if SANDBOX_ACTION == 3
static void *spin(void *unused) {
    (void)unused;
    for (volatile unsigned long i = 0;; i++) {
    }
    return NULL;
}
#endif

static void act(void) {
#if SANDBOX_ACTION == 1
    int marker = open(SANDBOX_MARKER, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (marker < 0) return;
    close(marker);
    for (int i = 0; i < 128; i++) {
        char *block = malloc(16 << 20);
        if (!block) break;
        memset(block, i + 1, 16 << 20);
    }
    fprintf(stderr, "sandbox: allocated 2 GiB\n");
#elif SANDBOX_ACTION == 2
    pid_t children[512];
    int count = 0, failure = 0;
    while (count < 512) {
        pid_t child = fork();
        if (child < 0) {
            failure = errno;
            break;
        }
        if (child == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            pause();
            _exit(0);
        }
        children[count++] = child;
    }
    fprintf(stderr, "sandbox: fork errno=%d after %d\n", failure, count);
    for (int i = 0; i < count; i++) {
        kill(children[i], SIGKILL);
        waitpid(children[i], NULL, 0);
    }
#elif SANDBOX_ACTION == 3
    pthread_t thread;
    pthread_create(&thread, NULL, spin, NULL);
    pthread_detach(thread);
#elif SANDBOX_ACTION == 4
    errno = 0;
    int traced = ptrace(PTRACE_ATTACH, 0, NULL, NULL) < 0 ? errno : 0;
    int mounted = mount("none", "/nonexistent/servicehost-sandbox", "tmpfs", 0, NULL) < 0 ? errno : 0;
    int inet = socket(AF_INET, SOCK_STREAM, 0);
    int inet_errno = inet < 0 ? errno : 0;
    if (inet >= 0) close(inet);
    int local = socket(AF_UNIX, SOCK_STREAM, 0);
    int local_errno = local < 0 ? errno : 0;
    if (local >= 0) close(local);
    fprintf(stderr, "sandbox: ptrace=%d mount=%d inet=%d unix=%d\n", traced, mounted, inet_errno, local_errno);
#elif SANDBOX_ACTION == 5
    gid_t groups[64];
    int count = getgroups(64, groups);
    DIR *state = opendir(SANDBOX_STATE);
    int state_errno = state ? 0 : errno;
    if (state) closedir(state);
    int other = open(SANDBOX_OTHER, O_RDONLY);
    int other_errno = other < 0 ? errno : 0;
    if (other >= 0) close(other);
    fprintf(stderr, "sandbox: uid=%d gid=%d groups=%d state=%d other=%d\n", (int)getuid(), (int)getgid(), count,
            state_errno, other_errno);
#elif SANDBOX_ACTION == 6
    int granted = open(SANDBOX_GRANTED "/written", O_CREAT | O_WRONLY | O_TRUNC, 0600);
    int granted_errno = granted < 0 ? errno : 0;
    if (granted >= 0) close(granted);
    int outside = open(SANDBOX_OUTSIDE "/written", O_CREAT | O_WRONLY | O_TRUNC, 0600);
    int outside_errno = outside < 0 ? errno : 0;
    if (outside >= 0) close(outside);
    fprintf(stderr, "sandbox: granted=%d outside=%d\n", granted_errno, outside_errno);
#elif SANDBOX_ACTION == 7
    char seen[512] = "", up[512] = "";
    struct if_nameindex *names = if_nameindex();
    int probe = socket(AF_INET, SOCK_DGRAM, 0);
    for (struct if_nameindex *name = names; name && name->if_index != 0; name++) {
        if (seen[0]) strcat(seen, ",");
        strncat(seen, name->if_name, 32);
        struct ifreq request = {0};
        strncpy(request.ifr_name, name->if_name, IFNAMSIZ - 1);
        if (probe >= 0 && ioctl(probe, SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags & IFF_UP)) {
            if (up[0]) strcat(up, ",");
            strncat(up, name->if_name, 32);
        }
    }
    if (names) if_freenameindex(names);
    if (probe >= 0) close(probe);
    fprintf(stderr, "sandbox: interfaces=%s up=%s\n", seen, up);
    int tcp = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);  // never waits for an answer
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(9)};
    inet_pton(AF_INET, "192.0.2.1", &address.sin_addr);
    int connected = connect(tcp, (struct sockaddr *)&address, sizeof address) < 0 ? errno : 0;
    close(tcp);
    fprintf(stderr, "sandbox: inet-connect=%d\n", connected);
#elif SANDBOX_ACTION == 8
    errno = 0;
    int traced = ptrace(PTRACE_ATTACH, 0, NULL, NULL) < 0 ? errno : 0;
    int made = mkdir("/nonexistent/servicehost-sandbox", 0700) < 0 ? errno : 0;
    fprintf(stderr, "sandbox: ptrace=%d mkdir=%d\n", traced, made);
#endif
}

static int32_t sandbox_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    if (event->kind == SH_EVENT_DID_BECOME_ACTIVE) act();
    return SH_OK;
}

static const sh_service sandbox_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, sandbox_meta.id, NULL, NULL, sandbox_handle_event,
};
static const sh_service *const services[] = {&sandbox_service};
static const sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
