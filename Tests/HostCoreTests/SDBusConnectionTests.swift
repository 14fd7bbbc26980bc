import Glibc
import TestSupport
import Testing

@testable import HostCore

/// The sd-bus binding against a real private `dbus-daemon --session` (dbusmock's notification
/// server on it).
@MainActor
@Suite(.serialized, .enabled(if: DBusMock.installed, "needs dbus-daemon and python3-dbusmock"))
struct SDBusConnectionTests {
    private final class Token {}

    /// A call whose reply is pending when the connection closes is dropped: its callback never
    /// runs and nothing it holds is kept (the box with the callback leaked before).
    @Test func aCallPendingWhenTheConnectionCloses_isDropped_andWhatItHoldsIsFreed() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        // The server holds its answer until a file that never comes.
        try daemon.answerServerInformation(once: scratch.file("never"))
        let previous = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
        setenv("DBUS_SESSION_BUS_ADDRESS", daemon.address, 1)
        defer {
            if let previous {
                setenv("DBUS_SESSION_BUS_ADDRESS", previous, 1)
            } else {
                unsetenv("DBUS_SESSION_BUS_ADDRESS")
            }
        }
        let bus = try SDBusConnection(.user)
        weak var held: Token?
        var called = false
        do {
            let token = Token()
            held = token
            try bus.callAsync(
                destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                interface: "org.freedesktop.Notifications", member: "GetServerInformation"
            ) { _ in
                withExtendedLifetime(token) { called = true }
            }
        }
        #expect(bus.pendingCalls == 1 && held != nil)
        bus.close()
        #expect(bus.pendingCalls == 0)
        #expect(held == nil, "the pending call's callback (and what it captured) outlived the connection")
        #expect(!called)
    }
}
