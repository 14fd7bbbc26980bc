import Locking
import ServiceABI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Services attached by ServiceKitTesting's `TestHost` to a table of its own, without a
/// `host` binary. Tests run in parallel, so unlike ``Registry`` this is guarded by a lock;
/// a real plugin never adds to it, and ``ServicePlugin/host(for:)`` looks here only for a
/// service it did not find among the plugin's own.
package enum TestAttachments {
    /// Each test-attached instance's host context, by the instance's identity.
    private static let hosts = Locked<[ObjectIdentifier: HostContext]>([:])

    /// Attaches `instance` as service `id` to `table`: from now on its `host` calls `table`.
    /// The caller keeps `table` valid until ``detach(_:)``.
    package static func attach(_ instance: any ApplicationService, id: String, to table: UnsafePointer<sh_host>) {
        hosts.withLock { $0[ObjectIdentifier(instance)] = HostContext(raw: table, serviceID: id) }
    }

    /// Undoes ``attach(_:id:to:)``.
    package static func detach(_ instance: any ApplicationService) {
        _ = hosts.withLock { $0.removeValue(forKey: ObjectIdentifier(instance)) }
    }

    /// The host context `instance` was attached with, or nil.
    static func host(for instance: some ApplicationService) -> HostContext? {
        hosts.withLock { $0[ObjectIdentifier(instance)] }
    }
}

extension TestAttachments {
    /// The events `instance` handles: the lifecycle, and the event of each capability protocol
    /// its class adopts, as the generated entry's manifest checks require of a plugin.
    package static func events(of instance: any ApplicationService) -> [EventKind] {
        var kinds: [EventKind] = [
            .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive, .didEnterBackground,
            .willEnterForeground, .willTerminate,
        ]
        let adopted: [(Bool, EventKind)] = [
            (instance is any NotificationReceiving, .notification),
            (instance is any MemoryWarningHandling, .didReceiveMemoryWarning),
            (instance is any PushPresenting, .willPresentNotification),
            (instance is any NotificationResponseHandling, .didReceiveNotificationResponse),
            (instance is any BackgroundFetching, .didReceiveRemoteNotification),
            (instance is any DeviceTokenReceiving, .didRegisterForRemoteNotifications),
            (instance is any DeviceTokenErrorHandling, .didFailToRegisterForRemoteNotifications),
            (instance is any URLHandling, .openURL),
            (instance is any UserActivityHandling, .continueUserActivity),
            (instance is any AuthorizationObserving, .didChangeNotificationAuthorization),
            (instance is any Answering, .request),
            (instance is any SettingsObserving, .didChangeSettings),
            (instance is any HealthChecking, .healthCheck),
            (instance is any StateHandingOver, .willReload),
            (instance is any DependencyStopObserving, .dependencyWillStop),
            (instance is any DependencyStartObserving, .dependencyDidStart),
            (instance is any ShortcutHandling, .performActionForShortcutItem),
            (instance is any ProtectedDataUnavailableObserving, .protectedDataWillBecomeUnavailable),
            (instance is any ProtectedDataAvailableObserving, .protectedDataDidBecomeAvailable),
            (instance is any SignificantTimeChangeObserving, .significantTimeChange),
        ]
        kinds += adopted.filter(\.0).map(\.1)
        return kinds
    }

    /// What an in-process descriptor's `context` points at.
    private final class InProcess {
        let instance: any ApplicationService
        let id: String
        let handle: (UnsafePointer<sh_event>, (UnsafePointer<sh_event>) -> Int32) -> Int32
        init(
            _ instance: any ApplicationService, id: String,
            handle: @escaping (UnsafePointer<sh_event>, (UnsafePointer<sh_event>) -> Int32) -> Int32
        ) {
            self.instance = instance
            self.id = id
            self.handle = handle
        }
    }

    /// An `sh_service` for an instance that already exists (TestHost's service under test),
    /// for a host in this process: its `attach` attaches `instance` as `id` (``attach(_:id:to:)``),
    /// its `handle_event` calls `handle` with the event and the SDK's dispatch to `instance`, so
    /// the caller sees each event the host delivers and may hand the SDK another event (one
    /// whose completion it observes). Free it with ``release(_:)`` once the host is gone.
    package static func descriptor(
        for instance: any ApplicationService, id: String,
        handle: @escaping (UnsafePointer<sh_event>, (UnsafePointer<sh_event>) -> Int32) -> Int32
    ) -> UnsafePointer<sh_service> {
        let service = UnsafeMutablePointer<sh_service>.allocate(capacity: 1)
        service.initialize(
            to: sh_service(
                size: UInt32(MemoryLayout<sh_service>.size), version: SH_SERVICE_VERSION, id: UnsafePointer(strdup(id)),
                context: Unmanaged.passRetained(InProcess(instance, id: id, handle: handle)).toOpaque(),
                attach: { service, host in
                    guard let context = service?.pointee.context, let host else { return Int32(SH_INVALID) }
                    let made = Unmanaged<InProcess>.fromOpaque(context).takeUnretainedValue()
                    TestAttachments.attach(made.instance, id: made.id, to: host)
                    return Int32(SH_OK)
                },
                handle_event: { service, event in
                    guard let context = service?.pointee.context, let event else { return Int32(SH_INVALID) }
                    let made = Unmanaged<InProcess>.fromOpaque(context).takeUnretainedValue()
                    return made.handle(event) { ServicePlugin.dispatch($0, to: made.instance) }
                }))
        return UnsafePointer(service)
    }

    /// Frees a descriptor from ``descriptor(for:id:handle:)`` and detaches its instance.
    package static func release(_ descriptor: UnsafePointer<sh_service>) {
        let service = UnsafeMutablePointer(mutating: descriptor)
        if let context = service.pointee.context {
            let made = Unmanaged<InProcess>.fromOpaque(context).takeRetainedValue()
            detach(made.instance)
        }
        free(UnsafeMutableRawPointer(mutating: service.pointee.id))
        service.deinitialize(count: 1)
        service.deallocate()
    }
}
