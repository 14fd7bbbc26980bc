import Testing

@testable import HostCore

/// The sd-bus binding's errors (issue 38): a missing library or function is `dlerror()`'s text
/// naming the file, an errno stays an errno, a peer's D-Bus error keeps its name and message.
@Suite struct SDBusTests {
    @Test func aMissingLibrary_isDlerrorsTextNamingTheFile() {
        #expect {
            try SDBusLibrary(path: "libsystemd-absent.so.0")
        } throws: { error in
            guard let error = error as? SDBusError, case .library(let text) = error.reason else { return false }
            return error.operation == "dlopen(libsystemd-absent.so.0)" && text.contains("libsystemd-absent.so.0")
        }
    }

    @Test func aLibraryWithoutTheFunctions_namesTheFirstMissing() {
        // libc is there, and has no sd-bus.
        #expect {
            try SDBusLibrary(path: "libc.so.6")
        } throws: { error in
            (error as? SDBusError)?.operation == "dlsym(sd_bus_open_system)"
        }
    }

    @Test func theCausesReadAsTheySay() {
        let system = SDBusError(operation: "sd_bus_open_system", reason: .system(errno: 2))
        #expect(system.errno == 2)
        #expect(system.description == "sd_bus_open_system failed: No such file or directory")
        let peer = SDBusError(
            operation: "org.freedesktop.login1.Manager.Inhibit",
            reason: .peer(name: "org.freedesktop.DBus.Error.AccessDenied", message: "no"))
        #expect(peer.errno == nil)
        #expect(
            peer.description
                == "org.freedesktop.login1.Manager.Inhibit failed: org.freedesktop.DBus.Error.AccessDenied: no")
    }

    @Test func theSystemLibrary_resolvesEveryFunctionItDeclares() throws {
        // The machine's own libsystemd (Debian's libsystemd0, present wherever systemd is).
        if case .failure(let error) = SDBusLibrary.shared, case .library = error.reason {
            return  // not on this machine: the host runs without it, as SystemEventsTests shows
        }
        _ = try SDBusLibrary.shared.get()
    }
}
