import Glibc

/// `host __worker PATH`: a worker process. Internal: the host starts it with its channel on
/// descriptor 3, and it lives until the host closes the channel (or dies, which closes it).
public enum WorkerMain {
    /// The subcommand that runs a worker (the `host` binary re-executed).
    public static let subcommand = WorkerSpawn.subcommand
    /// The status a worker exits with when its channel to the host fails (not end of file).
    static let lostChannelStatus: Int32 = 71

    /// Runs the worker; never returns.
    @MainActor
    public static func run() -> Never {
        let fd = WorkerSpawn.channelDescriptor
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else {
            fail("host \(subcommand) is internal: the host starts it, with its channel on descriptor \(fd)", status: 2)
        }
        // Not inherited by programs a plugin starts (the host's dup2 cleared close-on-exec so
        // that this process could inherit it); and the host's SIGTERM/SIGINT shutdown reaches
        // services through the host, in order, never as a signal to the worker.
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        // A sandboxed worker (issue 43): no new privileges and its seccomp filter, before it greets
        // the host, which only then asks it to load the plugin.
        let arguments = CommandLine.arguments
        if let index = arguments.firstIndex(of: WorkerSpawn.syscallsOption) {
            guard index + 1 < arguments.count, let profile = Sandbox.SyscallProfile(rawValue: arguments[index + 1])
            else { fail("\(WorkerSpawn.syscallsOption): expected a seccomp profile", status: 2) }
            do throws(SystemError) { try SyscallFilter.install(profile) } catch {
                fail("cannot enter its sandbox: \(error)")
            }
        }
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let channel = FrameChannel(socket: FileDescriptor(taking: fd))
        let inbound = WorkerInbound(channel: channel)
        let session = WorkerSession(channel: channel, calls: PendingCalls(channel: channel, inbound: inbound))
        // The host's requests are carried out here, on the main thread, in the order they came;
        // replies to the services' own requests too (host.h: their reply runs on the main thread).
        inbound.setHandler { frame in
            do throws(WireError) {
                switch frame.type {
                case .requestReply: try WorkerRequests.shared.deliver(frame)
                case .taskExpired: try WorkerTasks.shared.expire(frame)
                default: session.handle(frame)
                }
            } catch {
                fail("the host's \(frame.type) frame: \(error)")
            }
        }
        var hello = WireWriter()
        hello.u16(Wire.version)
        hello.u32(UInt32(bitPattern: getpid()))
        do { try channel.send(&hello, .hello) } catch { fail("cannot greet the host: \(error)") }
        // The channel is read on the main thread's loop: an event wakes this thread only.
        let watch = MainLoop.shared.watch(fd, name: "the worker channel")
        watch.setHandler { MainActor.assumeIsolated { inbound.serve() } }
        do { try watch.resume() } catch { fail("cannot watch its channel: \(error)") }
        do { try MainLoop.shared.run() } catch { fail("\(error)") }
    }

    /// Says why on stderr (the host logs the worker's output) and exits.
    nonisolated static func fail(_ message: String, status: Int32 = 70) -> Never {
        let line = "host \(subcommand): \(message)\n"
        _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        _exit(status)
    }
}
