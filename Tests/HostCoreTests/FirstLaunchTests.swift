import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HostCore

/// First-launch detection (seed 004): the logic over in-memory marks, then the disk-backed marks.
@Suite struct FirstLaunchTests {
    /// Marks kept in memory, counting every read and write: what the seed's closures stand for.
    final class MemoryMarks: Sendable {
        struct State {
            var seen: Set<FirstLaunch.Subject> = []
            var reads = 0
            var writes: [FirstLaunch.Subject] = []
        }

        let state = Locked(State())

        init(seen: Set<FirstLaunch.Subject> = []) { state.withLock { $0.seen = seen } }

        /// A launch of the host over these marks, as the host would make at start-up.
        func launch(_ mode: FirstLaunchMode = .auto, commit: @escaping FirstLaunch.Commit = {}) -> FirstLaunch {
            FirstLaunch(
                mode: mode,
                wasSeen: { subject in
                    self.state.withLock {
                        $0.reads += 1
                        return $0.seen.contains(subject)
                    }
                },
                markSeen: { subject in
                    self.state.withLock {
                        $0.writes.append(subject)
                        $0.seen.insert(subject)
                    }
                }, commit: commit)
        }

        var reads: Int { state.withLock { $0.reads } }
        var writes: [FirstLaunch.Subject] { state.withLock { $0.writes } }
    }

    // MARK: auto

    @Test func auto_withNoMarks_isEveryonesFirstLaunch_untilALaunchSucceeds() throws {
        let marks = MemoryMarks()
        let first = marks.launch()
        #expect(try first.isFirstHostLaunch())
        #expect(try first.isFirstServiceLaunch("test.a"))
        try first.serviceDidLaunch("test.a")
        try first.hostDidLaunch()
        // The answers of this launch stay as they were.
        #expect(try first.isFirstHostLaunch())
        #expect(try first.isFirstServiceLaunch("test.a"))

        let second = marks.launch()
        #expect(try !second.isFirstHostLaunch())
        #expect(try !second.isFirstServiceLaunch("test.a"))
    }

    @Test func auto_aServiceNeverSeenBefore_isOnItsFirstLaunch_inAHostThatIsNot() throws {
        let marks = MemoryMarks(seen: [.host, .service("test.old")])
        let launch = marks.launch()
        #expect(try !launch.isFirstHostLaunch())
        #expect(try !launch.isFirstServiceLaunch("test.old"))
        #expect(try launch.isFirstServiceLaunch("test.new"))
    }

    @Test func auto_aLaunchThatCrashedBeforeSucceeding_leavesTheNextOneFirst() throws {
        let marks = MemoryMarks()
        let crashed = marks.launch()
        #expect(try crashed.isFirstHostLaunch())
        #expect(try crashed.isFirstServiceLaunch("test.a"))
        // No hostDidLaunch, no serviceDidLaunch: the process died here.
        #expect(marks.writes.isEmpty)

        let next = marks.launch()
        #expect(try next.isFirstHostLaunch())
        #expect(try next.isFirstServiceLaunch("test.a"))
    }

