/// A worker's stdout and stderr, turned into log lines with a budget: a plugin that prints
/// without end cannot flood the host's log or make the host buffer without bound.
struct OutputLines {
    /// Lines logged per window; the rest are counted and dropped.
    static let budget = 200
    /// The window, in seconds.
    static let window = 10.0
    /// Longer lines are cut.
    static let longestLine = 2000

    private let log: Log
    private let source: String
    private var partial: [UInt8] = []
    private var windowStart = Clock.monotonic()
    private var logged = 0
    private var dropped = 0
    /// Told the system call of each line that reports one refused (``AuditedRefusals``),
    /// which is not logged as output.
    private let refused: ((String) -> Void)?

    init(log: Log, source: String, refused: ((String) -> Void)? = nil) {
        self.log = log
        self.source = source
        self.refused = refused
    }

    /// Bytes read from the pipe.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            if byte == 0x0A {
                emit()
            } else if partial.count < Self.longestLine + 1 {
                partial.append(byte)
            }
        }
    }

    /// The last line, when it has no newline (the worker is gone).
    mutating func flush() {
        if !partial.isEmpty { emit() }
        report(Clock.monotonic())
    }

    private mutating func emit() {
        defer { partial.removeAll(keepingCapacity: true) }
        // Blank lines say nothing.
        guard partial.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return }
        let now = Clock.monotonic()
        if now - windowStart >= Self.window {
            report(now)
            windowStart = now
            logged = 0
        }
        guard logged < Self.budget else {
            if dropped == 0 {
                log.warn(
                    source,
                    "prints too much: its output is dropped for up to \(Int(Self.window)) s"
                        + " (at most \(Self.budget) lines are logged per \(Int(Self.window)) s)",
                    event: .workerOutputThrottled,
                    .int("budget", Self.budget), .int("window", Int(Self.window)))
            }
            dropped += 1
            return
        }
        logged += 1
        var text = String(decoding: partial.prefix(Self.longestLine), as: UTF8.self)
        if let refused, let call = AuditedRefusals.refusedCall(in: text) { return refused(call) }
        if partial.count > Self.longestLine { text += "…" }
        log.info(source, "output: " + text, event: .workerOutput, .string("line", text))
    }

    private mutating func report(_ now: Double) {
        guard dropped > 0 else { return }
        log.warn(
            source, "\(dropped) line(s) of its output were dropped", event: .workerOutputDropped, .int("lines", dropped)
        )
        dropped = 0
    }
}
