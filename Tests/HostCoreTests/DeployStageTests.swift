import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The first step of a deploy (issue 40 item 3): a set is staged as a new generation under the
/// state directory and verified there, and a set with a file the host would refuse leaves no
/// generation behind.
@Suite(.timeLimit(.minutes(10))) struct DeployStageTests {
    let scratch: Scratch
    let set: String
    let state: String

    init() throws {
        scratch = try Scratch()
        set = try scratch.folder("set")
        state = try scratch.folder("state", mode: 0o700)
    }

    @discardableResult
    private func probe(_ name: String, _ id: String) throws -> String {
        try Command.compileC(
            Repository.fixture("CPlugins/probe.c"), to: set + "/\(name).so", defines: ["PROBE_ID=\"\(id)\""])
    }

    private func generations() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: DeployStage.generations(in: state))) ?? []).sorted()
    }

    @Test func aGoodSet_becomesTheNextGeneration_withItsFilesAndOrder() throws {
        try probe("a", "test.a")
        try probe("b", "test.b")
        try Data("not part of a set".utf8).write(to: URL(fileURLWithPath: set + "/notes.txt"))
        let first = try DeployStage.stage(from: set, stateDirectory: state, configurationPath: nil)
        #expect(first.generation == 1 && first.order == ["test.a", "test.b"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: first.directory).sorted() == ["a.so", "b.so"])
        let second = try DeployStage.stage(from: set, stateDirectory: state, configurationPath: nil)
        #expect(second.generation == 2 && generations() == ["1", "2"])
    }

    private func inode(_ path: String) throws -> (inode: UInt64, mode: Int) {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (
            (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0,
            (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        )
    }

    @Test func anUnchangedFile_isLinkedToTheGenerationInForce_aChangedOneCopied_allReadOnly() throws {
        try probe("a", "test.a")
        try probe("b", "test.b")
        let first = try DeployStage.stage(from: set, stateDirectory: state, configurationPath: nil)
        #expect(first.copied == ["a.so", "b.so"] && first.linked == [])
        // b changes; a keeps its bytes (a rebuild: a new inode in the set).
        try Command.compileC(
            Repository.fixture("CPlugins/probe.c"), to: set + "/b.so",
            defines: ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"0.2.0\""])
        let copy = set + "/a.so.new"
        try FileManager.default.copyItem(atPath: set + "/a.so", toPath: copy)
        #expect(rename(copy, set + "/a.so") == 0)
        let second = try DeployStage.stage(
            from: set, stateDirectory: state, configurationPath: nil, inForce: first.directory)
        #expect(second.linked == ["a.so"] && second.copied == ["b.so"], "\(second.linked) \(second.copied)")
        #expect(try inode(second.directory + "/a.so").inode == inode(first.directory + "/a.so").inode)
        #expect(try inode(second.directory + "/b.so").inode != inode(first.directory + "/b.so").inode)
        // Nothing writes through a link: every staged file is read-only.
        for file in ["a.so", "b.so"] {
            #expect(try inode(first.directory + "/" + file).mode == 0o444)
            #expect(try inode(second.directory + "/" + file).mode == 0o444)
        }
        // A writable file in force (an older host's) is copied, never linked.
        #expect(chmod(second.directory + "/b.so", 0o644) == 0)
        let third = try DeployStage.stage(
            from: set, stateDirectory: state, configurationPath: nil, inForce: second.directory)
        #expect(third.linked == ["a.so"] && third.copied == ["b.so"], "\(third.linked) \(third.copied)")
    }

    @Test func aHandedOverFolder_hasItsReadOnlyFilesLinked_notCopied() throws {
        try probe("a", "test.a")
        try probe("b", "test.b")
        #expect(chmod(set + "/a.so", 0o444) == 0)  // b stays writable
        // A folder others can open is not handed over: everything is copied.
        #expect(chmod(set, 0o755) == 0)
        let shared = try DeployStage.stage(from: set, stateDirectory: state, configurationPath: nil)
        #expect(shared.copied == ["a.so", "b.so"] && shared.taken == [], "\(shared.copied) \(shared.taken)")
        #expect(try inode(shared.directory + "/a.so").inode != inode(set + "/a.so").inode)
        // Only the host's user can open it (as the MQTT bridge unpacks a bundle): the read-only
        // file is linked, the writable one copied.
        #expect(chmod(set, 0o700) == 0)
        let handed = try DeployStage.stage(from: set, stateDirectory: state, configurationPath: nil)
        #expect(handed.taken == ["a.so"] && handed.copied == ["b.so"], "\(handed.taken) \(handed.copied)")
        #expect(try inode(handed.directory + "/a.so").inode == inode(set + "/a.so").inode)
        #expect(try inode(handed.directory + "/a.so").mode == 0o444 && inode(handed.directory + "/b.so").mode == 0o444)
    }

    @Test func aSetWithARefusedFile_isRefusedNamingIt_andLeavesNoGeneration() throws {
        let bad = try probe("a", "test.a")
        try probe("b", "test.b")
        let pins = #"{"services": {"test.a": {"sha256": "\#(String(repeating: "0", count: 64))"}}}"#
        try Data(pins.utf8).write(to: URL(fileURLWithPath: set + "/services.json"))
        do {
            _ = try DeployStage.stage(from: set, stateDirectory: state, configurationPath: nil)
            Issue.record("a set with a refused file was staged")
        } catch {
            #expect(error.problems.map(\.code) == ["digest-mismatch"])
            #expect(error.problems.first?.file?.hasSuffix("/staging-1/a.so") == true, "\(error)")
            _ = bad
        }
        #expect(generations().isEmpty)
    }

    @Test func aFolderWithoutPlugins_isRefused() throws {
        #expect(throws: DeployStage.Refusal.self) {
            try DeployStage.stage(from: set, stateDirectory: state, configurationPath: nil)
        }
        #expect(generations().isEmpty)
    }

    @Test func aHistoryLineCutShort_isSkipped_andTheNextLineStillReads() throws {
        try FileManager.default.createDirectory(
            atPath: DeployStage.generations(in: state), withIntermediateDirectories: true)
        let history = DeployHistory(stateDirectory: state)
        try history.append(.init(generation: 1, previous: nil, outcome: .applied))
        // A host killed in the middle of its next line.
        let handle = try #require(FileHandle(forWritingAtPath: history.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"generation":2,"prev"#.utf8))
        try handle.close()
        try history.append(.init(generation: 2, previous: 1, outcome: .rolledBack, reason: "notAccepted"))
        #expect(
            history.entries() == [
                .init(generation: 1, previous: nil, outcome: .applied),
                .init(generation: 2, previous: 1, outcome: .rolledBack, reason: "notAccepted"),
            ])
    }
}
