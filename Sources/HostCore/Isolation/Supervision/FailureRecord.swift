import ServiceJSON

/// Why a service was marked failed after a crash loop, as kept in
/// `<state>/failures/<id>.json` and shown by `host ctl list` and `host inspect`.
///
/// The service is not started again while its plugin file is the one recorded here (same
/// device, inode, size, modification and change time): a new build, or `touch`, lifts the block.
public struct FailureRecord: Sendable, Equatable {
    /// The failed service.
    public var serviceID: String
    /// Its plugin file.
    public var path: String
    /// The file as it was when the service failed.
    public var file: FileIdentity
    /// The last crash in words: "was killed by signal 11 (SIGSEGV) while handling didBecomeActive".
    public var reason: String
    /// The signal of the last crash, when one killed the worker.
    public var signal: Int32?
    /// The exit status of the last crash, when the worker exited.
    public var status: Int32?
    /// The event the worker was handling when it last crashed, if any.
    public var event: String?
    /// When it was marked failed, ISO 8601 UTC.
    public var time: String
    /// The crash limit it reached.
    public var limit: CrashLimit

    /// "crashed 5 times within 60 s; the last time its worker was killed by … (2025-…)".
    public var summary: String {
        "crashed \(limit.count) time\(limit.count == 1 ? "" : "s") within \(Seconds.text(limit.window)) s;"
            + " the last time its worker \(reason) (\(time))"
    }

    /// Whether `identity` is the file this record blocks (for a record from before change
    /// times were kept, ``unknownChange``, all but the change time).
    public func blocks(_ identity: FileIdentity) -> Bool {
        guard file.changed == Self.unknownChange else { return identity == file }
        return FileIdentity(
            device: identity.device, inode: identity.inode, size: identity.size, modified: identity.modified,
            changed: Self.unknownChange) == file
    }

    /// Whether this record keeps the plugin at `path`, as `identity`, from starting: the same
    /// file, unchanged since the crash loop (the host and `host check` both ask this).
    public func blocks(path: String, identity: FileIdentity) -> Bool { self.path == path && blocks(identity) }

    /// The change time of a record written before change times were kept.
    public static let unknownChange = Int64.min

    /// The record as JSON (the file's contents, and `ctl list`'s `failure`).
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "service": .string(serviceID), "path": .string(path), "reason": .string(reason), "time": .string(time),
            "summary": .string(summary),
            "crashes": .number(Double(limit.count)), "window": .number(limit.window),
            // Strings: an inode or a time in nanoseconds can pass 2^53, where JSON numbers stop being exact.
            "file": [
                "device": .string(String(file.device)), "inode": .string(String(file.inode)),
                "size": .string(String(file.size)), "modified": .string(String(file.modified)),
                "changed": .string(String(file.changed)),
            ],
        ]
        if let signal {
            object["signal"] = .number(Double(signal))
            object["signalName"] = .string(WorkerExit.signalName(signal))
        }
        if let status { object["status"] = .number(Double(status)) }
        if let event { object["event"] = .string(event) }
        return .object(object)
    }

    /// A record read back from its JSON; nil when it is not one.
    public init?(json: JSONValue) {
        guard let id = json["service"]?.stringValue, let path = json["path"]?.stringValue,
            let reason = json["reason"]?.stringValue, let time = json["time"]?.stringValue,
            let file = json["file"], let device = file["device"]?.stringValue.flatMap({ UInt64($0) }),
            let inode = file["inode"]?.stringValue.flatMap({ UInt64($0) }),
            let size = file["size"]?.stringValue.flatMap({ Int64($0) }),
            let modified = file["modified"]?.stringValue.flatMap({ Int64($0) }),
            let crashes = json["crashes"]?.intValue, crashes > 0,
            let window = json["window"]?.doubleValue, window.isFinite, window > 0
        else { return nil }
        // What a host writes: a signal or exit status within Int32, a crash limit of a positive
        // count and window. Anything else (a file damaged or written by hand) is not a record,
        // never a trap (`Int32(_:)` traps out of range).
        var small: [String: Int32] = [:]
        for key in ["signal", "status"] {
            guard let value = json[key] else { continue }
            guard let number = value.intValue.flatMap({ Int32(exactly: $0) }) else { return nil }
            small[key] = number
        }
        // A record written before the change time was kept has none: it matches any (see
        // ``blocks(_:)``), until the host rewrites it with the file's full identity.
        let changed = file["changed"].map { $0.stringValue.flatMap { Int64($0) } } ?? Self.unknownChange
        guard let changed else { return nil }
        self.init(
            serviceID: id, path: path,
            file: FileIdentity(device: device, inode: inode, size: size, modified: modified, changed: changed),
            reason: reason, signal: small["signal"], status: small["status"],
            event: json["event"]?.stringValue, time: time, limit: CrashLimit(count: crashes, window: window))
    }

    /// A record of every field.
    public init(
        serviceID: String, path: String, file: FileIdentity, reason: String, signal: Int32?, status: Int32?,
        event: String?, time: String, limit: CrashLimit
    ) {
        self.serviceID = serviceID
        self.path = path
        self.file = file
        self.reason = reason
        self.signal = signal
        self.status = status
        self.event = event
        self.time = time
        self.limit = limit
    }
}

extension FileIdentity {
    /// An identity from its numbers (a record read back).
    public init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }
}
