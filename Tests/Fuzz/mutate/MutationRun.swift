// The mutation run of `scripts/fuzz --mutate N` (issue 11): N corrupted copies of the bundled
// plugins, each through `host inspect` and through the loader (`host --plugins DIR
// --isolation process`, stopped with SIGTERM once active). A crash or hang of the host, or
// a file its output does not name, is a finding; the run exits 1 when there is any.
//
// Usage: mutation-run HOST PLUGIN-DIR WORK-DIR COUNT SEED
//
// Every mutation comes from SEED and the file's number, so a run is repeatable and one file
// can be made again alone. A file is named NUMBER-MUTATION-PLUGIN.so.
import Foundation

/// SplitMix64: small, fast, and the same on every machine.
struct Random {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
}

/// The fields a mutation sets to an extreme, and where they are.
struct ELFLayout {
    let bytes: [UInt8]
    func u16(_ o: Int) -> Int { o + 2 <= bytes.count ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : 0 }
    func u64(_ o: Int) -> UInt64 {
        o + 8 <= bytes.count ? (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[o + $1]) << UInt64(8 * $1) } : 0
    }
    var sectionTable: Int { Int(truncatingIfNeeded: u64(40)) }
    var sectionCount: Int { u16(60) }
    var namesIndex: Int { u16(62) }
    /// Offsets of the section header entries.
    var sections: [Int] { (0..<sectionCount).map { sectionTable + $0 * 64 }.filter { $0 + 64 <= bytes.count } }
    /// Offsets of the metadata records (their magic is at +8).
    var records: [Int] {
        let magic: [UInt8] = [0x53, 0x48, 0x4D, 0x44]  // SH_META_MAGIC 0x444d4853, little-endian
        var found: [Int] = []
        var o = 8
        while o + 4 <= bytes.count {
            if bytes[o] == magic[0], bytes[o + 1] == magic[1], bytes[o + 2] == magic[2], bytes[o + 3] == magic[3] {
                found.append(o - 8)
            }
            o += 4
        }
        return found
    }
}

func put(_ value: UInt64, _ size: Int, at offset: Int, in bytes: inout [UInt8]) {
    guard offset >= 0, offset + size <= bytes.count else { return }
    for i in 0..<size { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * i)) }
}

let extremes: [UInt64] = [
    0, 1, 0x7F, 0xFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, 1 << 63, (1 << 63) - 1, UInt64.max, UInt64.max - 63,
]

