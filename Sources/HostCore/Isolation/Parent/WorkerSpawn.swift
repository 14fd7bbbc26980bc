import Glibc

/// Starts a worker: the `host` binary again, as `host __worker PATH`, with one end of a
/// socketpair as file descriptor 3 and its stdout and stderr on a pipe the host reads.
enum WorkerSpawn {
    /// The internal subcommand a worker runs.
    static let subcommand = "__worker"
    /// The descriptor the worker finds its channel on.
    static let channelDescriptor: Int32 = 3

    /// A started worker: its pid, the host's end of the channel and the read end of its output.
    struct Started: ~Copyable {
        let pid: pid_t
        let channel: FileDescriptor
        let output: FileDescriptor
    }

    /// The descriptor a worker that runs as another user finds its plugin's stored copy on:
    /// the host opened it, and the worker loads it as ``pluginDescriptorPath`` (the copy's
    /// folders are the host user's alone; the magic link reaches the file without them).
    static let pluginDescriptor: Int32 = 4
    /// The path a worker given its plugin as ``pluginDescriptor`` loads.
    static let pluginDescriptorPath = "/proc/self/fd/4"

    /// Spawns `executable __worker pluginPath` (with its sandbox's options, ``WorkerSandbox``, for
    /// a sandboxed worker, and `plugin` as descriptor 4 when given). The worker gets its own process group (a
    /// Ctrl-C in the terminal goes to the host, which shuts services down in order, not to
    /// the workers), stdin from /dev/null and every other descriptor closed (the host's are
    /// all close-on-exec from their creation, see ``FileDescriptor``).
    static func spawn(
        executable: String, pluginPath: String, sandbox: WorkerSandbox? = nil, plugin: Int32? = nil
    ) throws(SystemError) -> Started {
        markInheritedCloseOnExec()
        let channel = try FileDescriptor.socketPair(path: pluginPath)
        let output = try FileDescriptor.pipe(path: pluginPath)
        // The worker's ends, numbered out of the way of 0...3 so the dup2s below never meet
        // their own source: a dup2 to another number is what clears close-on-exec on the
        // worker's copy. The host's copies close when this returns.
        let childChannel = try channel.second.duplicate(atLeast: 10, path: pluginPath)
        let childOutput = try output.second.duplicate(atLeast: 10, path: pluginPath)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, childOutput.rawValue, 1)
        posix_spawn_file_actions_adddup2(&actions, childOutput.rawValue, 2)
        posix_spawn_file_actions_adddup2(&actions, childChannel.rawValue, channelDescriptor)
        // The copy's descriptor is the host's own (held for the copy's lifetime): a dup of it,
        // numbered out of the way as the others, is what the worker inherits.
        let childPlugin = try plugin.map { (descriptor) throws(SystemError) -> Int32 in
            try retryingOnInterrupt("fcntl", pluginPath) { fcntl(descriptor, F_DUPFD_CLOEXEC, 10) }
        }
        defer { if let childPlugin { close(childPlugin) } }
        if let childPlugin { posix_spawn_file_actions_adddup2(&actions, childPlugin, pluginDescriptor) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        // The host ignores SIGTERM and SIGINT (ShutdownCoordinator); a worker starts with the
        // defaults and sets its own.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        let words: [String] = ["host", subcommand, pluginPath] + (sandbox?.arguments ?? [])
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let environment = workerEnvironment()
        defer { for entry in environment { free(entry) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environment + [nil])
        guard result == 0 else { throw SystemError(operation: "posix_spawn", path: executable, errno: result) }
        return Started(pid: pid, channel: channel.first, output: output.first)
    }

    /// Makes every descriptor above stderr close-on-exec. The host creates all of its own so;
    /// any other was inherited from whatever started the host (a shell, a test runner) or
    /// opened by an in-process plugin, and must not reach a worker.
    private static func markInheritedCloseOnExec() {
        guard let names = try? DirectoryHandle.open("/proc/self/fd").names() else { return }
        for case let number? in names.map({ Int32($0) }) where number > 2 {
            let flags = fcntl(number, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 { _ = fcntl(number, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// The host's environment, plus its store of copies (``CopyStore/workerVariable``) and a
    /// short Swift crash backtrace (the crashed thread's frames,
    /// which name the plugin's function) unless SWIFT_BACKTRACE says otherwise: a crashing
    /// plugin then leaves a useful trace in the host's log, not a hundred lines per crash.
    private static func workerEnvironment() -> [UnsafeMutablePointer<CChar>?] {
        var entries: [UnsafeMutablePointer<CChar>?] = []
        var hasBacktrace = false
        var entry = environ
        let store = CopyStore.workerVariable + "="
        while let pointer = entry.pointee {
            entry += 1
            if strncmp(pointer, "SWIFT_BACKTRACE=", 16) == 0 { hasBacktrace = true }
            if strncmp(pointer, store, store.utf8.count) == 0 { continue }
            entries.append(strdup(pointer))
        }
        // The host's store of copies: the worker opens the copy the host made there (HeldCopy).
        if let root = CopyStore.forWorkers.withLock({ $0 }) { entries.append(strdup(store + root)) }
        if !hasBacktrace {
            entries.append(
                strdup(
                    "SWIFT_BACKTRACE=interactive=no,color=no,threads=crashed,registers=none,images=none,limit=10,top=0")
            )
        }
        return entries
    }
}
