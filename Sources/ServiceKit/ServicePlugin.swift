import ServiceABI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The plugin side of the ServiceHost C ABI: turns `ApplicationService`
/// classes into the `sh_plugin` / `sh_service` tables the host calls.
///
/// You do not call this yourself. Apply the `ServiceMetadata` build plugin to
/// a target and put a `servicehost.json` manifest next to its sources (list
/// it under `exclude:`); the plugin generates the target's static metadata
/// records (ELF section `servicehost_meta`) and its exported entry,
/// `servicehost_entry`, which calls ``entry(_:services:)``.
///
/// Manifest format (`servicehost.json`, strict JSON; unknown keys are errors):
/// ```json
/// {
///   "services": [
///     { "id": "dev.servicehost.logger", "type": "LoggerService",
///       "name": "Logger", "version": "1.0.0",
///       "events": ["lifecycle", "notification"], "priority": 0 }
///   ]
/// }
/// ```
/// - `services` (required, non-empty): one entry per service in the library.
/// - `id` (required): reverse-DNS, letters, digits, `-` and `_` in at least
///   two dot-separated labels, at most 127 bytes; unique.
/// - `type` (required): the Swift class conforming to ``ApplicationService``,
///   created with `init()`.
/// - `name` (default: `type`): human-readable, at most 63 bytes.
/// - `version` (default `"0.0.0"`): the service's version, at most 31 bytes.
/// - `events` (default `[]`): event names (``EventKind/name``: `didBecomeActive`,
///   `openURL`, …) and the groups ``EventGroup`` names (`lifecycle`, `push`, `scenes`),
///   or `all`. A type listing a scene event must adopt ``SceneService``, and each event
///   outside the lifecycle needs its capability protocol (``URLHandling``, …): the
///   generated entry checks both ways, at the service's line of the manifest. The host sends
///   only these.
/// - `priority` (default 0): an integer in Int32; higher runs earlier.
/// - `urls` (default `[]`): URL schemes (`"myapp"`) or schemes and hosts
///   (`"https://example.com"`) the service owns: the host asks only it for
///   them. Needs `openURL` (or `sceneOpenURLContexts`) in `events`.
/// - `activities` (default `[]`): user activity types the service owns.
///   Needs `continueUserActivity` (or `sceneContinueUserActivity`) in `events`.
/// - `subscribes` (default `[]`): notification names the service receives
///   (`"*"`: all; more at run time with ``HostContext/subscribe(_:)``). Needs
///   `notification` in `events`.
/// - `sceneRoles` (default `[]`: every role): the scene roles (`"main"`, `"car"`,
///   `"external"`) whose scenes the service hears about. Needs a scene event.
/// - Each `urls`, `activities`, `subscribes` and `sceneRoles` value is at most 119 bytes.
public enum ServicePlugin {
    /// The ServiceKit version, written into every plugin's metadata record
    /// (`sdk_version`, at most 15 bytes). servicehost-metagen reads this
    /// constant, so it is the single source of the SDK version.
    public static let sdkVersion = "0.1.0"

    /// One service of a plugin: its id and how to create it.
    public struct Service {
        /// The service's reverse-DNS id; equals the id in its metadata record.
        public let id: String
        /// Creates the service instance, once, when the host attaches it.
        public let make: () -> any ApplicationService

        /// Creates a service entry for `id`, created by `make`.
        public init(id: String, make: @escaping () -> any ApplicationService) {
            self.id = id
            self.make = make
        }
    }

