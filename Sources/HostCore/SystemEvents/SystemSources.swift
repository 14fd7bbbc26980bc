/// The sources a host runs (``SystemSource``): the built-in ones, each switched on or off by
/// `--source NAME=on|off` (on by default where its system part is present). Started after the
/// launch; each says `source.on` or `source.off` with why, once.
@MainActor
public final class SystemSources {
    /// The built-in sources, in start order; `notifications` is the configuration's, which
    /// `--source notifications=on` overrides.
    public static func builtIn(
        memory: MemoryPressureSettings = MemoryPressureSettings(),
        notifications: DesktopNotificationSettings = .init(), switches: [String: Bool] = [:]
    ) -> [any SystemSource] {
        var notifications = notifications
        if switches["notifications"] == true { notifications.enabled = true }
        return [
            SleepSource(), LockSource(), TimeSource(), NetworkSource(), MemorySource(memory),
            NotificationSource(settings: notifications),
        ]
    }

    /// The names of the built-in sources.
    public nonisolated static let builtInNames = ["sleep", "lock", "time", "network", "memory", "notifications"]

    /// Each source and its state, in the order they said it, once ``start(_:driver:switches:)`` ran
    /// (a source waiting on a peer's answer is added when it came).
    public private(set) var states: [(name: String, state: SourceState)] = []
    private var running: [any SystemSource] = []

    /// No source started yet.
    public init() {}

    /// Starts every source of `sources` that `switches` does not turn off, logging each state
    /// when the source says it.
    public func start(_ sources: [any SystemSource], driver: AppDriver, switches: [String: Bool]) {
        for source in sources {
            let name = source.name
            guard switches[name] != false else {
                said(source, .off("turned off (--source \(name)=off)"), log: driver.log)
                continue
            }
            source.start(driver) { [weak self] state in self?.said(source, state, log: driver.log) }
        }
    }

    private func said(_ source: any SystemSource, _ state: SourceState, log: Log) {
        states.append((source.name, state))
        if state.isOn { running.append(source) }
        Self.log(source.name, state, to: log)
    }

    /// What each of `sources` would be, without starting any (`host check`).
    public static func check(_ sources: [any SystemSource], switches: [String: Bool]) -> [(
        name: String, state: SourceState
    )] {
        sources.map { source in
            (
                source.name,
                switches[source.name] == false ? .off("turned off (--source \(source.name)=off)") : source.check()
            )
        }
    }

    static func log(_ name: String, _ state: SourceState, to log: Log) {
        switch state {
        case .on(let detail):
            log.info(
                "host", "source \(name) on: \(detail)", event: .sourceOn, .string("source", name),
                .string("reason", detail))
        case .off(let reason):
            log.info(
                "host", "source \(name) off: \(reason)", event: .sourceOff, .string("source", name),
                .string("reason", reason))
        }
    }
}
