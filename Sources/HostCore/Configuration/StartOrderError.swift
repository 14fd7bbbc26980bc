/// Why no start order satisfies the configuration, naming every service involved.
public struct StartOrderError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What is wrong.
    public enum Code: Equatable, Sendable {
        /// `service` requires `requirement`, which no plugin provides.
        case requirementMissing(service: String, requirement: String)
        /// `service` requires `requirement`, which the configuration disables.
        case requirementDisabled(service: String, requirement: String)
        /// `service` requires `requirement`, which is installed but not configured while
        /// `--only-configured` is set.
        case requirementNotConfigured(service: String, requirement: String)
        /// The services depend on each other in a circle: each element must start after the
        /// next, and the last element repeats the first (`a → b → c → a`); `origins[i]` says
        /// where the edge from element `i` to element `i + 1` comes from.
        case cycle([String], origins: [DependencyOrigin])
    }

    /// What is wrong.
    public let code: Code

    /// An error for `code`.
    public init(_ code: Code) { self.code = code }

    /// One line naming the services involved.
    public var description: String {
        switch code {
        case .requirementMissing(let service, let requirement):
            "\(service) requires \(requirement), which no plugin provides"
        case .requirementDisabled(let service, let requirement):
            "\(service) requires \(requirement), which is disabled in the configuration"
        case .requirementNotConfigured(let service, let requirement):
            "\(service) requires \(requirement), which is not in the configuration and --only-configured is set"
        case .cycle(let services, let origins):
            "dependency cycle: \(services.joined(separator: " → ")) (each must start after the next; "
                + zip(services, zip(services.dropFirst(), origins)).map { "\($0) → \($1.0): \($1.1)" }
                .joined(separator: ", ") + ")"
        }
    }
}