    /// Answers the host's `servicehost_entry` call: negotiates the ABI
    /// version and returns the plugin's `sh_plugin`.
    ///
    /// Picks the highest ABI version both sides speak; when none fits,
    /// answers `SH_ABI_VERSION` with no services and an error string. The
    /// answer lives for the process lifetime; a second call returns the
    /// first answer.
    /// - Parameters:
    ///   - offer: the host's `const sh_host_offer *`.
    ///   - services: the plugin's services, in manifest order.
    /// - Returns: the `const sh_plugin *` for the host.
    public static func entry(_ offer: UnsafeRawPointer?, services: [Service]) -> UnsafeRawPointer? {
        if let answer = Registry.answer { return UnsafeRawPointer(answer) }
        let plugin = UnsafeMutablePointer<sh_plugin>.allocate(capacity: 1)
        plugin.initialize(
            to: sh_plugin(
                size: UInt32(MemoryLayout<sh_plugin>.size), version: SH_PLUGIN_VERSION,
                abi_version: SH_ABI_VERSION, service_count: 0, services: nil, error: nil))
        Registry.answer = UnsafePointer(plugin)

        switch negotiate(offer) {
        case .failure(let failure):
            plugin.pointee.error = UnsafePointer(strdup(failure.message))
        case .success(let version):
            plugin.pointee.abi_version = version
            let table = UnsafeMutablePointer<UnsafePointer<sh_service>?>.allocate(capacity: max(services.count, 1))
            for (index, service) in services.enumerated() {
                let slot = ServiceSlot(id: service.id, make: service.make)
                Registry.slots.append(slot)
                table[index] = UnsafePointer(makeService(for: slot))
            }
            plugin.pointee.services = UnsafePointer(table)
            plugin.pointee.service_count = UInt32(services.count)
        }
        return UnsafeRawPointer(plugin)
    }

    /// The ABI version to speak with the host, or why there is none.
    static func negotiate(_ offer: UnsafeRawPointer?) -> Result<UInt32, NegotiationError> {
        guard let offer else {
            return .failure(NegotiationError("ServiceKit \(sdkVersion): servicehost_entry called without an offer"))
        }
        let size = Int(offer.load(fromByteOffset: 0, as: UInt32.self))
        let maxOffset = MemoryLayout<sh_host_offer>.offset(of: \.abi_max)!
        guard size >= maxOffset + 4 else {
            return .failure(NegotiationError("ServiceKit \(sdkVersion): the host's offer is too small (\(size) bytes)"))
        }
        let hostMin = offer.load(fromByteOffset: MemoryLayout<sh_host_offer>.offset(of: \.abi_min)!, as: UInt32.self)
        let hostMax = offer.load(fromByteOffset: maxOffset, as: UInt32.self)
        let low = max(SH_ABI_VERSION_MIN, hostMin)
        let high = min(SH_ABI_VERSION, hostMax)
        guard low <= high else {
            return .failure(
                NegotiationError(
                    "ServiceKit \(sdkVersion) speaks ABI \(SH_ABI_VERSION_MIN)...\(SH_ABI_VERSION), "
                        + "the host offers \(hostMin)...\(hostMax)"))
        }
        return .success(high)
    }

    /// A failed negotiation's message.
    struct NegotiationError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Builds the never-freed `sh_service` for one slot.
    static func makeService(for slot: ServiceSlot) -> UnsafeMutablePointer<sh_service> {
        let service = UnsafeMutablePointer<sh_service>.allocate(capacity: 1)
        service.initialize(
            to: sh_service(
                size: UInt32(MemoryLayout<sh_service>.size),
                version: SH_SERVICE_VERSION,
                id: UnsafePointer(strdup(slot.id)),
                // Retained for the process lifetime: the plugin is never unloaded.
                context: Unmanaged.passRetained(slot).toOpaque(),
                attach: { service, host in
                    guard let context = service?.pointee.context else { return Int32(SH_INVALID) }
                    return Unmanaged<ServiceSlot>.fromOpaque(context).takeUnretainedValue().attach(host)
                },
                handle_event: { service, event in
                    guard let context = service?.pointee.context, let event else { return Int32(SH_INVALID) }
                    let slot = Unmanaged<ServiceSlot>.fromOpaque(context).takeUnretainedValue()
                    guard let instance = slot.instance else { return Int32(SH_ERROR) }
                    return ServicePlugin.dispatch(event, to: instance)
                }))
        return service
    }

