import ServiceABI
import ServiceJSON

/// The device token for remote notifications, the data of
/// `didRegisterForRemoteNotifications(deviceToken:)` (a copy of `sh_device_token`).
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    /// The token's bytes.
    public var bytes: [UInt8]
    /// The same bytes as lowercase hex: what a push provider is usually sent.
    public var hex: String

    /// Creates a token from its bytes; for tests and previews.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
        hex = Hex.string(bytes)
    }

    /// Copies the host's `sh_device_token` (valid only during the event).
    init(_ raw: UnsafePointer<sh_device_token>) {
        let token = raw.copyWithinDeclaredSize()
        let size = Int(token.size)
        let lengthEnd = MemoryLayout<sh_device_token>.offset(of: \.length)! + MemoryLayout<Int>.size
        if size >= lengthEnd, let bytes = token.bytes {
            self.init(bytes: Array(UnsafeBufferPointer(start: bytes, count: token.length)))
        } else {
            self.init(bytes: [])
        }
    }

    /// The hex form.
    public var description: String { hex }
}
