import ServiceJSON

/// What a ``SystemSource`` may do to the host: watch a descriptor on the main loop, move the
/// app in UIKit's order, warn of low memory, post a notification, wait for background tasks,
/// terminate. Everything runs on the main thread.
@MainActor
public final class AppDriver {
    /// The host driven.
    public let host: Host
    /// Terminates the way SIGTERM does (the shutdown deadline armed, then willTerminate and exit).
    private let terminateHost: () -> Void

    /// A driver of `host`; `terminate` ends the process the way the host's SIGTERM does.
    public init(host: Host, terminate: @escaping () -> Void) {
        self.host = host
        self.terminateHost = terminate
    }

    /// Where the source's log lines go.
    public var log: Log { host.log }

    /// Background tasks services opened (``BackgroundTasks``).
    public var backgroundTasks: BackgroundTasks { host.backgroundTasks }

    /// Calls `handler` on the main thread whenever `fd` is readable (with `priority`: has a
    /// priority event, EPOLLPRI, as a PSI trigger reports), until the watch is cancelled.
    /// - Throws: epoll_ctl's error, naming `name`.
    public func watch(
        _ fd: Int32, name: String, priority: Bool = false, handler: @escaping @MainActor () -> Void
    ) throws(SystemError) -> MainLoop.Watch {
        let watch = MainLoop.shared.watch(fd, name: name, priority: priority)
        watch.setHandler { MainActor.assumeIsolated { handler() } }
        try watch.resume()
        return watch
    }

    /// willResignActive then didEnterBackground, as far as the app is above the background;
    /// returns once every service returned. False when it was there already (or not running).
    @discardableResult
    public func enterBackground() -> Bool {
        guard host.state == .active || host.state == .inactive, !host.isTerminating else { return false }
        do { try host.transition(to: .background) } catch { return false }
        return true
    }

    /// willResignActive only (an active app becomes inactive).
    @discardableResult
    public func resignActive() -> Bool {
        guard host.state == .active, !host.isTerminating else { return false }
        do { try host.transition(to: .inactive) } catch { return false }
        return true
    }

    /// willEnterForeground (from the background) and didBecomeActive.
    @discardableResult
    public func becomeActive() -> Bool {
        guard host.state == .background || host.state == .inactive, !host.isTerminating else { return false }
        do { try host.transition(to: .active) } catch { return false }
        return true
    }

    /// willEnterForeground only: the app comes to the foreground, inactive.
    @discardableResult
    public func enterForeground() -> Bool {
        guard host.state == .background, !host.isTerminating else { return false }
        do { try host.transition(to: .inactive) } catch { return false }
        return true
    }

    /// didReceiveMemoryWarning to every service that handles it.
    public func memoryWarning() { _ = host.memoryWarning() }

    /// protectedDataWillBecomeUnavailable to every service that handles it, then willResignActive
    /// (UIKit's order when the user locks the phone); a host in the background only hears the first.
    public func lock() {
        guard !host.isTerminating else { return }
        _ = host.deliverToAll(.protectedDataWillBecomeUnavailable)
        resignActive()
    }

    /// protectedDataDidBecomeAvailable, then didBecomeActive when the app is inactive (it was
    /// active when the session locked). `becomeActive`: whether the app should come back.
    public func unlock(becomeActive: Bool) {
        guard !host.isTerminating else { return }
        _ = host.deliverToAll(.protectedDataDidBecomeAvailable)
        if becomeActive, host.state == .inactive { self.becomeActive() }
    }

    /// significantTimeChange to every service that handles it.
    public func significantTimeChange() {
        guard !host.isTerminating else { return }
        _ = host.deliverToAll(.significantTimeChange)
    }

    /// Posts notification `name` to the subscribed services.
    public func post(_ name: String, payload: JSONValue?) {
        _ = try? host.post(name: name, payload: payload)
    }

    /// Makes the host answer request `name` (`sh_host.request`, `host ctl request`) with
    /// `state`, the source's current state (as `NWPathMonitor.currentPath` is read), until set again.
    public func setCurrentState(_ name: String, _ state: JSONValue) {
        host.application.desk.setHostAnswer(name, .state(state))
    }

    /// Makes the host answer request `name` with SH_NOT_FOUND and `{"error": reason}` until set
    /// again: the source whose state it is, is off.
    public func setCurrentStateUnavailable(_ name: String, reason: String) {
        host.application.desk.setHostAnswer(name, .unavailable(reason))
    }

    /// Terminates the host (willTerminate after the moves it implies) and ends the process.
    public func terminate() { terminateHost() }
}
