/// The sources a host runs (``SystemSource``): the built-in ones, each switched on or off by
/// `--source NAME=on|off` or the configuration's `"sources": {"NAME": "on"|"off"}` (the option
/// wins; on by default where its system part is present). Started after the
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
            SleepSource(), LockSource(), TimeSource(), NetworkSource(), PowerSource(), MemorySource(memory),
            NotificationSource(settings: notifications),
        ]
    }

    /// The names of the built-in sources.
    public nonisolated static let builtInNames = [
        "sleep", "lock", "time", "network", "power", "memory", "notifications",
    ]

    /// The requests the built-in sources answer with their current state (``SystemSource/stateRequest``).
    public nonisolated static let stateRequests: Set<String> = [
        NetworkSource.currentRequest, PowerSource.currentRequest,
    ]

    /// Each source and its state, in the order they said it, once
    /// ``start(_:driver:switches:configured:)`` ran (a source waiting on a peer's answer is added
    /// when it came).
    public private(set) var states: [(name: String, state: SourceState)] = []
    private var running: [any SystemSource] = []

    /// No source started yet.
    public init() {}

    /// Starts every source of `sources` that `switches` (`--source`) or else `configured` (the
    /// configuration's `sources`) does not turn off, logging each state when the source says it.
    public func start(
        _ sources: [any SystemSource], driver: AppDriver, switches: [String: Bool], configured: [String: Bool] = [:]
    ) {
        for source in sources {
            if let off = Self.turnedOff(source.name, switches: switches, configured: configured) {
                said(source, off, driver: driver)
                continue
            }
            source.start(driver) { [weak self] state in self?.said(source, state, driver: driver) }
        }
    }

    private func said(_ source: any SystemSource, _ state: SourceState, driver: AppDriver) {
        states.append((source.name, state))
        if state.isOn { running.append(source) }
        if case .off(let reason) = state, let request = source.stateRequest {
            driver.setCurrentStateUnavailable(request, reason: "the \(source.name) source is off: \(reason)")
        }
        Self.log(source.name, state, to: driver.log)
    }

    /// What each of `sources` would be, without starting any (`host check`).
    public static func check(
        _ sources: [any SystemSource], switches: [String: Bool], configured: [String: Bool] = [:]
    ) -> [(name: String, state: SourceState)] {
        sources.map { source in
            (source.name, turnedOff(source.name, switches: switches, configured: configured) ?? source.check())
        }
    }

    /// Off, and by what, when the option (which wins) or else the configuration turns `name` off.
    static func turnedOff(_ name: String, switches: [String: Bool], configured: [String: Bool]) -> SourceState? {
        if let on = switches[name] { return on ? nil : .off("turned off (--source \(name)=off)") }
        guard configured[name] == false else { return nil }
        return .off("turned off (\"sources\": {\"\(name)\": \"off\"} in the configuration)")
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
