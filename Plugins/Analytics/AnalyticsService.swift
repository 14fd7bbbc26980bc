import ServiceKit

/// Counts the lifecycle events it receives and the notifications other services post
/// (it subscribes to every name), and reports the counters at termination in one line,
/// sorted by name:
///
///     analytics: didBecomeActive=1 didEnterBackground=1 didFinishLaunching=1 notification:queue.enqueue=2 willFinishLaunching=1 willResignActive=1 willTerminate=1
///
/// Events count under their name; each notification counts under
/// `notification:<name>`, so a notification can never be mistaken for an event.
final class AnalyticsService: NotificationReceiving {
    /// Counter per name. Main thread only (every event arrives there).
    private var counts: [String: Int] = [:]

    func willFinishLaunching(_ options: LaunchOptions) -> Bool {
        count("willFinishLaunching")
        return true
    }

    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        count("didFinishLaunching")
        return true
    }

    func didBecomeActive() { count("didBecomeActive") }
    func willResignActive() { count("willResignActive") }
    func didEnterBackground() { count("didEnterBackground") }
    func willEnterForeground() { count("willEnterForeground") }

    func didReceive(_ notification: ServiceNotification) {
        count("notification:\(notification.name)")
    }

    func willTerminate() {
        count("willTerminate")
        let report = counts.keys
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { "\($0)=\(counts[$0]!)" }
        host.log(.info, "analytics: \(report.joined(separator: " "))")
    }

    private func count(_ name: String) {
        counts[name, default: 0] += 1
    }
}
