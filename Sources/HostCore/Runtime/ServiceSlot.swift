import ServiceABI

/// One running service as the dispatcher sees it.
@MainActor
public final class ServiceSlot {
    /// The static metadata.
    public let metadata: ServiceMetadata
    /// The library it came from.
    public let path: String
    /// The last failure the service reported, for `list` and logs.
    public internal(set) var lastError: String?

    let descriptor: UnsafePointer<sh_service>
    // Cached from the descriptor: the plugin promises it never changes.
    let handleEvent: @convention(c) (UnsafePointer<sh_service>?, UnsafePointer<sh_event>?) -> Int32

    /// The service id.
    public var id: String { metadata.id }

    init(_ info: LoadedServiceInfo) {
        metadata = info.metadata
        path = info.path
        descriptor = info.descriptor
        handleEvent = info.descriptor.pointee.handle_event!
    }
}