    @Test func auto_aServiceWhoseLaunchFailed_staysFirst_whileTheOthersAreMarked() throws {
        let marks = MemoryMarks()
        let launch = marks.launch()
        for id in ["test.ok", "test.failed"] { #expect(try launch.isFirstServiceLaunch(id)) }
        try launch.serviceDidLaunch("test.ok")
        try launch.hostDidLaunch()
        #expect(Set(marks.writes) == [.service("test.ok"), .host])

        let next = marks.launch()
        #expect(try !next.isFirstServiceLaunch("test.ok"))
        #expect(try next.isFirstServiceLaunch("test.failed"))
    }

    @Test func auto_readsEachMarkOnce_andWritesOnlyOnAFirstLaunch() throws {
        let marks = MemoryMarks(seen: [.host])
        let launch = marks.launch()
        for _ in 0..<3 {
            _ = try launch.isFirstHostLaunch()
            _ = try launch.isFirstServiceLaunch("test.a")
        }
        #expect(marks.reads == 2)
        try launch.hostDidLaunch()  // seen before: nothing to write
        try launch.serviceDidLaunch("test.a")
        try launch.serviceDidLaunch("test.a")
        #expect(marks.writes == [.service("test.a")])
    }

    @Test func auto_aBatchOfMarks_isCommittedOnce_withoutTheOnesSeenBefore() throws {
        let marks = MemoryMarks(seen: [.service("test.b")])
        let commits = Locked(0)
        let launch = marks.launch(commit: { commits.withLock { $0 += 1 } })
        try launch.servicesDidLaunch(["test.a", "test.b", "test.c"])
        #expect(marks.writes == [.service("test.a"), .service("test.c")])
        #expect(commits.withLock { $0 } == 1)
        // Nothing new to mark: nothing to commit.
        try launch.servicesDidLaunch(["test.a", "test.b"])
        #expect(commits.withLock { $0 } == 1)
    }

    @Test func auto_markingBeforeAsking_stillAnswersFirstForThisLaunch() throws {
        let marks = MemoryMarks()
        let launch = marks.launch()
        try launch.serviceDidLaunch("test.a")
        #expect(marks.writes == [.service("test.a")])
        #expect(try launch.isFirstServiceLaunch("test.a"))
    }

    @Test func auto_aStorageError_reachesTheCaller() {
        let failure = StorageError(
            path: "/state/launched",
            code: .system(SystemError(operation: "stat", path: "/state/launched", errno: EACCES)))
        let launch = FirstLaunch(mode: .auto, wasSeen: { _ throws(StorageError) in throw failure }, markSeen: { _ in })
        #expect(throws: failure) { try launch.isFirstHostLaunch() }
    }

    // MARK: always and never

    @Test func always_isEveryonesFirstLaunch_andTouchesNoMark() throws {
        let marks = MemoryMarks(seen: [.host, .service("test.a")])
        for launch in [marks.launch(.always), FirstLaunch.alwaysFirst()] {
            #expect(try launch.isFirstHostLaunch())
            #expect(try launch.isFirstServiceLaunch("test.a"))
            try launch.hostDidLaunch()
            try launch.serviceDidLaunch("test.a")
        }
        #expect(marks.reads == 0 && marks.writes.isEmpty)
    }

    @Test func never_isNobodysFirstLaunch_andTouchesNoMark() throws {
        let marks = MemoryMarks()
        for launch in [marks.launch(.never), FirstLaunch.neverFirst()] {
            #expect(try !launch.isFirstHostLaunch())
            #expect(try !launch.isFirstServiceLaunch("test.a"))
            try launch.hostDidLaunch()
            try launch.serviceDidLaunch("test.a")
        }
        #expect(marks.reads == 0 && marks.writes.isEmpty)
        // So a later automatic launch is still truthful.
        #expect(try marks.launch().isFirstHostLaunch())
    }

    @Test func theModes_haveTheirCommandLineNames() {
        #expect(FirstLaunchMode.allCases.map(\.rawValue) == ["auto", "always", "never"])
        #expect(FirstLaunchMode(rawValue: "always") == .always)
    }

    // MARK: On disk

    @Test func onDisk_theMarksPersistInTheStateDirectory() throws {
        let scratch = try Scratch()
        let path = scratch.file("state")
        do {
            let launch = try FirstLaunch(mode: .auto, stateDirectory: StateDirectory(path: path))
            #expect(try launch.isFirstHostLaunch())
            #expect(try launch.isFirstServiceLaunch("test.a"))
            try launch.serviceDidLaunch("test.a")
            try launch.hostDidLaunch()
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path + "/launched").sorted() == ["host", "test.a"])
        // A mark whose write a crash interrupted is only a temporary file, never read as a mark,
        // and removed once the next start is active (removeInterruptedMarks).
        // A name only part of the temporaries' prefix is not one (the prefix is matched in
        // the listing's own bytes).
        try scratch.write("state/launched/.tmp-5eed", [], mode: 0o600)
        try scratch.write("state/launched/.tmp", [], mode: 0o600)
        let next = try FirstLaunch(mode: .auto, stateDirectory: StateDirectory(path: path))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: path + "/launched").sorted() == [
                ".tmp", ".tmp-5eed", "host", "test.a",
            ])
        next.removeInterruptedMarks()
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: path + "/launched").sorted() == [
                ".tmp", "host", "test.a",
            ])
        #expect(try !next.isFirstHostLaunch())
        #expect(try !next.isFirstServiceLaunch("test.a"))
        #expect(try next.isFirstServiceLaunch("test.b"))
    }

    @Test func onDisk_aServiceFirstAskedAfterTheFolderWasListed_isMarkedForTheNextStart() throws {
        let scratch = try Scratch()
        let path = scratch.file("state")
        do {
            let earlier = try FirstLaunch(mode: .auto, stateDirectory: StateDirectory(path: path))
            try earlier.serviceDidLaunch("test.old")
        }
        do {
            let launch = try FirstLaunch(mode: .auto, stateDirectory: StateDirectory(path: path))
            // The first questions are a `stat` each; past `listedAfter` the folder is listed
            // once and the later ones are answered from that listing.
            #expect(try launch.isFirstHostLaunch())
            for index in 0..<FirstLaunch.listedAfter {
                #expect(try launch.isFirstServiceLaunch("test.filler\(index)"))
            }
            #expect(try !launch.isFirstServiceLaunch("test.old"))
            try launch.hostDidLaunch()
            // A service met later (a reload added it) is first, and stays first for this process.
            #expect(try launch.isFirstServiceLaunch("test.new"))
            try launch.servicesDidLaunch(["test.new", "test.old"])
            #expect(try launch.isFirstServiceLaunch("test.new"))
        }
        let next = try FirstLaunch(mode: .auto, stateDirectory: StateDirectory(path: path))
        #expect(try !next.isFirstHostLaunch())
        #expect(try !next.isFirstServiceLaunch("test.new"))
        #expect(try !next.isFirstServiceLaunch("test.old"))
        #expect(try next.isFirstServiceLaunch("test.other"))
    }

    /// A launch that announces few questions gets a `stat` each, past `listedAfter` too (the
    /// listing costs the whole folder, every plugin set's marks); one that announces many lists
    /// the folder at its first question. Told apart by a mark file put in the folder between two
    /// questions: a `stat` sees it, a listing made before does not.
    @Test func onDisk_aLaunchOfFewServices_statsEachMark_andOneOfManyListsAtOnce() throws {
        let scratch = try Scratch()
        let path = scratch.file("state")
        do {
            let launch = try FirstLaunch(mode: .auto, stateDirectory: StateDirectory(path: path))
            launch.willAsk(FirstLaunch.listedAfter + 8)
            for index in 0..<FirstLaunch.listedAfter + 4 {
                #expect(try launch.isFirstServiceLaunch("test.filler\(index)"))
            }
            try scratch.write("state/launched/test.late", [], mode: 0o600)
            #expect(try !launch.isFirstServiceLaunch("test.late"))
        }
        let launch = try FirstLaunch(mode: .auto, stateDirectory: StateDirectory(path: path))
        launch.willAsk(FirstLaunch.statsAtMost + 1)
        #expect(try launch.isFirstServiceLaunch("test.one"))
        try scratch.write("state/launched/test.later", [], mode: 0o600)
        #expect(try launch.isFirstServiceLaunch("test.later"))
        #expect(try !launch.isFirstServiceLaunch("test.late"))
    }

    @Test func onDisk_alwaysAndNever_doNotCreateTheMarksFolder() throws {
        let scratch = try Scratch()
        let path = scratch.file("state")
        // One StateDirectory for both: it holds the directory's lock for as long as it lives.
        let directory = try StateDirectory(path: path)
        for mode in [FirstLaunchMode.always, .never] {
            let launch = try FirstLaunch(mode: mode, stateDirectory: directory)
            #expect(try launch.isFirstHostLaunch() == (mode == .always))
            try launch.hostDidLaunch()
        }
        #expect(!FileManager.default.fileExists(atPath: path + "/launched"))
    }

    @Test func onDisk_aServiceIDThatCouldLeaveTheFolder_isRefused() throws {
        let scratch = try Scratch()
        let launch = try FirstLaunch(mode: .auto, stateDirectory: StateDirectory(path: scratch.file("state")))
        for id in ["../host", "..", "a/b.c", "host"] {
            #expect { try launch.isFirstServiceLaunch(id) } throws: { error in
                guard case .invalidServiceID = (error as? StorageError)?.code else { return false }
                return true
            }
        }
    }
}
