import MQTTCodec
import ServiceKit

/// The generation a host should run, the retained `<prefix>/desired` (issue 41):
///
///     {"digest": "<sha256 of the bundle, 64 hex digits>", "size": 1048576,
///      "signature": "untrusted comment: …\n…\ntrusted comment: …\n…\n",
///      "source": "servicehost/bundles/<digest>", "chunks": 4, "probation": 30}
///
/// `signature` is the bundle's minisign signature file as text; `source` (optional, that
/// default) is where the bundle is retained: the bundle itself when `chunks` is 1 (the
/// default), else its pieces on `<source>/0` … `<source>/<chunks-1>`, concatenated in that
/// order. `probation` (optional) is the deploy's probation in seconds.
struct FleetDesired: Equatable {
    var digest: String
    var size: Int
    var signature: String
    var source: String
    var chunks = 1
    var probation: Double?

    /// The largest bundle fetched: the archive's limit on its files, with room for its headers.
    static let maxSize = BundleArchive.maxBytes + (1 << 20)
    /// The most pieces a bundle comes in.
    static let maxChunks = 4096
    /// Where bundles are retained.
    static let bundlesPrefix = "servicehost/bundles/"

    static let keys = ["digest", "size", "signature", "source", "chunks", "probation"]

    /// Why a payload is not a desired state: names the member.
    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The desired state in `payload`, or why it is not one (naming the member).
    static func parse(_ payload: [UInt8]) throws(Problem) -> FleetDesired {
        let value: JSONValue
        do { value = try JSONValue(parsing: payload) } catch {
            throw Problem("the desired state is not JSON: \(error)")
        }
        guard let members = value.objectValue else { throw Problem("the desired state must be a JSON object") }
        for key in members.keys.sorted() where !keys.contains(key) {
            throw Problem(
                "the desired state has an unknown member \"\(key)\" (known: \(keys.joined(separator: ", ")))")
        }
        guard let digest = members["digest"]?.stringValue, isDigest(digest) else {
            throw Problem("desired.digest must be the bundle's SHA-256 in 64 lowercase hex digits")
        }
        guard let size = members["size"]?.intValue, (1...maxSize).contains(size) else {
            throw Problem("desired.size must be the bundle's size in bytes, 1 to \(maxSize)")
        }
        guard let signature = members["signature"]?.stringValue, !signature.isEmpty, signature.utf8.count <= 16384
        else {
            throw Problem("desired.signature must be the bundle's minisign signature file as text")
        }
        var desired = FleetDesired(
            digest: digest, size: size, signature: signature, source: bundlesPrefix + digest)
        if let value = members["source"] {
            guard let source = value.stringValue, source.hasPrefix(bundlesPrefix), source.utf8.count <= 1024,
                !source.contains("+"), !source.contains("#"), !source.hasSuffix("/")
            else {
                throw Problem("desired.source must be a topic under \(bundlesPrefix) without wildcards")
            }
            desired.source = source
        }
        if let value = members["chunks"] {
            guard let chunks = value.intValue, (1...maxChunks).contains(chunks), chunks <= size else {
                throw Problem("desired.chunks must be 1 to \(maxChunks) and at most the size")
            }
            desired.chunks = chunks
        }
        if let value = members["probation"] {
            guard let seconds = value.doubleValue, seconds > 0, seconds <= 86400 else {
                throw Problem("desired.probation must be more than 0 and at most 86400 seconds")
            }
            desired.probation = seconds
        }
        return desired
    }

    /// The topics the bundle's pieces are retained on.
    var filters: [String] { chunks == 1 ? [source] : [source + "/+"] }

    /// The piece `topic` carries, or nil when it is none of this bundle's.
    func chunkIndex(_ topic: String) -> Int? {
        if chunks == 1 { return topic == source ? 0 : nil }
        guard topic.hasPrefix(source + "/") else { return nil }
        let tail = topic.utf8.dropFirst(source.utf8.count + 1)
        guard !tail.isEmpty, tail.count <= 4, tail.allSatisfy({ (48...57).contains($0) }),
            tail.count == 1 || tail.first != UInt8(ascii: "0"),
            let index = Int(String(decoding: tail, as: UTF8.self)), index < chunks
        else { return nil }
        return index
    }

    static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

/// What the bridge remembers of the fleet's deploys (the store's `fleet.state`), so a host
/// started again neither loses a deploy in probation nor retries a desired state it refused.
struct FleetRecord: Equatable {
    /// The desired digest ``status`` concerns.
    var digest: String?
    /// `downloading`, `verifying`, `probation`, `applied`, `rolledBack`, `refused`.
    var status: String?
    /// Why (a stable word), the sentence, and what caused it (a service id or a file).
    var reason: String?
    var detail: String?
    var culprit: String?
    /// The host's generation the deploy became.
    var generation: Int?
    /// The bundle the host runs (the last one applied) and its generation.
    var running: String?
    var runningGeneration: Int?

    static let storeKey = "fleet.state"

    /// Whether the deploy of ``digest`` is over (it is not tried again until the digest changes).
    var isSettled: Bool { status == "applied" || status == "refused" || status == "rolledBack" }

    var json: JSONValue {
        var object: [String: JSONValue] = [:]
        func put(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        put("digest", digest)
        put("status", status)
        put("reason", reason)
        put("detail", detail)
        put("culprit", culprit)
        put("running", running)
        if let generation { object["generation"] = .number(Double(generation)) }
        if let runningGeneration { object["runningGeneration"] = .number(Double(runningGeneration)) }
        return .object(object)
    }

    /// The stored record; an empty one when the bytes are not one (a record lost is a deploy
    /// tried again, never a trap).
    init(stored bytes: [UInt8]) {
        guard let value = try? JSONValue(parsing: bytes), value.objectValue != nil else { return }
        digest = value["digest"]?.stringValue
        status = value["status"]?.stringValue
        reason = value["reason"]?.stringValue
        detail = value["detail"]?.stringValue
        culprit = value["culprit"]?.stringValue
        running = value["running"]?.stringValue
        generation = value["generation"]?.intValue
        runningGeneration = value["runningGeneration"]?.intValue
    }

    init() {}
}
