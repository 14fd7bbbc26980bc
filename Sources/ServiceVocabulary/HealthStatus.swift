/// A service's health, the answer to `healthCheck` (`SH_HEALTH_*`), as Greengrass and Azure IoT
/// Edge report a module's: alive is not the same as useful.
///
/// Worse states sort last, so the worse of two is the maximum.
public enum HealthStatus: Int32, CaseIterable, Comparable, NamedCase {
    /// Working (`SH_HEALTH_HEALTHY`).
    case healthy = 0
    /// Working in part: shown, never acted on (`SH_HEALTH_DEGRADED`).
    case degraded = 1
    /// Alive but useless: counted towards `onUnhealthy` (`SH_HEALTH_UNHEALTHY`).
    case unhealthy = 2

    /// "healthy", "degraded" or "unhealthy".
    public var name: String {
        switch self {
        case .healthy: "healthy"
        case .degraded: "degraded"
        case .unhealthy: "unhealthy"
        }
    }

    /// Whether `a` is the better state.
    public static func < (a: HealthStatus, b: HealthStatus) -> Bool { a.rawValue < b.rawValue }
}
