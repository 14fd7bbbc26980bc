import Glibc
import MQTTCodec

/// `host fleet publish|rollout|status|cancel` (issue 41): the operator's side of a fleet's
/// desired state, an MQTT 5 client of its own on the broker the hosts' MQTTBridge uses.
/// ``FleetPublish``, ``FleetRollout`` and ``FleetStatus`` do the work.
public enum FleetCommand {
    /// What `host fleet` was asked.
    public struct Options: Sendable {
        /// `--broker ADDR`: as the bridge's `broker` setting.
        public var broker = "tcp://127.0.0.1:1883"
        /// `--username NAME`, `--password-file FILE`: as the bridge's settings.
        public var username: String?
        public var passwordFile: String?
        /// publish: `--sign SECRET_KEY` (a minisign secret key), `--key-password-file FILE` (its
        /// password), `--key PUBLIC_KEY` or `--config FILE` (the keys the signature is checked
        /// with before anything is published: a minisign public key, or a services.json's
        /// `trustedKeys` and `revokedKeys`), `--chunk BYTES`.
        public var sign: String?
        public var keyPasswordFile: String?
        public var key: String?
        public var config: String?
        public var chunk = FleetPublish.defaultChunk
        /// rollout: `--hosts GLOB` or `--file LIST`, `--waves`, `--max-failures`, `--wait`,
        /// `--probation`, `--resume`.
        public var hosts: String?
        public var file: String?
        public var waves = "1,10%,50%,100%"
        public var maxFailures = 0
        public var wait = 300.0
        public var probation: Double?
        public var resume = false
        /// status: `--json`.
        public var json = false
        /// `--prefix ROOT`: the hosts' topics are `ROOT/<hostId>/…` (default `servicehost`).
        public var prefix = FleetView.defaultRoot
    }

    /// The actions, the first operand.
    public enum Action: String, CaseIterable, Sendable {
        case publish, rollout, status, cancel
    }

    /// `host fleet`'s exit statuses, declared once (its help, the man page and HostCommand.md's
    /// table are held against these).
    public enum ExitStatus: Int32, CaseIterable, Sendable {
        /// Published; the rollout reached every host of its last wave within `--max-failures`;
        /// the status printed; the rollout cancelled.
        case done = 0
        /// The broker could not be reached or refused a message; the bundle could not be packed,
        /// signed or read; no such bundle; nothing to resume or cancel.
        case error = 1
        /// A bad `host fleet` command line: nothing sent.
        case badArguments = 2
        /// The rollout stopped: more hosts failed than `--max-failures`; the failed wave was put
        /// back to its previous desired state.
        case stopped = 3
        /// The rollout was cancelled (`host fleet cancel`) while it ran.
        case cancelled = 4

        /// "done", "error", …
        public var meaning: String {
            switch self {
            case .done: "done"
            case .error: "error"
            case .badArguments: "bad arguments"
            case .stopped: "rollout stopped (too many failures)"
            case .cancelled: "rollout cancelled"
            }
        }

