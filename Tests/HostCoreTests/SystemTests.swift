import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HostCore

/// The system plumbing: the EINTR retry, descriptors that close once and never leak into a
/// worker, and socket addresses checked against `sun_path`.
@Suite struct SystemTests {
    // MARK: retryingOnInterrupt

    @Test func aCallFailingWithEINTR_isCalledAgain_untilItAnswers() throws {
        var calls = 0
        let result = try retryingOnInterrupt("read", "fake") { () -> Int in
            calls += 1
            if calls <= 2 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(result == 42)
        #expect(calls == 3)
    }

    @Test func anyOtherFailure_isThrownAtOnce_withItsErrnoAndWhatItWasAbout() {
        var calls = 0
        #expect(throws: SystemError(operation: "flock", path: "/some/dir", errno: EWOULDBLOCK)) {
            try retryingOnInterrupt("flock", "/some/dir") { () -> Int32 in
                calls += 1
                errno = EWOULDBLOCK
                return -1
            }
        }
        #expect(calls == 1)
    }

    /// What the reader thread of the test below shares with the test.
    private final class Reader: Sendable {
        let thread = Atomic<UInt>(0)
        let attempts = Atomic<Int>(0)
        let result = Locked<Result<Int, SystemError>?>(nil)
    }

    @Test func aReadInterruptedByASignal_withoutSARestart_isCalledAgain() throws {
        // A handler without SA_RESTART: the kernel then fails a blocked read with EINTR.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0
        sigemptyset(&action.sa_mask)
        var previous = sigaction()
        sigaction(SIGUSR1, &action, &previous)
        defer { sigaction(SIGUSR1, &previous, nil) }

        let pipe = try FileDescriptor.pipe(path: "test pipe")
        let reader = Reader()
        Thread {
            // Threads made from the test's threads start with signals blocked (Dispatch's do).
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            reader.thread.store(UInt(pthread_self()), ordering: .releasing)
            var byte: UInt8 = 0
            let result = Result { () throws(SystemError) in
                try retryingOnInterrupt("read", "test pipe") {
                    reader.attempts.add(1, ordering: .releasing)
                    return read(pipe.first.rawValue, &byte, 1)
                }
            }
            reader.result.withLock { $0 = result.map { $0 == 1 ? Int(byte) : -1 } }
        }.start()

        // Signal the reader until it has called read a second time: the first was interrupted.
        let interrupted = eventually {
            let thread = reader.thread.load(ordering: .acquiring)
            if thread != 0 { pthread_kill(pthread_t(thread), SIGUSR1) }
            return reader.attempts.load(ordering: .acquiring) >= 2
        }
        #expect(interrupted)
        var byte: UInt8 = 42
        #expect(write(pipe.second.rawValue, &byte, 1) == 1)
        #expect(eventually { reader.result.withLock { $0 != nil } })
        #expect(reader.result.withLock { try? $0?.get() } == 42)
    }

    // MARK: FileDescriptor

    /// Whether `number` is an open descriptor of this process.
    private func isOpen(_ number: Int32) -> Bool { fcntl(number, F_GETFD) != -1 }

    /// The inode `number` is open on.
    private func inode(_ number: Int32) -> ino_t? {
        var status = stat()
        return fstat(number, &status) == 0 ? status.st_ino : nil
    }

    /// An owner as the host's are: a final class holding the descriptor in a `let`.
    private final class Owner {
        let descriptor: FileDescriptor
        init(_ descriptor: consuming FileDescriptor) { self.descriptor = descriptor }
    }

    @Test func aDescriptor_closesOnceWithItsOwner_andItsNumberIsThenFreeForAnotherFile() throws {
        let scratch = try Scratch()
        let first = try scratch.write("first", [1])
        let second = try scratch.write("second", [2])
        // Numbered near the top of the descriptor limit, far above what the tests running beside
        // this one are given (the lowest free number; the control-load tests hold hundreds of
        // sockets at once, and took 1000), so only this test can take the number again.
        var owner: Owner? = Owner(
            try FileDescriptor.open(first, O_RDONLY).duplicate(atLeast: Self.highNumber, path: first))
        let number = owner!.descriptor.rawValue
        let firstInode = inode(number)
        owner = nil
        #expect(!isOpen(number))

        let reused = try FileDescriptor.open(second, O_RDONLY).duplicate(atLeast: number, path: second)
        #expect(reused.rawValue == number)
        #expect(inode(number) != firstInode)
        // close() closes it, and the value cannot be closed or used again after it.
        try reused.close(second)
        #expect(!isOpen(number))
    }

