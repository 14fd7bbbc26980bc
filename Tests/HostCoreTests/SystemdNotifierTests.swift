import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HostCore

/// `NOTIFY_SOCKET`: the messages arrive, in order, at a real datagram socket standing in for systemd.
@Suite struct SystemdNotifierTests {
    /// A bound `AF_UNIX`/`SOCK_DGRAM` socket, as systemd listens on `NOTIFY_SOCKET`.
    final class FakeSystemd {
        let descriptor: Int32

        /// Listens on `path`, or on the abstract name when `path` starts with `@`.
        init(path: String) throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw TestFailure("socket: errno \(errno)") }
            let bound = try UnixSocketAddress(path, allowingAbstract: true).withSocketAddress {
                bind(descriptor, $0, $1)
            }
            guard bound == 0 else { throw TestFailure("bind \(path): errno \(errno)") }
        }

        deinit { close(descriptor) }

        /// The next datagram, or nil after `timeout` seconds.
        func receive(timeout: Double = 10) -> String? {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(descriptor, &buffer, buffer.count, 0)
            return n < 0 ? nil : String(decoding: buffer[..<n], as: UTF8.self)
        }
    }

    private func notifier(_ variables: [String: String], pid: pid_t = getpid()) throws -> SystemdNotifier? {
        try SystemdNotifier.fromEnvironment({ variables[$0] }, pid: pid)
    }

    @Test func theMessages_arriveInOrder_atAPathSocket() throws {
        let scratch = try Scratch()
        let path = scratch.file("notify")
        let systemd = try FakeSystemd(path: path)
        let notifier = try #require(try notifier(["NOTIFY_SOCKET": path]))

        // What the host sends over its life: start-up, a reload, the watchdog, shutdown.
        for message in [
            SystemdNotifier.Message.ready, .reloading, .ready, .watchdog, .status("2 services\nactive"), .stopping,
        ] {
            try notifier.send(message)
        }
        #expect(systemd.receive() == "READY=1")
        let reloading = try #require(systemd.receive())
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        #expect(UInt64(reloading.split(separator: "=").last!) != nil)
        #expect(systemd.receive() == "READY=1")
        #expect(systemd.receive() == "WATCHDOG=1")
        #expect(systemd.receive() == "STATUS=2 services active")
        #expect(systemd.receive() == "STOPPING=1")
        #expect(systemd.receive(timeout: 0.05) == nil)
    }

    @Test func anAbstractSocket_isReachedThroughItsAtName() throws {
        let name = "@servicehost-test-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        let systemd = try FakeSystemd(path: name)
        let notifier = try #require(try notifier(["NOTIFY_SOCKET": name]))
        try notifier.send(.ready)
        #expect(systemd.receive() == "READY=1")
    }

    @Test func withoutNotifySocket_thereIsNoNotifier() throws {
        #expect(try notifier([:]) == nil)
        #expect(try notifier(["NOTIFY_SOCKET": ""]) == nil)
    }

    @Test func sendingFromManyThreadsAtOnce_deliversEveryDatagramWhole() throws {
        let scratch = try Scratch()
        let path = scratch.file("notify")
        let systemd = try FakeSystemd(path: path)
        let notifier = try SystemdNotifier(socketPath: path)
        let threads = 8
        let each = 50
        let failures = Atomic(0)
        // The kernel queues only a few datagrams; senders block until the listener reads.
        let senders = Thread {
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<each {
                    do { try notifier.send(text: "STATUS=thread \(thread) message \(index)") } catch {
                        failures.add(1, ordering: .relaxed)
                    }
                }
            }
        }
        senders.start()
        var received: [String] = []
        while received.count < threads * each, let text = systemd.receive() { received.append(text) }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(received.count == threads * each)
        #expect(Set(received).count == threads * each)
        #expect(received.allSatisfy { $0.hasPrefix("STATUS=thread ") })
    }

    @Test func nobodyListening_isAnErrorNamingTheSocket() throws {
        let scratch = try Scratch()
        let path = scratch.file("absent")
        let notifier = try SystemdNotifier(socketPath: path)
        #expect(throws: SystemError(operation: "sendto", path: path, errno: ENOENT)) { try notifier.send(.ready) }
    }

    @Test func anUnusableAddress_isRefusedAtCreation() throws {
        #expect(throws: SystemError(operation: "connect", path: "vsock:2:1234", errno: EAFNOSUPPORT)) {
            try SystemdNotifier(socketPath: "vsock:2:1234")
        }
        #expect(throws: SystemError(operation: "connect", path: "relative", errno: EAFNOSUPPORT)) {
            try SystemdNotifier(socketPath: "relative")
        }
        let long = "/" + String(repeating: "x", count: 200)
        #expect(throws: SystemError(operation: "connect", path: long, errno: ENAMETOOLONG)) {
            try SystemdNotifier(socketPath: long)
        }
    }

    // MARK: Watchdog

    @Test func theWatchdogInterval_isHalfOfWatchdogUsec_forTheMainProcessOnly() throws {
        let socket = ["NOTIFY_SOCKET": "/run/systemd/notify"]
        func interval(_ variables: [String: String], pid: pid_t = 4242) throws -> Duration? {
            try notifier(socket.merging(variables) { $1 }, pid: pid)?.watchdogInterval
        }
        #expect(try interval(["WATCHDOG_USEC": "30000000"]) == .seconds(15))
        #expect(try interval(["WATCHDOG_USEC": "3000001"]) == .microseconds(1_500_000))
        #expect(try interval(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"]) == .seconds(15))
        #expect(try interval(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "99"]) == nil)
        #expect(try interval(["WATCHDOG_USEC": "0"]) == nil)
        #expect(try interval(["WATCHDOG_USEC": "soon"]) == nil)
        // Past a day between pings, a day: the timer's arithmetic stays far from overflow.
        #expect(try interval(["WATCHDOG_USEC": "18446744073709551615"]) == .seconds(86_400))
        #expect(try interval(["WATCHDOG_USEC": "172800000002"]) == .seconds(86_400))
        #expect(try interval([:]) == nil)
    }
}
