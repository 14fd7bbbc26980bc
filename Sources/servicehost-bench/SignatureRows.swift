import Glibc

/// Row 3's signature lines (issue 40): a start of C plugins all signed with `"signatures":
/// "required"` against the same unsigned plugins with signatures off, per plugin on a cached
/// start (the verdicts are kept in one file of the store of copies, so a start of files checked
/// before runs no cryptography, and a signed plugin costs one `stat` of its `.minisig` more);
/// and the cost of a first check per MiB against `minisign -V` of the file.
@MainActor
struct SignatureRows {
    let host: String
    let reps: Int
    /// The host's environment (its state and runtime directories in the farm).
    let hostEnvironment: [String: String]
    /// Raw figures for bench-results.json.
    private(set) var raw: [(String, Double)] = []

    /// Debian's tool: the authors' signer, and the uncached row's baseline.
    static let minisign = "/usr/bin/minisign"
    /// The size of the file the uncached row checks.
    static let bigFileBytes = 8 << 20

    /// The rows for the C sets `one` (1 plugin) and `many` (`count` plugins), and the C plugin
    /// `template`, worked on in copies under `root`.
    mutating func run(one: String, many: String, count: Int, template: [UInt8], root: String) throws(BenchError)
        -> [Row]
    {
        guard access(Self.minisign, X_OK) == 0 else {
            return [
                .pending(
                    "3", "start-up per C plugin, signatures required vs off", target: "≤ 1.25×",
                    needs: "minisign (apt-get install minisign)")
            ]
        }
        let key = root + "/bench-sign"
        _ = try runToExit(Self.minisign, ["-G", "-W", "-f", "-p", key + ".pub", "-s", key + ".key"])
        // Copies of the sets: unsigned with signatures off, and signed with them required.
        var folders: [String: String] = [:]
        for (name, source, signed) in [
            ("plain-1", one, false), ("plain-n", many, false), ("signed-1", one, true), ("signed-n", many, true),
        ] {
            folders[name] = try copySet(source, to: root + "/trust-" + name, signedWith: signed ? key : nil)
        }
        let (host, environment) = (self.host, hostEnvironment)
        let active = { (folder: String) throws(BenchError) in try Self.active(host, folder, environment) }
        // Per rep: exec → active of each set, interleaved.
        let samples = try interleavedSamples(
            reps: reps,
            ["plain-1", "plain-n", "signed-1", "signed-n"].map { name in { try active(folders[name]!) } })
        let perPlugin = { (first: [Double], total: [Double]) in
            zip(total, first).map { ($0 - $1) / Double(count - 1) }
        }
        let plain = perPlugin(samples[0], samples[1])
        let signed = perPlugin(samples[2], samples[3])
        raw += [("signatures.cached.per_plugin_ns", median(signed)), ("signatures.off.per_plugin_ns", median(plain))]

        // Uncached: one 8 MiB plugin touched before every start (a new version: a new copy, a
        // new check), signed and not; the difference per MiB against `minisign -V` per MiB.
        var big = template
        big += [UInt8](repeating: 0, count: max(0, Self.bigFileBytes - big.count))  // past the ELF's end
        let mebibytes = Double(big.count) / Double(1 << 20)
        let bigPlain = try makeFolder(root + "/trust-big-plain", [("big.so", big)], signedWith: nil)
        let bigSigned = try makeFolder(root + "/trust-big-signed", [("big.so", big)], signedWith: key)
        let verify = ["-V", "-q", "-p", key + ".pub", "-m", bigSigned + "/big.so"]
        let uncached = try interleavedSamples(
            reps: reps,
            [
                {
                    utimensat(AT_FDCWD, bigPlain + "/big.so", nil, 0)
                    return try active(bigPlain)
                },
                {
                    utimensat(AT_FDCWD, bigSigned + "/big.so", nil, 0)
                    return try active(bigSigned)
                },
                { try runToExit(Self.minisign, verify) },
            ])
        let checkPerMiB = zip(uncached[1], uncached[0]).map { ($0 - $1) / mebibytes }
        let minisignPerMiB = uncached[2].map { $0 / mebibytes }
        raw += [
            ("signatures.uncached.per_mib_ns", median(checkPerMiB)),
            ("minisign.verify.per_mib_ns", median(minisignPerMiB)),
        ]
        return [
            .paired(
                row: "3",
                measured:
                    "start-up, \(count) C plugins signed, \"signatures\": \"required\" (verdicts cached): exec → active, per plugin, vs unsigned with signatures off",
                unit: .nanoseconds, ours: signed, baseline: plain, target: "≤ 1.25×", maxRatio: 1.25),
            .paired(
                row: "3",
                measured:
                    "for reference: the first check of a signed plugin (a new version), per MiB of file, vs `minisign -V` of the same file (a process) per MiB",
                unit: .nanoseconds, ours: checkPerMiB, baseline: minisignPerMiB, target: "—"),
        ]
    }

    /// exec → active of the host on `folder` (its own configuration in it).
    private static func active(_ host: String, _ folder: String, _ hostEnvironment: [String: String])
        throws(BenchError) -> Double
    {
        let start = nowNanoseconds()
        var child = try Child(host, ["--plugins", folder], capture: 2, environment: hostEnvironment)
        guard child.waitFor("] active with ") else {
            child.finish(signal: nil)
            throw BenchError("host --plugins \(folder) ended before it was active:\n\(child.text)")
        }
        let elapsed = nowNanoseconds() - start
        child.finish(signal: SIGTERM)
        return elapsed
    }

    /// The `*.so` files of `source` copied into `folder`.
    private func copySet(_ source: String, to folder: String, signedWith key: String?) throws(BenchError) -> String {
        guard let directory = opendir(source) else { throw BenchError("cannot read \(source)") }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) { field in
                UnsafeRawPointer(field).withMemoryRebound(to: CChar.self, capacity: 1) { String(cString: $0) }
            }
            if name.hasSuffix(".so") { names.append(name) }
        }
        closedir(directory)
        var files: [(String, [UInt8])] = []
        for name in names.sorted() { files.append((name, try readFile(source + "/" + name))) }
        return try makeFolder(folder, files, signedWith: key)
    }

    /// `folder` with `files`, each signed by `key` (secret key `KEY.key`, public `KEY.pub`)
    /// under a configuration requiring it, or unsigned under one with signatures off.
    private func makeFolder(_ folder: String, _ files: [(String, [UInt8])], signedWith key: String?)
        throws(BenchError) -> String
    {
        guard mkdir(folder, 0o755) == 0 else {
            throw BenchError("mkdir \(folder): \(String(cString: strerror(errno)))")
        }
        for (name, bytes) in files {
            try writePluginFile(bytes, to: folder + "/" + name)
            if let key { _ = try runToExit(Self.minisign, ["-S", "-s", key + ".key", "-m", folder + "/" + name]) }
        }
        let configuration =
            key.map { #"{"signatures": "required", "trustedKeys": [{"name": "bench", "file": "\#($0).pub"}]}"# }
            ?? #"{"signatures": "off"}"#
        let path = folder + "/services.json"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let bytes = Array(configuration.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            throw BenchError("write \(path): \(String(cString: strerror(errno)))")
        }
        return folder
    }
}