        /// "0 done, 1 error, …".
        public static var summary: String { allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: ", ") }
    }

    /// The options of `host fleet`, in the order its help lists them.
    public static let table = OptionTable<Options>(
        "fleet",
        [
            .value("--broker", "ADDR", "the broker: tcp://HOST:PORT or unix:/PATH\n(default tcp://127.0.0.1:1883)") {
                $0.broker = $1
            },
            .value(
                "--prefix", "ROOT",
                "the hosts' topics are ROOT/<hostId>/… (their bridges'\nprefix setting without the id; default servicehost)"
            ) { options, text throws(UsageError) in
                guard !text.isEmpty, !text.contains("+"), !text.contains("#"), !text.hasSuffix("/"),
                    !text.utf8.contains(0)
                else { throw UsageError("'\(text)' is not a topic without wildcards or a trailing /") }
                options.prefix = text
            },
            .value("--username", "NAME", "the user name the broker expects") { $0.username = $1 },
            .value("--password-file", "FILE", "the password, from a file only its owner may read") {
                $0.passwordFile = $1
            },
            .value("--sign", "SECRET_KEY", "publish: sign the bundle with this minisign secret key") {
                $0.sign = $1
            },
            .value(
                "--key-password-file", "FILE",
                "publish: the --sign key's password, from a file only\nits owner may read (else minisign asks on a terminal)"
            ) {
                $0.keyPasswordFile = $1
            },
            .value(
                "--key", "PUBLIC_KEY",
                "publish: check the signature with this minisign public\nkey (its file, or its RW… line) before publishing"
            ) {
                $0.key = $1
            },
            .value(
                "--config", "FILE",
                "publish: check the signature with the trustedKeys (and\nrevokedKeys) of the hosts' services.json"
            ) {
                $0.config = $1
            },
            .value("--chunk", "BYTES", "publish: the largest piece published (default 524288)") {
                options, text throws(UsageError) in
                guard let bytes = Int(text), (1024...(256 << 20)).contains(bytes) else {
                    throw UsageError("'\(text)' is not 1024 to 268435456 bytes")
                }
                options.chunk = bytes
            },
            .value("--hosts", "GLOB", "rollout: the hosts whose id matches (kiosk-*)") { $0.hosts = $1 },
            .value("--file", "FILE", "rollout: the hosts listed in FILE, one id a line") { $0.file = $1 },
            .value("--waves", "LIST", "rollout: how many hosts each wave reaches in all\n(default 1,10%,50%,100%)") {
                options, text throws(UsageError) in
                _ = try FleetRollout.waves(text, hosts: 100)
                options.waves = text
            },
            .value("--max-failures", "N", "rollout: the failures allowed before it stops (default 0)") {
                options, text throws(UsageError) in
                guard let count = Int(text), count >= 0 else { throw UsageError("'\(text)' is not a count") }
                options.maxFailures = count
            },
            .value("--wait", "TIME", "rollout: how long a wave waits for its hosts' reports\n(90s, 5m, 1h; default 5m)")
            { options, text throws(UsageError) in options.wait = try FleetCommand.duration(text) },
            .value("--probation", "TIME", "rollout: the deploy's probation on each host") {
                options, text throws(UsageError) in options.probation = try FleetCommand.duration(text)
            },
            .flag("--resume", "rollout: go on with the rollout in progress") { $0.resume = true },
            .flag("--json", "status: print one JSON object") { $0.json = true },
        ])

    /// The text of `host fleet --help`.
    public static var help: String {
        """
        host fleet publish BUNDLE [--sign SECRET_KEY [--key-password-file FILE]]
                          [--key PUBLIC_KEY|--config FILE] [--chunk BYTES] [--broker ADDR]
        host fleet rollout DIGEST --hosts GLOB|--file LIST [--waves 1,10%,50%,100%]
                           [--max-failures N] [--wait 5m] [--probation TIME] [--resume]
        host fleet status [GLOB] [--json]
        host fleet cancel
          publish a bundle (a folder of plugin files, packed and signed; or a .tar with its
          .minisig, checked with --key or --config) retained on the broker and print its digest; roll it out wave by wave through each
          host's retained desired state, stopping and putting the failed wave back when more
          than N hosts fail or stay silent past --wait; show every host's reported state and
          the rollout's; cancel the rollout in progress

        \(table.help)
          exit status: \(ExitStatus.summary)
        """
    }

    /// Where the broker is and who we are to it.
    struct Connection {
        var broker: BrokerAddress
        var username: String?
        var password: [UInt8]?
    }

    /// A parsed command line.
    public struct Invocation: Sendable {
        public var action: Action
        public var operands: [String]
        public var options: Options
    }

    /// Parses `ACTION [operands] [options]`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        let parsed = try table.parse(arguments, from: Options())
        guard let word = parsed.operands.first else {
            throw table.error("give an action: \(Action.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let action = Action(rawValue: word) else {
            throw table.error(
                "unknown action '\(word)'"
                    + Suggestion.didYouMean(word, among: Action.allCases.map(\.rawValue)))
        }
        let operands = Array(parsed.operands.dropFirst())
        let options = parsed.options
        switch action {
        case .publish:
            guard operands.count == 1 else { throw table.error("publish: give one bundle folder or .tar file") }
            guard options.key == nil || options.config == nil else {
                throw table.error("publish: check the signature with --key or with --config, not both")
            }
            guard options.keyPasswordFile == nil || options.sign != nil else {
                throw table.error("publish: --key-password-file is the password of the --sign key: give --sign")
            }
        case .rollout:
            guard operands.count == 1 || (options.resume && operands.isEmpty) else {
                throw table.error("rollout: give the bundle's digest (or --resume)")
            }
            if let digest = operands.first, !isDigest(digest) {
                throw table.error("rollout: '\(digest)' is not a bundle digest (64 lowercase hex digits)")
            }
            guard options.resume || (options.hosts == nil) != (options.file == nil) else {
                throw table.error("rollout: give the hosts with --hosts GLOB or --file LIST (one of them)")
            }
        case .status:
            guard operands.count <= 1 else { throw table.error("status: give at most one GLOB") }
        case .cancel:
            guard operands.isEmpty else { throw table.error("cancel: takes no operand") }
        }
        do throws(MQTTSettingsProblem) { _ = try BrokerAddress.parse(options.broker) } catch {
            throw table.error("--broker: \(error.description.replacingSettingsKey())")
        }
        return Invocation(action: action, operands: operands, options: options)
    }

    /// Runs `invocation`, writing what it prints with `print` (stdout) and `note` (stderr).
    public static func run(
        _ invocation: Invocation, clock: FleetClock = .system, print: @escaping (String) -> Void,
        note: (String) -> Void
    ) -> ExitStatus {
        do throws(FleetError) {
            let connection = try connection(invocation.options)
            switch invocation.action {
            case .publish:
                return try FleetPublish.run(invocation, connection: connection, clock: clock, print: print, note: note)
            case .rollout:
                return try FleetRollout(invocation, connection: connection, clock: clock, print: print).run()
            case .status:
                return try FleetStatus.run(invocation, connection: connection, clock: clock, print: print)
            case .cancel:
                return try FleetRollout.cancel(
                    connection: connection, root: invocation.options.prefix, clock: clock, print: print)
            }
        } catch {
            note("host fleet \(invocation.action.rawValue): \(error.description)")
            return .error
        }
    }

    static func connection(_ options: Options) throws(FleetError) -> Connection {
        let broker: BrokerAddress
        do throws(MQTTSettingsProblem) { broker = try BrokerAddress.parse(options.broker) } catch {
            throw FleetError("--broker: \(error.description.replacingSettingsKey())")
        }
        var connection = Connection(broker: broker, username: options.username)
        if let path = options.passwordFile { connection.password = try password(path) }
        return connection
    }

    /// The password file's contents without a trailing newline; refused when group or others
    /// have any access to it, as the bridge's `passwordFile` is. `option` names it in errors.
    static func password(_ path: String, option: String = "--password-file") throws(FleetError) -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw FleetError("\(option) \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw FleetError(
                "\(option) \(path) is readable or writable by group or others (mode 0\(String(info.st_mode & 0o777, radix: 8))): refused (chmod 600 it)"
            )
        }
        var bytes: [UInt8]
        do { bytes = try InputFile.read(path, limit: 65535) } catch { throw FleetError("\(option) \(error)") }
        while let last = bytes.last, last == 10 || last == 13 { bytes.removeLast() }
        return bytes
    }

    /// `90s`, `5m`, `1h`, `1.5` (seconds): seconds, more than 0.
    static func duration(_ text: String) throws(UsageError) -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        var number = Substring(text)
        var unit = 1.0
        if let last = text.last, let scale = units[last] {
            number = number.dropLast()
            unit = scale
        }
        guard let value = Double(number), value > 0, value.isFinite else {
            throw UsageError("'\(text)' is not a duration (90s, 5m, 1h)")
        }
        return value * unit
    }

    static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