/// One corrupted copy of `original`, and what was done to it (a short name for the file).
func mutate(_ original: [UInt8], _ random: inout Random) -> ([UInt8], String) {
    var bytes = original
    let layout = ELFLayout(bytes: original)
    func extreme(_ size: Int) -> UInt64 {
        let pick = random.below(extremes.count + 2)
        if pick == extremes.count { return UInt64(original.count) }
        if pick == extremes.count + 1 { return UInt64(original.count + 1) }
        return extremes[pick] & (size == 8 ? UInt64.max : (UInt64(1) << UInt64(8 * size)) - 1)
    }
    switch random.below(10) {
    case 0, 1:  // byte flips anywhere
        let n = 1 + random.below(8)
        for _ in 0..<n { bytes[random.below(bytes.count)] ^= UInt8(1 + random.below(255)) }
        return (bytes, "flip\(n)")
    case 2:  // byte flips in the ELF header
        for _ in 0..<(1 + random.below(4)) { bytes[random.below(64)] = UInt8(random.below(256)) }
        return (bytes, "header")
    case 3:  // truncation
        return (Array(bytes.prefix(random.below(bytes.count))), "truncate")
    case 4:  // an ELF header field set to an extreme
        let fields: [(String, Int, Int)] = [
            ("shoff", 40, 8), ("phoff", 32, 8), ("shentsize", 58, 2), ("shnum", 60, 2),
            ("shstrndx", 62, 2), ("type", 16, 2), ("class", 4, 1), ("data", 5, 1),
        ]
        let (name, offset, size) = fields[random.below(fields.count)]
        put(extreme(size), size, at: offset, in: &bytes)
        return (bytes, name)
    case 5, 6:  // a section header field set to an extreme
        let sections = layout.sections
        guard !sections.isEmpty else { return (bytes, "none") }
        let base =
            random.below(3) == 0 && layout.namesIndex < sections.count
            ? sections[layout.namesIndex]
            : sections[random.below(sections.count)]
        let fields: [(String, Int, Int)] = [
            ("sh_name", 0, 4), ("sh_type", 4, 4), ("sh_offset", 24, 8), ("sh_size", 32, 8),
            ("sh_link", 40, 4), ("sh_entsize", 56, 8),
        ]
        let (name, offset, size) = fields[random.below(fields.count)]
        put(extreme(size), size, at: base + offset, in: &bytes)
        return (bytes, name)
    case 7:  // a string or symbol table made SHT_NOBITS with a huge size
        let sections = layout.sections
        guard !sections.isEmpty else { return (bytes, "none") }
        let base =
            random.below(2) == 0 && layout.namesIndex < sections.count
            ? sections[layout.namesIndex]
            : sections[random.below(sections.count)]
        put(8, 4, at: base + 4, in: &bytes)
        put(random.below(2) == 0 ? 1 << 40 : 1 << 30, 8, at: base + 32, in: &bytes)
        return (bytes, "nobits")
    default:  // a metadata record: size, kind, or a string field without its NUL
        let records = layout.records
        guard !records.isEmpty else { return (bytes, "none") }
        let record = records[random.below(records.count)]
        switch random.below(4) {
        case 0:
            put(extreme(4), 4, at: record, in: &bytes)
            return (bytes, "meta_size")
        case 1:
            put(UInt64(random.below(8)), 4, at: record + 12, in: &bytes)
            return (bytes, "meta_kind")
        case 2:
            for i in (record + 16)..<min(bytes.count, record + 272) { bytes[i] = 0x41 }
            return (bytes, "meta_nonul")
        default:
            for _ in 0..<(1 + random.below(6)) {
                bytes[min(bytes.count - 1, record + random.below(272))] = UInt8(random.below(256))
            }
            return (bytes, "meta_flip")
        }
    }
}

/// Runs `arguments` with output to `log`; kills it after `timeout` s (a hang). Returns how it ended.
enum Ending {
    case exited(Int32)
    case signaled(Int32)
    case hung
}

func run(
    _ executable: String, _ arguments: [String], log: String, timeout: Double,
    stopWhen ready: String? = nil, beforeStopping: () throws -> Void = {}
) throws -> Ending {
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    defer { try? output.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    var signalled = false
    while process.isRunning {
        if Date() > deadline {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return .hung
        }
        // The loader run: once the host is active, every file was inspected or loaded; stop it.
        if let ready, !signalled, let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains(ready) {
            try beforeStopping()
            kill(process.processIdentifier, SIGTERM)
            signalled = true
        }
        usleep(20_000)
    }
    return process.terminationReason == .uncaughtSignal
        ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
}

let arguments = CommandLine.arguments
guard arguments.count == 6, let count = Int(arguments[4]), let seed = UInt64(arguments[5]) else {
    FileHandle.standardError.write("usage: mutation-run HOST PLUGIN-DIR WORK-DIR COUNT SEED\n".data(using: .utf8)!)
    exit(2)
}
let (host, pluginDirectory, work) = (arguments[1], arguments[2], arguments[3])
let plugins = try FileManager.default.contentsOfDirectory(atPath: pluginDirectory).filter { $0.hasSuffix(".so") }
    .sorted()
    .map {
        (
            name: String($0.dropLast(3)),
            bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: pluginDirectory + "/" + $0)))
        )
    }
guard !plugins.isEmpty else {
    print("mutation-run: no .so files in \(pluginDirectory)")
    exit(2)
}