    /// A descriptor number near the top of this process's limit (at least 1000).
    private static let highNumber: Int32 = {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1000 }
        return Int32(clamping: max(1000, min(Int(clamping: limit.rlim_cur), 1 << 20) - 16))
    }()

    @Test func aReleasedDescriptor_isLeftOpen_forWhatTookItOver() throws {
        let raw = try FileDescriptor.open("/dev/null", O_RDONLY).duplicate(atLeast: 1000, path: "/dev/null").release()
        #expect(isOpen(raw))
        #expect(close(raw) == 0)
    }

    @Test func everyDescriptorTheHostCreates_isCloseOnExecFromTheStart() throws {
        func closeOnExec(_ number: Int32) -> Bool { fcntl(number, F_GETFD) & FD_CLOEXEC != 0 }
        let scratch = try Scratch()
        let file = try FileDescriptor.open(scratch.file("file"), O_WRONLY | O_CREAT, mode: 0o600)
        #expect(closeOnExec(file.rawValue))
        let duplicate = try file.duplicate(atLeast: 100, path: "file")
        #expect(closeOnExec(duplicate.rawValue))
        let pipe = try FileDescriptor.pipe(path: "pipe")
        #expect(closeOnExec(pipe.first.rawValue) && closeOnExec(pipe.second.rawValue))
        let pair = try FileDescriptor.socketPair(path: "pair")
        #expect(closeOnExec(pair.first.rawValue) && closeOnExec(pair.second.rawValue))
        let datagram = try FileDescriptor.socket(SOCK_DGRAM, path: "datagram")
        #expect(closeOnExec(datagram.rawValue))
        let address = try UnixSocketAddress(scratch.file("socket"))
        let listener = try UnixSocket.listen(address)
        let client = try UnixSocket.connect(address)
        let accepted = try listener.accept(path: address.path)
        #expect(closeOnExec(listener.rawValue) && closeOnExec(client.rawValue) && closeOnExec(accepted.rawValue))
        let directory = try DirectoryHandle.open(scratch.path)
        #expect(closeOnExec(directory.descriptor.rawValue))
        let readOnly = try ReadOnlyFile(path: scratch.file("file"))
        #expect(closeOnExec(readOnly.descriptor.rawValue))
    }

    // MARK: UnixSocketAddress

    @Test func aSocketPath_fitsInSunPath_upTo107Bytes_andAnAbstractName_upTo108() throws {
        let limit = "/" + String(repeating: "p", count: 106)
        #expect(try UnixSocketAddress(limit).path == limit)
        #expect(throws: UnixSocketAddress.PathError(path: limit + "p", code: .tooLong(bytes: 108, limit: 107))) {
            try UnixSocketAddress(limit + "p")
        }
        let abstract = "@" + String(repeating: "a", count: 107)
        #expect(try UnixSocketAddress(abstract, allowingAbstract: true).path == abstract)
        #expect(throws: UnixSocketAddress.PathError(path: abstract + "a", code: .tooLong(bytes: 109, limit: 108))) {
            try UnixSocketAddress(abstract + "a", allowingAbstract: true)
        }
        // Without allowingAbstract, "@" is an ordinary first byte of a relative path.
        #expect(throws: UnixSocketAddress.PathError(path: abstract, code: .tooLong(bytes: 108, limit: 107))) {
            try UnixSocketAddress(abstract)
        }
        #expect(throws: UnixSocketAddress.PathError(path: "/run/a\u{0}b", code: .containsNUL)) {
            try UnixSocketAddress("/run/a\u{0}b")
        }
    }

    @Test func aTooLongSocketPath_isRefused_namingThePathAndTheLimit() {
        let long = "/" + String(repeating: "x", count: 199)
        do {
            _ = try UnixSocketAddress(long)
            Issue.record("a 200-byte path was accepted")
        } catch {
            #expect(error.description == "socket path \(long) is 200 bytes; the limit is 107")
            #expect(error.errno == ENAMETOOLONG)
        }
    }

    @Test func anAbstractAddress_reachesAListenerOnTheSameName() throws {
        let name = "@servicehost-test-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        let address = try UnixSocketAddress(name, allowingAbstract: true)
        let listener = try UnixSocket.listen(address)
        let client = try UnixSocket.connect(address)
        let accepted = try listener.accept(path: name)
        try client.sendAll(Array("ping".utf8), path: name)
        #expect(try accepted.read(upTo: 16, path: name) == Array("ping".utf8))
    }
}
