import Foundation
import TestSupport
import Testing

@testable import HostCore

/// Where the state lives, how it is created, and the directories it refuses.
@Suite struct StateDirectoryTests {
    let scratch: Scratch

    init() throws { scratch = try Scratch() }

    private func mode(_ path: String) -> mode_t {
        var st = stat()
        stat(path, &st)
        return st.st_mode & 0o7777
    }

    @Test func opening_createsTheDirectoryAndItsParentsPrivate() throws {
        let path = scratch.file("a/b/state")
        let state = try StateDirectory(path: path)
        #expect(state.path == path)
        #expect(mode(scratch.file("a")) == 0o700)
        #expect(mode(path) == 0o700)
        #expect(mode(path + "/services") == 0o700)
        let store = try state.store(for: "test.mode")
        #expect(mode(store.path) == 0o700)
        try store.set("k", to: [1])
        #expect(mode(store.path + "/k") == 0o600)
    }

    @Test func anExistingDirectoryWritableByOthers_isRefused() throws {
        let path = try scratch.folder("open", mode: 0o777)
        chmod(path, 0o777)  // mkdir's mode passes through the umask
        #expect {
            try StateDirectory(path: path)
        } throws: { error in
            guard let error = error as? StorageError, case .insecure(let detail) = error.code else { return false }
            return detail == "directory \(path) is writable by other users (mode 0777)"
                && error.description.hasSuffix(
                    "(run chmod go-w on it, choose another --state-dir, or pass --allow-insecure-plugins)")
        }
    }

    @Test func anExistingDirectoryWritableByOthers_opensWithTheEscape() throws {
        let path = try scratch.folder("open", mode: 0o777)
        chmod(path, 0o777)
        _ = try StateDirectory(path: path, allowInsecure: true)
    }

    @Test func aServicesFolderWritableByItsGroup_isRefused() throws {
        _ = try StateDirectory(path: scratch.file("state"))
        chmod(scratch.file("state/services"), 0o770)
        #expect { try StateDirectory(path: scratch.file("state")) } throws: { error in
            guard let error = error as? StorageError, case .insecure = error.code else { return false }
            return error.path == scratch.file("state/services")
        }
    }

    @Test func aSecondOpening_isRefusedWhileTheFirstLives() throws {
        let path = scratch.file("state")
        var first: StateDirectory? = try StateDirectory(path: path)
        #expect(throws: StorageError(path: path, code: .inUse)) { try StateDirectory(path: path) }
        #expect(first != nil)
        first = nil
        _ = try StateDirectory(path: path)
    }

    @Test func aStoreKeepsTheDirectoryLocked_afterTheStateDirectoryObjectIsGone() throws {
        let path = scratch.file("state")
        let store = try StateDirectory(path: path).store(for: "test.lock")
        #expect(throws: StorageError(path: path, code: .inUse)) { try StateDirectory(path: path) }
        withExtendedLifetime(store) {}
    }

    @Test func theSameServiceID_getsTheSameStore() throws {
        let state = try StateDirectory(path: scratch.file("state"))
        #expect(try state.store(for: "test.same") === state.store(for: "test.same"))
    }

    @Test func aFileInPlaceOfTheDirectory_isAnErrorNamingIt() throws {
        let path = try scratch.write("state", [1])
        #expect { try StateDirectory(path: path) } throws: { error in
            (error as? StorageError)?.errno == ENOTDIR && (error as? StorageError)?.path == path
        }
    }

    // MARK: The default location

    @Test func theDefaultPath_followsXDGStateHome_thenHome() throws {
        func path(_ variables: [String: String]) throws -> String {
            try StateDirectory.defaultPath(environment: { variables[$0] })
        }
        #expect(try path(["XDG_STATE_HOME": "/xdg", "HOME": "/home/u"]) == "/xdg/servicehost")
        #expect(try path(["XDG_STATE_HOME": "/xdg/", "HOME": "/home/u"]) == "/xdg/servicehost")
        // The XDG spec: a relative XDG_STATE_HOME is invalid and ignored.
        #expect(try path(["XDG_STATE_HOME": "relative", "HOME": "/home/u"]) == "/home/u/.local/state/servicehost")
        #expect(try path(["XDG_STATE_HOME": "", "HOME": "/home/u"]) == "/home/u/.local/state/servicehost")
        // Without either, the password database's home.
        #expect(try path([:]).hasSuffix("/.local/state/servicehost"))
    }
}
