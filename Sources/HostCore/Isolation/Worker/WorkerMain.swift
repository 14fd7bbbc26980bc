import Dispatch
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
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let channel = FrameChannel(socket: FileDescriptor(taking: fd))
        let calls = PendingCalls(channel: channel)
        let session = WorkerSession(channel: channel, calls: calls)
        var hello = WireWriter()
        hello.u16(Wire.version)
        hello.u32(UInt32(bitPattern: getpid()))
        do { try channel.send(&hello, .hello) } catch { fail("cannot greet the host: \(error)") }
        do { try DetachedThread.start("reader thread") { read(channel, calls, session) } } catch {
            fail("cannot start its \(error)")
        }
        do { try MainLoop.shared.run() } catch { fail("\(error)") }
    }

    /// The reader: replies wake the plugin's waiting calls; requests go to the main thread in
    /// order. End of file means the host is gone or done: the worker exits at once.
    private nonisolated static func read(_ channel: FrameChannel, _ calls: PendingCalls, _ session: WorkerSession) {
        var decoder = FrameDecoder()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        while true {
            let n: Int
            do { n = try channel.read(into: buffer) } catch {
                fail("reading the channel: \(error)", status: lostChannelStatus)
            }
            if n == 0 { _exit(0) }
            decoder.append(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            do {
                while let frame = try decoder.next() {
                    if frame.type == .reply {
                        if !calls.deliver(frame) { fail("a reply to no call (\(frame.sequence))") }
                    } else if frame.type == .requestReply {
                        do throws(WireError) { try WorkerRequests.shared.deliver(frame) } catch {
                            fail("the host's request reply: \(error)")
                        }
                    } else {
                        DispatchQueue.main.async { MainActor.assumeIsolated { session.handle(frame) } }
                    }
                }
            } catch {
                fail("the host's frames: \(error)")
            }
        }
    }

    /// Says why on stderr (the host logs the worker's output) and exits.
    nonisolated static func fail(_ message: String, status: Int32 = 70) -> Never {
        let line = "host \(subcommand): \(message)\n"
        _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        _exit(status)
    }
}
