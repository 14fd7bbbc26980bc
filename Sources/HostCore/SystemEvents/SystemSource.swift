/// A part outside the services that moves the app when the machine does: the laptop suspends,
/// the session locks, memory runs low. The built-in sources (``SystemSources/builtIn``) are the
/// first users of this interface; another part adds a source the same way, driving the host
/// only through the ``AppDriver`` it is given.
///
/// A source is switched on and off by name (`--source NAME=off`); one whose system part is
/// absent says why in its ``SourceState/off(_:)``, logged once as `source.off`, and the host runs
/// as it would without it.
@MainActor
public protocol SystemSource: AnyObject {
    /// Its name in options and log lines: "sleep".
    var name: String { get }

    /// Whether it could run here, without starting (for `host check`).
    func check() -> SourceState

    /// Starts driving the app through `driver`: on, or off with the reason (nothing started).
    func start(_ driver: AppDriver) -> SourceState

    /// The request name the host answers with this source's current state (set with
    /// ``AppDriver/setCurrentState(_:_:)``), "network.current"; nil for a source without one.
    /// While the source is off the request answers SH_NOT_FOUND with why.
    var stateRequest: String? { get }
}

extension SystemSource {
    /// No current state to read.
    public var stateRequest: String? { nil }
}

/// Whether a source runs, and why (or why not).
public enum SourceState: Sendable, Equatable {
    /// Running; the text says on what ("logind on the system bus").
    case on(String)
    /// Not running; the text says why, in words a user can act on.
    case off(String)

    /// Whether the source runs.
    public var isOn: Bool {
        if case .on = self { return true }
        return false
    }

    /// The detail or the reason.
    public var text: String {
        switch self {
        case .on(let text), .off(let text): text
        }
    }
}