/// Why `host fleet` could not do what it was asked: the sentence names the thing (the broker,
/// the file, the host, the digest) and the reason.
struct FleetError: Error, CustomStringConvertible {
    enum Kind { case unreachable, refused, input }
    let kind: Kind
    let description: String

    init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    /// Bad input (a file, a folder, an option's value, the broker's record).
    init(_ description: String) { self.init(.input, description) }
}

/// `host fleet`'s time: a monotonic clock for its deadlines (`--wait`) and the wall clock for the
/// rollout's record; tests give their own.
public struct FleetClock: Sendable {
    /// Seconds on a monotonic clock.
    public var now: @Sendable () -> Double
    /// Seconds since 1970.
    public var wall: @Sendable () -> Double

    public init(now: @escaping @Sendable () -> Double, wall: @escaping @Sendable () -> Double) {
        self.now = now
        self.wall = wall
    }

    /// The machine's clocks.
    public static let system = FleetClock(
        now: {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        },
        wall: {
            var time = timespec()
            clock_gettime(CLOCK_REALTIME, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        })
}

extension String {
    /// A broker-address error as the bridge words it (`settings.broker "…"`), for `--broker`.
    fileprivate func replacingSettingsKey() -> String {
        hasPrefix("settings.broker ") ? String(dropFirst("settings.broker ".count)) : self
    }
}
