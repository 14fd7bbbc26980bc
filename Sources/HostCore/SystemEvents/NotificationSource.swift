import Dispatch
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
///
/// The start asks the server who it is and what it can do (`GetServerInformation`,
/// `GetCapabilities`) without waiting: a server being activated never stalls the main thread.
/// The source says on or off when both answered; a push to show meanwhile waits for them.
/// Actions are sent only to a server with the `actions` capability.
@MainActor
final class NotificationSource: SystemSource, NotificationPresenter {
    let name = "notifications"

    private static let destination = "org.freedesktop.Notifications"
    private static let path = "/org/freedesktop/Notifications"
    private static let interface = "org.freedesktop.Notifications"
    /// The notifications remembered at most: the oldest is forgotten first (its click then does nothing).
    static let remembered = 256
    /// The pushes waiting at most for the server's first answers: the oldest is dropped first.
    static let waitingAtMost = 16
    /// The bound on each call of a start that waits (`host check`, ``start(_:)``), in
    /// microseconds; the host's own start waits for nothing (sd-bus's 25 s bound its calls).
    static let startTimeout: UInt64 = 5_000_000

    private let settings: DesktopNotificationSettings
    private var bus: SDBusConnection?
    private var driver: AppDriver?
    /// What the server can do (`GetCapabilities`); nil until it answered.
    private var capabilities: Set<String>?
    /// The server's "NAME VERSION"; nil until it answered.
    private var server: String?
    /// The pushes to show once the server answered, oldest first.
    private var waiting: [(payload: PushPayload, options: PresentationOptions)] = []
    /// Where the asynchronous start says on or off, until it has.
    private var report: (@MainActor (SourceState) -> Void)?
    /// The pushes shown, by the server's id, oldest first.
    private var shown: [(id: UInt32, payload: PushPayload)] = []

    /// A source configured by `settings` (the configuration's `notifications`).
    init(settings: DesktopNotificationSettings) { self.settings = settings }

    func check() -> SourceState {
        guard settings.enabled else { return .off(Self.offInConfiguration) }
        do throws(SDBusError) {
            let bus = try SDBusConnection(.user)
            defer { bus.close() }
            let server = try bus.call(
                destination: Self.destination, path: Self.path, interface: Self.interface,
                member: "GetServerInformation", timeout: Self.startTimeout, read: Self.server)
            return .on("\(server) on the session bus")
        } catch {
            return .off(Self.reason(error))
        }
    }

    /// Starts and waits for the server's answers (at most ``startTimeout`` each) on the main
    /// thread, for a caller that must know the state now; the host's start does not wait
    /// (``start(_:report:)``).
    func start(_ driver: AppDriver) -> SourceState {
        guard settings.enabled else { return .off(Self.offInConfiguration) }
        do throws(SDBusError) {
            let bus = try connect(driver)
            let server = try bus.call(
                destination: Self.destination, path: Self.path, interface: Self.interface,
                member: "GetServerInformation", timeout: Self.startTimeout, read: Self.server)
            capabilities = try bus.call(
                destination: Self.destination, path: Self.path, interface: Self.interface, member: "GetCapabilities",
                timeout: Self.startTimeout
            ) { message throws(SDBusError) in Set(try message.readStrings()) }
            self.server = server
            return .on("\(server) on the session bus")
        } catch {
            stop()
            return .off(Self.reason(error))
        }
    }

    /// Connects and asks the server who it is and what it can do, without waiting: `report`
    /// says on or off once both answered (or at once, without a session bus).
    func start(_ driver: AppDriver, report: @escaping @MainActor (SourceState) -> Void) {
        guard settings.enabled else { return report(.off(Self.offInConfiguration)) }
        do throws(SDBusError) {
            let bus = try connect(driver)
            self.report = report
            try bus.callAsync(
                destination: Self.destination, path: Self.path, interface: Self.interface,
                member: "GetServerInformation"
            ) { [weak self] reply in
                guard let self else { return }
                do throws(SDBusError) {
                    server = try Self.server(try reply.get())
                    answered(nil)
                } catch { answered(error) }
            }
            try bus.callAsync(
                destination: Self.destination, path: Self.path, interface: Self.interface, member: "GetCapabilities"
            ) { [weak self] reply in
                guard let self else { return }
                do throws(SDBusError) {
                    capabilities = Set(try reply.get().readStrings())
                    answered(nil)
                } catch { answered(error) }
            }
        } catch {
            stop()
            self.report = nil
            report(.off(Self.reason(error)))
        }
    }

    /// The session bus, the server's signals matched, this source the app's presenter.
    private func connect(_ driver: AppDriver) throws(SDBusError) -> SDBusConnection {
        let bus = try SDBusConnection(.user)
        self.bus = bus
        self.driver = driver
        driver.host.application.presenter = self
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
        return bus
    }

    /// One of the start's calls answered (`error` nil) or failed: the source is off at the
    /// first failure, on once both answered, and the pushes waiting for it are shown.
    private func answered(_ error: SDBusError?) {
        guard let report, bus != nil else { return }
        if let error {
            self.report = nil
            stop()
            return report(.off(Self.reason(error)))
        }
        guard let server, capabilities != nil else { return }
        self.report = nil
        report(.on("\(server) on the session bus"))
        let waiting = self.waiting
        self.waiting = []
        for push in waiting { _ = present(push.payload, options: push.options) }
    }

    /// Off: the connection closed (its pending calls dropped), nothing shown any more.
    private func stop() {
        waiting = []
        if let driver, driver.host.application.presenter === self { driver.host.application.presenter = nil }
        driver = nil
        guard let bus else { return }
        self.bus = nil
        // Maybe inside one of the bus's own callbacks: closed once sd-bus has returned.
        DispatchQueue.main.async { MainActor.assumeIsolated { bus.close() } }
    }

    /// `source.off`'s reason when the configuration turned the source off.
    static let offInConfiguration = "turned off (\"notifications\": \"off\" in the configuration)"

    /// "NAME VERSION" from `GetServerInformation`'s reply.
    private static func server(_ message: SDBusMessage) throws(SDBusError) -> String {
        let name = try message.readString()
        _ = try message.readString()  // vendor
        return "\(name) \(try message.readString())"
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
            var notification = DesktopNotification(
                payload, options: options,
                categories: driver.host.notificationCategories.merged(over: settings.categories))
        else { return false }
        guard let capabilities else {
            // The server has not said what it can do yet: shown when it has.
            if waiting.count >= Self.waitingAtMost { waiting.removeFirst() }
            waiting.append((payload, options))
            return true
        }
        // Without `actions` the server shows no buttons, and may ignore them or refuse the call.
        if !capabilities.contains("actions") { notification.actions = [] }
        let sent = notification
        do {
            try bus.callAsync(
                destination: Self.destination, path: Self.path, interface: Self.interface, member: "Notify",
                sent.arguments(markup: capabilities.contains("body-markup"), actions: capabilities.contains("actions"))
            ) { [weak self] reply in
                switch reply {
                case .success(let message):
                    guard let id = try? message.readUInt32() else { return }
                    self?.remember(id, payload, sent)
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
