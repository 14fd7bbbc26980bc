/// UIKit's application state machine: which events lead from one state to another.
///
/// The legal edges are notRunning → inactive (willFinishLaunching, didFinishLaunching),
/// notRunning → background (the same two events, for an app launched into the background
/// by a background push or `--launch-state background`, as iOS launches one), inactive ⇄ active (didBecomeActive, willResignActive), inactive ⇄ background
/// (didEnterBackground, willEnterForeground) and background → notRunning (willTerminate).
/// A request for any other move is answered with the legal path through the states in
/// between (active → background passes through willResignActive), so an illegal
/// transition is never delivered.
public struct AppLifecycle: Sendable {
    /// The state the delivered events have left the app in.
    public private(set) var state: AppState = .notRunning
    /// Whether willTerminate was delivered: a terminated app never runs again.
    public private(set) var hasTerminated = false

    /// A lifecycle in the not-running state.
    public init() {}

    /// The events that take the app from its state to `target`, in order; empty when it is there.
    ///
    /// `target == .notRunning` means termination. Throws once the app has terminated.
    public func steps(to target: AppState) throws(TransitionError) -> [EventKind] {
        if hasTerminated { throw TransitionError(from: state, to: target, reason: "the app has terminated") }
        switch (state, target) {
        case (.notRunning, .inactive): return [.willFinishLaunching, .didFinishLaunching]
        case (.notRunning, .active): return [.willFinishLaunching, .didFinishLaunching, .didBecomeActive]
        case (.notRunning, .background): return [.willFinishLaunching, .didFinishLaunching, .didEnterBackground]
        case (.inactive, .active): return [.didBecomeActive]
        case (.inactive, .background): return [.didEnterBackground]
        case (.inactive, .notRunning): return [.didEnterBackground, .willTerminate]
        case (.active, .inactive): return [.willResignActive]
        case (.active, .background): return [.willResignActive, .didEnterBackground]
        case (.active, .notRunning): return [.willResignActive, .didEnterBackground, .willTerminate]
        case (.background, .inactive): return [.willEnterForeground]
        case (.background, .active): return [.willEnterForeground, .didBecomeActive]
        case (.background, .notRunning): return [.willTerminate]
        // Termination before launch has nothing to take down.
        case (.notRunning, .notRunning), (.inactive, .inactive), (.active, .active), (.background, .background):
            return []
        }
    }

    /// Records that `kind` was delivered. Traps on an edge that `steps(to:)` would never give.
    public mutating func apply(_ kind: EventKind) {
        guard let next = kind.stateAfter else { return }
        precondition(Self.isLegal(from: state, kind), "illegal lifecycle edge \(state.name) --\(kind.name)-->")
        state = next
        if kind == .willTerminate { hasTerminated = true }
    }

    /// Records a launch event of a launch into the background: iOS launches an app woken by a
    /// background push with `applicationState == .background` from willFinishLaunching on,
    /// and delivers no didEnterBackground (the app was never in the foreground).
    public mutating func applyBackgroundLaunch(_ kind: EventKind) {
        precondition(
            (state, kind) == (.notRunning, .willFinishLaunching) || (state, kind) == (.background, .didFinishLaunching),
            "illegal background launch edge \(state.name) --\(kind.name)-->")
        state = .background
    }

    private static func isLegal(from state: AppState, _ kind: EventKind) -> Bool {
        switch (state, kind) {
        case (.notRunning, .willFinishLaunching), (.inactive, .didFinishLaunching),
            (.inactive, .didBecomeActive), (.active, .willResignActive),
            (.inactive, .didEnterBackground), (.background, .willEnterForeground),
            (.background, .willTerminate):
            return true
        default:
            return false
        }
    }
}

/// A lifecycle move that cannot happen.
public struct TransitionError: Error, CustomStringConvertible, Equatable {
    /// The state the app was in.
    public let from: AppState
    /// The state asked for.
    public let to: AppState
    /// Why the move is refused.
    public let reason: String

    public var description: String { "cannot move from \(from.name) to \(to.name): \(reason)" }
}
