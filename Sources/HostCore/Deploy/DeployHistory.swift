import Glibc
import ServiceJSON

/// What happened to each generation, one JSON object a line in `STATE/generations/history.jsonl`
/// (appended at each step and synced, but for the `inProbation` line until the acceptance and
/// the `applied` line, which a start adds back: ``Host/resumingGeneration(_:)``): `ctl deploy
/// status` reads it, `ctl rollback` finds the generation to go back to in it, and a start finds
/// a deploy that was in probation when the host died.
///
/// ```text
/// {"generation":2,"previous":1,"outcome":"inProbation","from":"/srv/release-7"}
/// {"generation":2,"previous":1,"outcome":"rolledBack","culprit":"test.b","reason":"signal","from":"/srv/release-7"}
/// ```
/// `previous` is the generation in force before (absent: the plugin directories); `from` the
/// folder the deploy was asked for (absent in lines written before it was recorded, and in
/// those of `ctl rollback` and a start): who deployed what, e.g. MQTTBridge's fleet deploys come
/// from a folder named after the bundle's digest.
///
/// It is bounded: an append that leaves it past ``compactionThreshold`` rewrites it with the
/// lines that still matter (``compact()``, DeployHistory+Compaction.swift).
struct DeployHistory {
    /// One line.
    struct Entry: Sendable, Equatable {
        /// The outcomes a generation goes through.
        enum Outcome: String, Sendable {
            /// Switched to, watched until its probation ends.
            case inProbation
            /// Accepted: the probation ended without a failure; recorded as current.
            case applied
            /// Rolled back: a failure in probation (`culprit`, `reason`), `ctl deploy --cancel`
            /// (`cancelled`), `ctl rollback` (`byHand`), or a start that found it in probation
            /// (`notAccepted`).
            case rolledBack
        }

        var generation: Int
        var previous: Int?
        var outcome: Outcome
        var culprit: String? = nil
        var reason: String? = nil
        /// The folder the deploy was asked for (appended to the line's members, optional).
        var from: String? = nil

        var json: JSONValue {
            var object: [String: JSONValue] = [
                "generation": .number(Double(generation)), "outcome": .string(outcome.rawValue),
            ]
            if let previous { object["previous"] = .number(Double(previous)) }
            if let culprit { object["culprit"] = .string(culprit) }
            if let reason { object["reason"] = .string(reason) }
            if let from { object["from"] = .string(from) }
            return .object(object)
        }

        /// The line's entry, or nil for a line cut short or not one of ours.
        init?(_ value: JSONValue) {
            guard let generation = value["generation"]?.intValue,
                let outcome = value["outcome"]?.stringValue.flatMap(Outcome.init(rawValue:))
            else { return nil }
            self.generation = generation
            self.outcome = outcome
            previous = value["previous"]?.intValue
            culprit = value["culprit"]?.stringValue
            reason = value["reason"]?.stringValue
            from = value["from"]?.stringValue
        }

        init(
            generation: Int, previous: Int?, outcome: Outcome, culprit: String? = nil, reason: String? = nil,
            from: String? = nil
        ) {
            self.generation = generation
            self.previous = previous
            self.outcome = outcome
            self.culprit = culprit
            self.reason = reason
            self.from = from
        }
    }

    /// The state directory whose history this is.
    let stateDirectory: String
    /// The history of `stateDirectory`.
    let path: String

    init(stateDirectory: String) {
        self.stateDirectory = stateDirectory
        path = DeployStage.generations(in: stateDirectory) + "/" + Self.fileName
    }

    /// The history's name in the `generations` folder.
    static let fileName = "history.jsonl"

    /// The largest history read: older lines beyond it are not looked at. Four times the bound
    /// a compaction keeps (was 1 MiB): a history past the threshold because its compactions
    /// failed is still read whole for a while, and one an older host let grow is read from its
    /// last 256 KiB until its first compaction keeps what matters of them.
    static let maxRead = 4 * compactionThreshold

    /// Every entry, oldest first (lines that do not parse are left out: a line cut short by a
    /// crash is the last one, and what it said did not happen as far as the host knows).
    func entries() -> [Entry] { ((try? lines())?.lines ?? []).map(\.entry) }

    /// The lines of the history's last ``maxRead`` bytes that parse, oldest first, each with its
    /// bytes (without its newline) and the history file's size; none when there is no history.
    func lines() throws(SystemError) -> (lines: [(bytes: ArraySlice<UInt8>, entry: Entry)], size: Int) {
        let file: ReadOnlyFile
        do { file = try ReadOnlyFile(path: path) } catch {
            if error.errno == ENOENT { return ([], 0) }
            throw error
        }
        let start = max(0, file.size - Self.maxRead)
        let bytes = try file.read(at: start, count: file.size - start)
        let lines = bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            (try? JSONValue(parsing: Array(line))).flatMap(Entry.init).map { (line, $0) }
        }
        return (lines, file.size)
    }

    /// The last entry of each generation, newest generation first, at most `limit`.
    func latest(_ limit: Int = 10) -> [Entry] {
        var seen = Set<Int>()
        var result: [Entry] = []
        for entry in entries().reversed() where !seen.contains(entry.generation) {
            seen.insert(entry.generation)
            result.append(entry)
        }
        return Array(result.sorted { $0.generation > $1.generation }.prefix(limit))
    }

    /// Makes the lines appended so far durable (`fsync`); nothing to do when there is no history.
    func sync() throws(SystemError) {
        let output: FileDescriptor
        do { output = try FileDescriptor.open(path, O_RDONLY, mode: 0) } catch {
            if error.errno == ENOENT { return }
            throw error
        }
        if fsync(output.rawValue) != 0 { throw .current("fsync", path) }
        try output.close(path)
    }

    /// Appends `entry` as one line, synced before this returns unless `sync` is false (a line
    /// a power cut may lose: the `inProbation` one, after which a start runs the generation
    /// before either way). After a line cut short (a host killed in a write, a full disk) it
    /// starts a line of its own, so the entry still reads. When the history is then larger than
    /// ``compactionThreshold`` it is compacted (``compact()``).
    func append(_ entry: Entry, sync: Bool = true) throws(SystemError) {
        let output = try FileDescriptor.open(path, O_RDWR | O_CREAT | O_APPEND, mode: 0o600)
        var last: UInt8 = UInt8(ascii: "\n")
        let size = lseek(output.rawValue, 0, SEEK_END)
        if size > 0 && pread(output.rawValue, &last, 1, size - 1) != 1 { last = UInt8(ascii: "\n") }
        let line = Array(((last == UInt8(ascii: "\n") ? "" : "\n") + entry.json.serialized + "\n").utf8)
        try line.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try output.writeAll(buffer, path: path) }
        }.get()
        if sync && fsync(output.rawValue) != 0 { throw .current("fsync", path) }
        try output.close(path)
        if size + line.count > Self.compactionThreshold {
            // Ignored, neither thrown nor logged: the line is appended (and synced when asked),
            // which is all the caller's step needs, and a failed compaction leaves a whole
            // history (the old one, or the new one renamed over it). The history stays longer until
            // the next append past the threshold tries again; it is still read (its last
            // `maxRead` bytes). What fails here (a full or read-only disk) the deploy's own
            // writes report.
            _ = try? compact()
        }
    }
}
