import Glibc
import ServiceABI

/// Shows pushes on the desktop, the notification center's job on iOS (issue 39): the
/// `org.freedesktop.Notifications` server on the session bus (`DBUS_SESSION_BUS_ADDRESS`).
///
/// A push that services answer `.banner`, `.list` or `.sound` while the app is active, or one
/// with an alert that arrives while it is not, is shown with `Notify` (``DesktopNotification``);
/// the id the server answers is remembered with the push. `ActionInvoked` becomes
/// didReceiveNotificationResponse with that action (`default`, a click on the notification:
/// `SH_ACTION_DEFAULT`), bringing the app to the foreground first as a tap does;
/// `NotificationClosed` with reason 2 (the user dismissed it) becomes the response with
/// `SH_ACTION_DISMISS`; any other close forgets it.
@MainActor
final class NotificationSource: SystemSource, NotificationPresenter {
    let name = "notifications"

    private static let destination = "org.freedesktop.Notifications"
    private static let path = "/org/freedesktop/Notifications"
    private static let interface = "org.freedesktop.Notifications"
    /// The notifications remembered at most: the oldest is forgotten first (its click then does nothing).
    static let remembered = 256
    /// The bound on the start's calls (a server being activated on the bus), in microseconds:
    /// the source waits on the main thread, before serving.
    static let startTimeout: UInt64 = 5_000_000

    private let settings: DesktopNotificationSettings
    private var bus: SDBusConnection?
    private var driver: AppDriver?
    /// Whether the server reads the body as markup (`body-markup` capability).
    private var markup = false
    /// The pushes shown, by the server's id, oldest first.
    private var shown: [(id: UInt32, payload: PushPayload)] = []

    /// A source configured by `settings` (the configuration's `notifications`).
    init(settings: DesktopNotificationSettings) { self.settings = settings }

    func check() -> SourceState {
        guard settings.enabled else { return .off(Self.offInConfiguration) }
        do throws(SDBusError) {
            let bus = try SDBusConnection(.user)
            defer { bus.close() }
            return .on("\(try Self.server(bus)) on the session bus")
        } catch {
            return .off(Self.reason(error))
        }
    }

    func start(_ driver: AppDriver) -> SourceState {
        guard settings.enabled else { return .off(Self.offInConfiguration) }
        do throws(SDBusError) {
            let bus = try SDBusConnection(.user)
            self.bus = bus
            let server = try Self.server(bus)
            markup = try bus.call(
                destination: Self.destination, path: Self.path, interface: Self.interface, member: "GetCapabilities",
                timeout: Self.startTimeout
            ) { message throws(SDBusError) in try message.readStrings().contains("body-markup") }
            try bus.matchSignal(
                sender: Self.destination, path: Self.path, interface: Self.interface, member: "ActionInvoked"
            ) { [weak self] message in
                guard let id = try? message.readUInt32(), let key = try? message.readString() else { return }
                self?.invoked(id, key: key)
            }
            try bus.matchSignal(
                sender: Self.destination, path: Self.path, interface: Self.interface, member: "NotificationClosed"
            ) { [weak self] message in
                guard let id = try? message.readUInt32(), let reason = try? message.readUInt32() else { return }
                self?.closed(id, reason: reason)
            }
            self.driver = driver
            driver.host.application.presenter = self
            return .on("\(server) on the session bus")
        } catch {
            bus?.close()
            bus = nil
            return .off(Self.reason(error))
        }
    }

    /// `source.off`'s reason when the configuration turned the source off.
    static let offInConfiguration = "turned off (\"notifications\": \"off\" in the configuration)"

    /// "NAME VERSION" of the server (`GetServerInformation`).
    private static func server(_ bus: SDBusConnection) throws(SDBusError) -> String {
        try bus.call(
            destination: destination, path: path, interface: interface, member: "GetServerInformation",
            timeout: startTimeout
        ) {
            message throws(SDBusError) in
            let name = try message.readString()
            _ = try message.readString()  // vendor
            return "\(name) \(try message.readString())"
        }
    }

    /// The reason a user reads in `source.off`.
    private static func reason(_ error: SDBusError) -> String {
        switch error.reason {
        case .library: "libsystemd (sd-bus) is not available: \(error)"
        // sd-bus's answer when it has no address to try (a service, a container, a CI job).
        case .system(ENOMEDIUM) where error.operation == "sd_bus_open_user":
            "no session bus: neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"
        case .system: "no session bus: \(error)"
        case .peer: "no notification server on the session bus: \(error)"
        }
    }

    // MARK: Showing

    func present(_ payload: PushPayload, options: PresentationOptions) -> Bool {
        guard let bus, let driver,
            let notification = DesktopNotification(payload, options: options, categories: settings.categories)
        else { return false }
        do {
            try bus.callAsync(
                destination: Self.destination, path: Self.path, interface: Self.interface, member: "Notify",
                notification.arguments(markup: markup)
            ) { [weak self] reply in
                switch reply {
                case .success(let message):
                    guard let id = try? message.readUInt32() else { return }
                    self?.remember(id, payload, notification)
                case .failure(let error):
                    driver.log.warn(
                        "host", "the desktop did not show the notification: \(error)",
                        event: .desktopNotificationFailed,
                        .string("reason", "\(error)"))
                }
            }
            return true
        } catch {
            driver.log.warn(
                "host", "the desktop did not show the notification: \(error)", event: .desktopNotificationFailed,
                .string("reason", "\(error)"))
            return false
        }
    }

    private func remember(_ id: UInt32, _ payload: PushPayload, _ notification: DesktopNotification) {
        shown.removeAll { $0.id == id }
        if shown.count >= Self.remembered { shown.removeFirst() }
        shown.append((id, payload))
        driver?.log.info(
            "host", "notification \(id) shown on the desktop: \(notification.summary)",
            event: .desktopNotificationShown,
            .int("id", UInt64(id)), .string("summary", notification.summary), .string("body", notification.body),
            .string("actions", notification.actions.map(\.id).joined(separator: ",")),
            .string("sound", notification.sound ?? ""))
    }

    private func forget(_ id: UInt32) -> PushPayload? {
        guard let index = shown.firstIndex(where: { $0.id == id }) else { return nil }
        return shown.remove(at: index).payload
    }

    // MARK: The user's answer

    private func invoked(_ id: UInt32, key: String) {
        // Forgotten at once: the close that follows an action is not a dismissal.
        guard let payload = forget(id) else { return }
        respond(id, payload, action: DesktopNotification.action(forKey: key))
    }

    private func closed(_ id: UInt32, reason: UInt32) {
        guard let payload = forget(id), reason == DesktopNotification.dismissedByUser else { return }
        respond(id, payload, action: SH_ACTION_DISMISS)
    }

    /// As `host ctl push --tap ACTION`: a tap from the background brings the app forward first.
    private func respond(_ id: UInt32, _ payload: PushPayload, action: String) {
        guard let driver, !driver.host.isTerminating else { return }
        driver.log.info(
            "host", "notification \(id) answered on the desktop: \(action)", event: .desktopNotificationResponse,
            .int("id", UInt64(id)), .string("action", action))
        driver.host.push(payload, tap: action) { _ in }
    }
}

/// Shows a push on the desktop (``NotificationSource``).
@MainActor
protocol NotificationPresenter: AnyObject {
    /// Shows `payload` with `options`; false when there is nothing to show (no alert text) or
    /// it could not be sent.
    func present(_ payload: PushPayload, options: PresentationOptions) -> Bool
}