    /// Calls the method for `event` on `instance`; allocates nothing for
    /// events without data (the lifecycle events after launch). An event outside the
    /// lifecycle reaches the capability protocol that handles it (`URLHandling`, …), which
    /// the generated entry made sure the class adopts; `SH_UNSUPPORTED` otherwise.
    ///
    /// Data that points into host memory (push payloads, userInfo) is read lazily by
    /// the service; when the method returns, `endEvent()` copies whatever the service
    /// kept, because the host frees that memory once `handle_event` returns.
    static func dispatch(_ event: UnsafePointer<sh_event>, to instance: any ApplicationService) -> Int32 {
        let size = Int(event.pointee.size)
        let data =
            size >= MemoryLayout<sh_event>.offset(of: \.data)! + MemoryLayout<Int>.size
            ? event.pointee.data : nil
        // A kind this SDK does not know comes from a newer host.
        guard let kind = EventKind(rawValue: event.pointee.kind) else { return Int32(SH_UNSUPPORTED) }
        // Exhaustive, so a kind added to the vocabulary fails the build here until handled.
        switch kind {
        case .willFinishLaunching:
            var options = LaunchOptions(data?.assumingMemoryBound(to: sh_launch_options.self))
            defer { options.endEvent() }
            return answer(instance.willFinishLaunching(options))
        case .didFinishLaunching:
            var options = LaunchOptions(data?.assumingMemoryBound(to: sh_launch_options.self))
            defer { options.endEvent() }
            return answer(instance.didFinishLaunching(options))
        case .didBecomeActive:
            instance.didBecomeActive()
        case .willResignActive:
            instance.willResignActive()
        case .didEnterBackground:
            instance.didEnterBackground()
        case .willEnterForeground:
            instance.willEnterForeground()
        case .willTerminate:
            instance.willTerminate()
        case .notification:
            guard let service = instance as? any NotificationReceiving else { return Int32(SH_UNSUPPORTED) }
            service.didReceive(ServiceNotification(data?.assumingMemoryBound(to: sh_notification.self)))
        case .didReceiveMemoryWarning:
            guard let service = instance as? any MemoryWarningHandling else { return Int32(SH_UNSUPPORTED) }
            service.didReceiveMemoryWarning()
        case .protectedDataWillBecomeUnavailable:
            guard let service = instance as? any ProtectedDataUnavailableObserving else { return Int32(SH_UNSUPPORTED) }
            service.protectedDataWillBecomeUnavailable()
        case .protectedDataDidBecomeAvailable:
            guard let service = instance as? any ProtectedDataAvailableObserving else { return Int32(SH_UNSUPPORTED) }
            service.protectedDataDidBecomeAvailable()
        case .significantTimeChange:
            guard let service = instance as? any SignificantTimeChangeObserving else { return Int32(SH_UNSUPPORTED) }
            service.significantTimeChange()
        case .willPresentNotification:
            guard let service = instance as? any PushPresenting else { return Int32(SH_UNSUPPORTED) }
            guard let push = data?.assumingMemoryBound(to: sh_push.self) else { return Int32(SH_INVALID) }
            var notification = PushNotification(push)
            defer { notification.endEvent() }
            service.willPresent(notification, completion: PresentationCompletion(completion(of: event)))
        case .didReceiveNotificationResponse:
            guard let service = instance as? any NotificationResponseHandling else { return Int32(SH_UNSUPPORTED) }
            guard let push = data?.assumingMemoryBound(to: sh_push.self) else { return Int32(SH_INVALID) }
            var response = NotificationResponse(push)
            defer { response.notification.endEvent() }
            service.didReceive(response, completion: ResponseCompletion(completion(of: event)))
        case .didReceiveRemoteNotification:
            guard let service = instance as? any BackgroundFetching else { return Int32(SH_UNSUPPORTED) }
            guard let push = data?.assumingMemoryBound(to: sh_push.self) else { return Int32(SH_INVALID) }
            var notification = PushNotification(push)
            defer { notification.endEvent() }
            service.didReceiveRemoteNotification(notification, completion: FetchCompletion(completion(of: event)))
        case .didRegisterForRemoteNotifications:
            guard let service = instance as? any DeviceTokenReceiving else { return Int32(SH_UNSUPPORTED) }
            guard let token = data?.assumingMemoryBound(to: sh_device_token.self) else { return Int32(SH_INVALID) }
            service.didRegisterForRemoteNotifications(deviceToken: DeviceToken(token))
        case .didFailToRegisterForRemoteNotifications:
            guard let service = instance as? any DeviceTokenErrorHandling else { return Int32(SH_UNSUPPORTED) }
            guard let info = data?.assumingMemoryBound(to: sh_error_info.self) else { return Int32(SH_INVALID) }
            let messageEnd = MemoryLayout<sh_error_info>.offset(of: \.message)! + MemoryLayout<Int>.size
            let message = Int(info.pointee.size) >= messageEnd ? info.pointee.message.map { String(cString: $0) } : nil
            service.didFailToRegisterForRemoteNotifications(error: message ?? "")
        case .openURL:
            guard let service = instance as? any URLHandling else { return Int32(SH_UNSUPPORTED) }
            guard let url = data?.assumingMemoryBound(to: sh_open_url.self) else { return Int32(SH_INVALID) }
            return answer(service.open(OpenURL(url)))
        case .performActionForShortcutItem:
            guard let service = instance as? any ShortcutHandling else { return Int32(SH_UNSUPPORTED) }
            guard let item = data?.assumingMemoryBound(to: sh_shortcut_item.self) else { return Int32(SH_INVALID) }
            return answer(service.perform(ShortcutItem(item)))
        case .continueUserActivity:
            guard let service = instance as? any UserActivityHandling else { return Int32(SH_UNSUPPORTED) }
            guard let raw = data?.assumingMemoryBound(to: sh_user_activity.self) else { return Int32(SH_INVALID) }
            var activity = UserActivity(raw)
            defer { activity.endEvent() }
            return answer(service.continueUserActivity(activity))
        case .didChangeNotificationAuthorization:
            guard let service = instance as? any AuthorizationObserving else { return Int32(SH_UNSUPPORTED) }
            guard let raw = data?.assumingMemoryBound(to: sh_notification_settings.self) else {
                return Int32(SH_INVALID)
            }
            service.didChangeNotificationAuthorization(NotificationSettings(raw.pointee))
        case .request:
            guard let service = instance as? any Answering else { return Int32(SH_UNSUPPORTED) }
            guard let raw = data?.assumingMemoryBound(to: sh_request.self) else { return Int32(SH_INVALID) }
            service.answer(ServiceRequest(raw), reply: ReplyCompletion(completion(of: event)))
        case .didChangeSettings:
            guard let service = instance as? any SettingsObserving else { return Int32(SH_UNSUPPORTED) }
            guard let raw = data?.assumingMemoryBound(to: sh_settings_change.self) else { return Int32(SH_INVALID) }
            func parsed(_ json: UnsafePointer<CChar>?, _ count: Int) -> JSONValue? {
                json.flatMap { try? JSONValue(parsing: UnsafeRawBufferPointer(start: $0, count: count)) }
            }
            service.didChangeSettings(
                from: parsed(raw.pointee.old_json, raw.pointee.old_len),
                to: parsed(raw.pointee.new_json, raw.pointee.new_len))
        case .dependencyWillStop, .dependencyDidStart:
            guard let raw = data?.assumingMemoryBound(to: sh_dependency.self), let id = raw.pointee.id else {
                return Int32(SH_INVALID)
            }
            let name = String(cString: id)
            let version = raw.pointee.service_version.map { String(cString: $0) } ?? ""
            if kind == .dependencyWillStop {
                guard let service = instance as? any DependencyStopObserving else { return Int32(SH_UNSUPPORTED) }
                service.dependencyWillStop(name, version: version)
            } else {
                guard let service = instance as? any DependencyStartObserving else { return Int32(SH_UNSUPPORTED) }
                service.dependencyDidStart(name, version: version)
            }
        case .healthCheck:
            guard let service = instance as? any HealthChecking else { return Int32(SH_UNSUPPORTED) }
            service.checkHealth(completion: HealthCompletion(completion(of: event)))
        case .willReload:
            guard let service = instance as? any StateHandingOver else { return Int32(SH_UNSUPPORTED) }
            // The host reads the answer when handle_event returns: completed here, before it does.
            let handle = completion(of: event)
            if let state = service.willReload() {
                handle.complete(Int32(SH_OK), json: state)
            } else {
                handle.complete(Int32(SH_FALSE))
            }
        case .configurationForConnecting, .sceneWillConnect, .sceneWillEnterForeground, .sceneDidBecomeActive,
            .sceneWillResignActive, .sceneDidEnterBackground, .sceneDidDisconnect, .sceneOpenURLContexts,
            .sceneContinueUserActivity:
            return dispatchScene(kind, data: data, to: instance)
        }
        return Int32(SH_OK)
    }

