/// A value of the C header's vocabulary that ServiceHost shows by name: in logs, traces,
/// `host ctl` replies, manifests and on the command line.
///
/// Implementation requirements: `name` is unique among `allCases` and never changes once
/// released (scripts, log shippers and manifests match it).
public protocol NamedCase: CaseIterable, CustomStringConvertible, Sendable {
    /// The name ServiceHost shows: `didBecomeActive`, `foregroundActive`, `newData`.
    var name: String { get }
}

extension NamedCase {
    /// The case called `name`, or nil when there is none.
    public init?(name: String) {
        guard let value = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = value
    }

    /// The name, so string interpolation shows what logs show.
    public var description: String { name }
}
