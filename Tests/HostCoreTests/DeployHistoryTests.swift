import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The deploy history stays bounded (issue 41 follow-up): an append past
/// `DeployHistory.compactionThreshold` rewrites it with the newest lines and every line of the
/// generations that still matter, and generation numbers are never given twice.
@Suite(.timeLimit(.minutes(10))) struct DeployHistoryTests {
    let scratch: Scratch
    let state: String
    let history: DeployHistory

    init() throws {
        scratch = try Scratch()
        state = try scratch.folder("state", mode: 0o700)
        try FileManager.default.createDirectory(
            atPath: DeployStage.generations(in: state), withIntermediateDirectories: true)
        history = DeployHistory(stateDirectory: state)
    }

    /// A fleet bundle's folder, as MQTTBridge names it: the longest `from` lines usually have.
    private func from(_ generation: Int) -> String {
        "/var/lib/servicehost/fleet/servicehost-bundle-" + String(repeating: "\(generation % 10)", count: 64)
            + ".Ab12Cd"
    }

    /// Appends a deploy of `generation` over `previous` that went through probation to `outcome`.
    private func deploy(_ generation: Int, over previous: Int?, _ outcome: DeployHistory.Entry.Outcome = .applied)
        throws
    {
        try history.append(
            .init(generation: generation, previous: previous, outcome: .inProbation, from: from(generation)),
            sync: false)
        try history.append(
            .init(generation: generation, previous: previous, outcome: outcome, from: from(generation)), sync: false)
    }

    private func size() -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: history.path))?[.size] as? Int) ?? -1
    }

    private func folder(_ generation: Int) throws {
        try FileManager.default.createDirectory(
            atPath: DeployStage.generations(in: state) + "/\(generation)", withIntermediateDirectories: false)
    }

    @Test func manyAppends_keepTheHistoryUnderItsBound_withTheNewestLinesWhole() throws {
        var largest = 0
        var compactions = 0
        for generation in 1...2000 {
            let before = size()
            try deploy(generation, over: generation - 1, generation % 3 == 0 ? .rolledBack : .applied)
            largest = max(largest, size())
            if size() < before { compactions += 1 }
        }
        // One line past the threshold at most, before the append that crossed it compacts.
        #expect(largest <= DeployHistory.compactionThreshold, "largest \(largest)")
        #expect(compactions > 0 && compactions < 100, "\(compactions) compactions")
        let entries = history.entries()
        #expect(entries.last == .init(generation: 2000, previous: 1999, outcome: .applied, from: from(2000)))
        #expect(entries.count >= 128, "\(entries.count) lines kept")
        // In order, nothing torn: the newest lines are the last ones appended.
        let newest = entries.suffix(10).map(\.generation)
        #expect(newest == [1996, 1996, 1997, 1997, 1998, 1998, 1999, 1999, 2000, 2000], "\(newest)")
        // No temporary left in the generations folder.
        let names = try FileManager.default.contentsOfDirectory(atPath: DeployStage.generations(in: state))
        #expect(names == [DeployHistory.fileName], "\(names)")
    }

    @Test func aCompaction_keepsTheCurrentPreviousOnDiskLastAndHighestGenerations_andTheNewestLines() throws {
        // Generation 30 is current, deployed over 12 (a rollback came between); 5 and 40 have
        // folders (kept by pruning, or a service's file); 1000 is the highest number used, in
        // an early line (a history edited by hand); 600 is in probation, the last line. Written
        // as one file, as a host before the bound left it.
        var lines = [DeployHistory.Entry(generation: 1000, previous: nil, outcome: .rolledBack, reason: "byHand")]
        for generation in 1...599 {
            for outcome in [DeployHistory.Entry.Outcome.inProbation, .applied] {
                lines.append(
                    .init(
                        generation: generation, previous: generation == 30 ? 12 : generation - 1, outcome: outcome,
                        from: from(generation)))
            }
        }
        lines.append(.init(generation: 600, previous: 599, outcome: .inProbation, from: from(600)))
        try scratch.write(
            "state/generations/" + DeployHistory.fileName, Array(lines.map { $0.json.serialized + "\n" }.joined().utf8),
            mode: 0o600)
        #expect(FileManager.default.fileExists(atPath: history.path))
        try scratch.write("state/generations/current", Array("30\n".utf8), mode: 0o600)
        try folder(5)
        try folder(40)
        let before = history.entries()
        #expect(before == lines)
        try #require(size() > DeployHistory.compactionThreshold && size() < DeployHistory.maxRead)

        let dropped = try history.compact()
        let after = history.entries()
        #expect(dropped > 0 && dropped + after.count == before.count, "dropped \(dropped), kept \(after.count)")
        #expect(size() <= DeployHistory.keptBytes + 2048, "\(size()) bytes")
        let kept = [5, 12, 30, 40, 600, 1000]
        for generation in kept {
            #expect(after.filter { $0.generation == generation } == before.filter { $0.generation == generation })
        }
        // The newest lines whole; the others those of the generations kept, in their order.
        #expect(Array(after.suffix(128)) == Array(before.suffix(128)))
        var rest = before.makeIterator()
        #expect(
            after.allSatisfy { entry in
                while let next = rest.next() { if next == entry { return true } }
                return false
            })
        #expect(after.dropLast(128).allSatisfy { kept.contains($0.generation) || $0.generation > 400 })
        #expect(!after.contains { $0.generation == 100 })
        // What ctl rollback reads: the current generation's applied line, naming 12.
        #expect(after.last { $0.generation == 30 && $0.outcome == .applied }?.previous == 12)
        // Compacted already: a second compaction leaves it as it is.
        #expect(try history.compact() == 0)
        #expect(history.entries() == after)
    }

    @Test func theNextGeneration_afterCompactions_isAboveEveryNumberUsed() throws {
        // Every generation rolled back and removed: only the history knows their numbers.
        for generation in 1...700 { try deploy(generation, over: nil, .rolledBack) }
        #expect(size() <= DeployHistory.compactionThreshold)
        #expect(!history.entries().contains { $0.generation == 1 })
        let set = try scratch.folder("set")
        try Command.compileC(
            Repository.fixture("CPlugins/probe.c"), to: set + "/a.so", defines: ["PROBE_ID=\"test.a\""])
        let staged = try DeployStage.stage(from: set, stateDirectory: state, configurationPath: nil)
        #expect(staged.generation == 701)
    }

    @Test func aLineCutShortBeforeACompaction_isLeftOut_asEntriesLeavesItOut() throws {
        for generation in 1...100 { try deploy(generation, over: generation - 1) }
        // A host killed in the middle of its next line, which the next append starts a line after.
        let handle = try #require(FileHandle(forWritingAtPath: history.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"generation":9999,"prev"#.utf8))
        try handle.close()
        var expected = history.entries()
        #expect(expected.count == 200 && !expected.contains { $0.generation == 9999 })
        // Short lines, one at a time, until one crosses the threshold and compacts.
        var generation = 101
        var compacted = false
        while !compacted && generation < 2000 {
            let before = size()
            let entry = DeployHistory.Entry(
                generation: generation, previous: nil, outcome: .rolledBack, reason: "byHand")
            try history.append(entry)
            expected.append(entry)
            compacted = size() < before
            generation += 1
        }
        #expect(compacted)
        // No current, no folders: the newest lines, as entries() read them before.
        let after = history.entries()
        #expect(after == Array(expected.suffix(after.count)) && after.count >= 128, "\(after.count)")
        let raw = try String(contentsOfFile: history.path, encoding: .utf8)
        #expect(!raw.contains("9999") && raw.hasSuffix("\n"))
    }
}