    /// `SH_OK` for `true`, `SH_FALSE` for `false`.
    static func answer(_ value: Bool) -> Int32 {
        Int32(value ? SH_OK : SH_FALSE)
    }

    /// The event's completion (nil when the host sent none, which the SDK's completion
    /// classes treat as "nothing to call").
    private static func completion(of event: UnsafePointer<sh_event>) -> CompletionHandle {
        let completionEnd = MemoryLayout<sh_event>.offset(of: \.completion)! + MemoryLayout<Int>.size
        return CompletionHandle(raw: Int(event.pointee.size) >= completionEnd ? event.pointee.completion : nil)
    }

    /// The host context of `service`, or a detached one before attach.
    static func host(for service: some ApplicationService) -> HostContext {
        for slot in Registry.slots where slot.instance === service {
            return slot.host
        }
        if let host = TestAttachments.host(for: service) { return host }
        return HostContext(raw: nil, serviceID: String(describing: type(of: service)))
    }
}

/// One service's state: its id, factory, host table and instance.
final class ServiceSlot {
    let id: String
    let make: () -> any ApplicationService
    var host: HostContext
    var instance: (any ApplicationService)?

    init(id: String, make: @escaping () -> any ApplicationService) {
        self.id = id
        self.make = make
        self.host = HostContext(raw: nil, serviceID: id)
    }

