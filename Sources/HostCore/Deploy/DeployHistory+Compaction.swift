import Glibc

/// Keeping the history bounded (ServiceHost issue 41): it was only ever appended to, so a host
/// deployed daily for years, or a fleet that rolls out often, grew it without bound, and every
/// deploy step that reads it parsed it all (up to 1 MiB).
extension DeployHistory {
    /// The size past which an append compacts the history: 64 KiB, about 500 lines of a deploy
    /// from a fleet bundle's folder (~130 bytes each, two or three per deploy), so `entries()`
    /// parses at most that, and a compaction (reading and writing 64 KiB, two `fsync`s) comes
    /// once in a hundred deploys or more.
    static let compactionThreshold = 64 << 10

    /// The newest lines a compaction keeps, at most: 256 lines (a hundred deploys or more, the
    /// ten `ctl deploy status` shows many times over), and no more than half the threshold, so
    /// that lines with long `from` folders still leave room before the next compaction.
    static let keptLines = 256
    static let keptBytes = compactionThreshold / 2

    /// Rewrites the history with the lines that still matter, in their order: the newest
    /// (``keptLines``, ``keptBytes``), and every line of the generations something may still ask
    /// about: the current one (`generations/current`), the one its last `applied` line names as
    /// `previous` (`ctl rollback`'s target, and pruning's), each whose folder is in `generations`
    /// (staged, kept by pruning, a service's), the last line's (a probation in progress, which a
    /// start settles), and the highest number used (``DeployStage`` never gives it again, and a
    /// start removes only folders newer than it). Lines that do not parse are left out, as
    /// ``entries()`` leaves them out.
    ///
    /// Written as a temporary file in the same folder, synced, renamed over the history and the
    /// folder synced (``DirectoryHandle/replace(_:with:mode:)``): a crash at any point leaves the
    /// old history or the new one whole. Returns the number of lines left out (0: nothing
    /// rewritten).
    @discardableResult
    func compact() throws(SystemError) -> Int {
        let (lines, size) = try self.lines()
        guard !lines.isEmpty else { return 0 }
        let folder = try DirectoryHandle.open(DeployStage.generations(in: stateDirectory))
        let kept = try generationsKept(lines.map(\.entry), in: folder)
        // The newest lines, back from the last one (kept whatever its size).
        var tail = lines.count
        var tailBytes = 0
        while tail > 0 && lines.count - tail < Self.keptLines {
            let cost = lines[tail - 1].bytes.count + 1
            if tail < lines.count && tailBytes + cost > Self.keptBytes { break }
            tailBytes += cost
            tail -= 1
        }
        var output: [UInt8] = []
        output.reserveCapacity(min(size, Self.maxRead))
        var dropped = 0
        for (index, line) in lines.enumerated() {
            guard index >= tail || kept.contains(line.entry.generation) else {
                dropped += 1
                continue
            }
            output += line.bytes
            output.append(UInt8(ascii: "\n"))
        }
        // Nothing to leave out (every line matters, or none was cut short): not rewritten.
        guard output.count < size else { return 0 }
        try output.withUnsafeBytes { bytes in
            Result { () throws(SystemError) in try folder.replace(Self.fileName, with: bytes) }
        }.get()
        return dropped
    }

    /// The generations whose every line a compaction keeps (``compact()``).
    private func generationsKept(_ entries: [Entry], in folder: DirectoryHandle) throws(SystemError) -> Set<Int> {
        var kept = Set<Int>()
        for name in try folder.names() {
            if let number = Int(name.hasPrefix("staging-") ? String(name.dropFirst(8)) : name) { kept.insert(number) }
        }
        if let current = Host.currentGeneration(in: stateDirectory) {
            kept.insert(current)
            let applied = entries.last { $0.generation == current && $0.outcome == .applied }
            if let previous = applied?.previous { kept.insert(previous) }
        }
        if let last = entries.last { kept.insert(last.generation) }
        if let highest = entries.map(\.generation).max() { kept.insert(highest) }
        return kept
    }
}
