import ServiceABI

/// The state the instance a service replaces handed over when asked `willReload`
/// (``StateHandingOver``): its bytes, and which instance wrote them, so the new version reads
/// them as the old one wrote them (Erlang/OTP's `code_change` gets the old version too).
///
/// In ``LaunchOptions/restoredState`` of both launch events of the start that follows a reload,
/// a restart by request or a new worker; nil at any other start (a first launch, a crash).
public struct RestoredState: Sendable, Equatable {
    /// The largest state the host hands over: 1 MiB (`SH_RELOAD_STATE_MAX`).
    public static let largest = Int(SH_RELOAD_STATE_MAX)

    /// The bytes, as the old instance returned them from `willReload()`.
    public var bytes: [UInt8]
    /// The id of the instance that handed them over.
    public var serviceID: String
    /// Its version (its manifest's), e.g. "1.2.0".
    public var version: String

    /// A state; for tests and previews.
    public init(bytes: [UInt8], serviceID: String, version: String) {
        self.bytes = bytes
        self.serviceID = serviceID
        self.version = version
    }
}
