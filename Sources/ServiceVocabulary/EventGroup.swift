/// A name in a manifest's `events` that stands for several events (besides `all`, which
/// servicehost-metagen adds: every event).
public enum EventGroup: String, CaseIterable, NamedCase {
    /// The seven lifecycle events, willFinishLaunching to willTerminate (`SH_EVENTS_LIFECYCLE`).
    case lifecycle
    /// The three notification events, the two device-token events and the authorization change.
    case push
    /// The nine scene events (`SH_EVENTS_SCENES`); a Swift service listing one adopts `SceneService`.
    case scenes

    /// The group's name in manifests and docs.
    public var name: String { rawValue }

    /// The group's events, in kind order.
    public var kinds: [EventKind] { EventKind.allCases.filter { $0.group == self } }
}