let batchSize = 1000
var findings: [String] = []
var inspected = 0
var loaded = 0
var refusedByLoader = 0
var reasons: [String: Int] = [:]
let started = Date()
try? FileManager.default.removeItem(atPath: work)
for batchStart in stride(from: 0, to: count, by: batchSize) {
    let directory = "\(work)/batch-\(batchStart)"
    try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o755])
    var names: [String] = []
    for number in batchStart..<min(count, batchStart + batchSize) {
        var random = Random(state: seed &* 0x100_0000_01B3 &+ UInt64(number))
        let plugin = plugins[random.below(plugins.count)]
        let (bytes, what) = mutate(plugin.bytes, &random)
        let name = String(format: "%07d-%@-%@.so", number, what, plugin.name)
        _ = FileManager.default.createFile(
            atPath: "\(directory)/\(name)", contents: Data(bytes),
            attributes: [.posixPermissions: 0o644])
        names.append(name)
    }
    // 1. host inspect: every file gets a block starting with its path.
    let inspectLog = "\(directory).inspect.log"
    switch try run(host, ["inspect", "--state-dir", "\(work)/state", directory], log: inspectLog, timeout: 120) {
    case .signaled(let signal):
        findings.append("host inspect \(directory): killed by signal \(signal) (see \(inspectLog))")
    case .hung: findings.append("host inspect \(directory): no exit within 120 s (see \(inspectLog))")
    case .exited:
        let text = try String(contentsOfFile: inspectLog, encoding: .utf8)
        for name in names where !text.contains("\(directory)/\(name)\n") {
            findings.append("host inspect: \(name) not named")
        }
        for line in text.split(separator: "\n") where line.hasPrefix("  not loadable: ") {
            // The reason's kind, without the numbers, to show what the mutations reached.
            let reason = line.dropFirst("  not loadable: ".count).prefix { $0 != ":" && $0 != "(" }
            reasons[String(reason), default: 0] += 1
        }
    }
    inspected += names.count
    // 2. The loader, with every plugin in a worker: refused files are logged by path; the
    //    first file of each service id that passes inspection is loaded in a worker.
    //    A loaded file is named by `host ctl list`, asked once the host is active.
    let loadLog = "\(directory).load.log"
    let listLog = "\(directory).list.json"
    let socket = "\(work)/host.sock"
    let ending = try run(
        host,
        [
            "--plugins", directory, "--isolation", "process", "--state-dir", "\(work)/state",
            "--control", socket, "--event-timeout", "2", "--shutdown-timeout", "10",
            "--first-launch", "never",
        ],
        log: loadLog, timeout: 180, stopWhen: "active with"
    ) {
        _ = try run(host, ["ctl", "--control", socket, "--json", "list"], log: listLog, timeout: 30)
    }
    switch ending {
    case .signaled(let signal):
        findings.append("host --plugins \(directory): killed by signal \(signal) (see \(loadLog))")
    case .hung: findings.append("host --plugins \(directory): not active and stopped within 180 s (see \(loadLog))")
    case .exited(let status):
        let text = try String(contentsOfFile: loadLog, encoding: .utf8)
        let list = (try? String(contentsOfFile: listLog, encoding: .utf8)) ?? ""
        if status != 0 || !text.contains("active with") {
            findings.append("host --plugins \(directory): exit status \(status) (see \(loadLog))")
        }
        for name in names {
            if text.contains("\(directory)/\(name):") {
                refusedByLoader += 1
            } else if list.contains("\(directory)/\(name)\"") {
                loaded += 1
            } else {
                findings.append("host --plugins: \(name) not named in its log")
            }
        }
    }
    let elapsed = Int(Date().timeIntervalSince(started))
    print("mutation-run: \(inspected) of \(count) files (\(elapsed) s), \(findings.count) finding(s)")
    fflush(nil)  // progress lines as they happen, even into a log file
    if findings.isEmpty { try? FileManager.default.removeItem(atPath: directory) }
}

print(
    "mutation-run: \(inspected) corrupted copies of \(plugins.count) plugins (seed \(seed)) through host inspect and the loader "
        + "in \(Int(Date().timeIntervalSince(started))) s")
print("mutation-run: loader: \(refusedByLoader) refused, each with its path; \(loaded) loaded, each in ctl list")
print("mutation-run: host inspect reasons:")
for (reason, n) in reasons.sorted(by: { $0.value > $1.value }) { print("  \(n)\t\(reason)") }
if findings.isEmpty {
    print("mutation-run: 0 crashes, 0 hangs, every file named")
} else {
    print("mutation-run: \(findings.count) finding(s):")
    for finding in findings.prefix(50) { print("  \(finding)") }
    exit(1)
}