    /// `sh_service.attach`: keeps the host table and creates the instance, once.
    func attach(_ raw: UnsafePointer<sh_host>?) -> Int32 {
        guard let raw else { return Int32(SH_INVALID) }
        if instance != nil { return Int32(SH_OK) }
        // Version 1 of the table ends with get_extension; HostContext checks `size`
        // before calling a member appended later (subscribe, …).
        let versionOneSize = MemoryLayout<sh_host>.offset(of: \.get_extension)! + MemoryLayout<Int>.size
        guard Int(raw.pointee.size) >= versionOneSize else {
            writeStandardError("\(id): the host's sh_host table is too small (\(raw.pointee.size) bytes)\n")
            return Int32(SH_ERROR)
        }
        host = HostContext(raw: raw, serviceID: id)
        instance = make()
        return Int32(SH_OK)
    }
}

/// The plugin's process-wide state.
enum Registry {
    /// The plugin's answer. Guarded by the host's threading contract: written
    /// once in servicehost_entry on the host's main thread before any other
    /// call; the host calls services only from its main thread.
    nonisolated(unsafe) static var answer: UnsafePointer<sh_plugin>?
    /// Every service's slot, in manifest order. Guarded as ``answer``:
    /// appended to only in servicehost_entry; a slot's instance and host are
    /// written only in attach, on the host's main thread, before the instance
    /// exists (so before any thread it starts can read them).
    nonisolated(unsafe) static var slots: [ServiceSlot] = []
}
