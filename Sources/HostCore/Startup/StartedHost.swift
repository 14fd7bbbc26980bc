import Dispatch
import Glibc

/// A host started by ``HostStartup``: launched, its ready line written, its control socket
/// bound. ``serve()`` takes requests until the host is terminated.
@MainActor
public struct StartedHost {
    /// The running host.
    public let host: Host
    /// The control socket, not accepting yet.
    public let server: ControlServer
    let firstLaunch: FirstLaunch
    /// Kept for the run's lifetime: systemd's watchdog timer and the metrics endpoint.
    let keptAlive: (DispatchSourceTimer?, MetricsServer?)
    /// Starts the system sources (SystemSources): by ``serve()``, after the ready line, so
    /// nothing the launch needs waits for the system bus.
    let startSources: () -> Void

    /// Accepts control requests and runs the main loop until the host exits; a main loop that
    /// cannot run is logged (`host.mainLoopFailed`) and ends the process with status 2.
    public func serve() -> Never {
        server.startAccepting()
        startSources()
        // Housekeeping that nothing before `active` needs, off the main thread and queued only
        // after the ready line: queued before it, its new worker thread competed with the line's writing.
        let firstLaunch = firstLaunch
        DispatchQueue.global(qos: .utility).async { firstLaunch.removeInterruptedMarks() }
        let failure = withExtendedLifetime(keptAlive) { () -> SystemError in
            do throws(SystemError) { try MainLoop.shared.run() } catch { return error }
        }
        host.log.write(.error, "host", "\(failure)", event: .hostMainLoopFailed)
        exit(HostExitStatus.cannotRun.rawValue)
    }

    /// Pings systemd's watchdog at half its interval from the main queue, so a stuck main
    /// thread stops the pings and systemd notices.
    static func startWatchdog(_ host: Host) -> DispatchSourceTimer? {
        guard let notifier = host.notifier, let interval = notifier.watchdogInterval else { return nil }
        let timer = DispatchSource.makeTimerSource(queue: .main)
        let nanoseconds =
            Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now(), repeating: .nanoseconds(max(nanoseconds, 1_000_000)))
        timer.setEventHandler { MainActor.assumeIsolated { host.notify(.watchdog) } }
        timer.resume()
        return timer
    }
}
