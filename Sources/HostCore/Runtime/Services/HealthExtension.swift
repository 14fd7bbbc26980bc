import Glibc
import ServiceABI

/// Extension `dev.servicehost.health/1` (health.h): a service reports its health whenever it
/// knows, the thunk checking the status and copying the reason, then the service's
/// HostFunctions (in process: through the mailbox to the main thread; in a worker: one frame).
enum HealthExtension {
    /// Its row: the id and the table, host-owned and never freed.
    static let row: HostExtensions.Row = {
        return HostExtensions.Row(
            id: SH_HEALTH_EXTENSION_ID,
            table: sh_health_reporting(
                size: UInt32(MemoryLayout<sh_health_reporting>.size), version: SH_HEALTH_EXTENSION_VERSION,
                report: { host, status, reason in
                    guard let functions = HostAdapter.functions(host), HealthStatus(rawValue: status) != nil else {
                        return Int32(SH_INVALID)
                    }
                    let text = reason.map {
                        Self.reason(Array(UnsafeRawBufferPointer(start: UnsafeRawPointer($0), count: strlen($0))))
                    }
                    return functions.reportHealth(status, reason: text)
                }))
    }()

    /// A reason as kept: its first ``Host/longestHealthReason`` bytes, as text (bytes that are
    /// not UTF-8 read as U+FFFD).
    static func reason(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(Host.longestHealthReason).map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}
