import Dispatch
import Glibc

/// Sleep and wake from systemd-logind (system bus): `PrepareForSleep(true)` moves the app to
/// the background in UIKit's order (willResignActive, didEnterBackground), `PrepareForSleep(false)`
/// brings it back as it was (willEnterForeground, didBecomeActive; a host that was in the
/// background stays there), `PrepareForShutdown(true)` terminates as SIGTERM does.
///
/// While running it holds a logind delay inhibitor (`Inhibit("sleep:shutdown", …, "delay")`),
/// released only once every service returned from didEnterBackground and every background task
/// ended or expired, bounded by logind's `InhibitDelayMaxUSec`; a new one is taken after wake.
@MainActor
final class SleepSource: SystemSource {
    let name = "sleep"

    private static let destination = "org.freedesktop.login1"
    private static let path = "/org/freedesktop/login1"
    private static let manager = "org.freedesktop.login1.Manager"

    private var bus: SDBusConnection?
    private var driver: AppDriver?
    /// The inhibitor's descriptor (-1: none held); closing it releases the lock.
    private var inhibitor: Int32 = -1
    /// logind's bound on a delay inhibitor, in microseconds.
    private var delayMax: UInt64 = 5_000_000
    /// Whether the app was in the foreground when the machine went to sleep.
    private var wasForeground = false
    /// Which sleep a release or an expiry belongs to: a late one from an earlier sleep does nothing.
    private var sleepNumber = 0

    func check() -> SourceState {
        do throws(SDBusError) {
            let bus = try SDBusConnection(.system)
            defer { bus.close() }
            let delay = try Self.delayMax(bus)
            return .on("logind on the system bus (InhibitDelayMaxUSec \(delay))")
        } catch {
            return .off(error.sourceOff(peer: Self.absent))
        }
    }

    func start(_ driver: AppDriver) -> SourceState {
        do throws(SDBusError) {
            let bus = try SDBusConnection(.system)
            self.bus = bus
            self.driver = driver
            delayMax = try Self.delayMax(bus)
            try bus.matchSignal(
                sender: Self.destination, path: Self.path, interface: Self.manager, member: "PrepareForSleep"
            ) { [weak self] message in
                guard let sleeping = try? message.readBool() else { return }
                self?.prepareForSleep(sleeping)
            }
            try bus.matchSignal(
                sender: Self.destination, path: Self.path, interface: Self.manager, member: "PrepareForShutdown"
            ) { [weak self] message in
                guard (try? message.readBool()) == true else { return }
                self?.prepareForShutdown()
            }
            try takeInhibitor()
            return .on("logind on the system bus; delay inhibitor held (InhibitDelayMaxUSec \(delayMax))")
        } catch {
            bus?.close()
            bus = nil
            self.driver = nil
            return .off(error.sourceOff(peer: Self.absent))
        }
    }

    /// logind's `InhibitDelayMaxUSec`; its default (5 s) when this logind does not have the
    /// property (python-dbusmock's template), any other error thrown (no logind).
    private static func delayMax(_ bus: SDBusConnection) throws(SDBusError) -> UInt64 {
        do {
            return try bus.property(
                destination: destination, path: path, interface: manager, name: "InhibitDelayMaxUSec", type: "t",
                as: UInt64.self)
        } catch {
            guard case .peer(let name, _) = error.reason,
                ["org.freedesktop.DBus.Error.UnknownProperty", "org.freedesktop.DBus.Error.InvalidArgs"].contains(name)
            else { throw error }
            return 5_000_000
        }
    }

    /// Why the source is off when logind answered with an error.
    private static let absent = "logind does not answer on the system bus"

    private func takeInhibitor() throws(SDBusError) {
        guard let bus, inhibitor < 0 else { return }
        let taken = try bus.call(
            destination: Self.destination, path: Self.path, interface: Self.manager, member: "Inhibit",
            [
                .string("sleep:shutdown"), .string("ServiceHost"), .string("services finish entering the background"),
                .string("delay"),
            ]
        ) { message throws(SDBusError) in try message.readDescriptor() }
        inhibitor = taken
        driver?.log.info(
            "host", "logind delay inhibitor taken (sleep:shutdown)", event: .inhibitorTaken,
            .string("what", "sleep:shutdown"), .int("delayMaxUSec", delayMax))
    }

    private func release(_ reason: String) {
        guard inhibitor >= 0 else { return }
        close(inhibitor)
        inhibitor = -1
        driver?.log.info(
            "host", "logind delay inhibitor released: \(reason)", event: .inhibitorReleased, .string("reason", reason))
    }

    private func prepareForSleep(_ sleeping: Bool) {
        guard let driver else { return }
        sleepNumber += 1
        let number = sleepNumber
        driver.log.info(
            "host", sleeping ? "the system is going to sleep" : "the system woke up", event: .systemSleep,
            .string("sleeping", sleeping ? "true" : "false"))
        if sleeping {
            wasForeground = driver.host.state == .active || driver.host.state == .inactive
            driver.enterBackground()
            let tasks = driver.backgroundTasks
            if !tasks.tasks.isEmpty {
                // Expired a little before logind stops waiting, so the handlers run before the machine sleeps.
                let bound = delayMax > 200_000 ? delayMax - 100_000 : delayMax
                DispatchQueue.main.asyncAfter(deadline: .now() + .microseconds(Int(min(bound, UInt64(Int32.max))))) {
                    [weak self] in
                    MainActor.assumeIsolated {
                        guard let self, self.sleepNumber == number else { return }
                        tasks.expire(reason: "the system is going to sleep")
                    }
                }
            }
            tasks.whenAllEnded { [weak self] in
                guard let self, self.sleepNumber == number else { return }
                self.release("every service entered the background and every background task ended")
            }
        } else {
            do { try takeInhibitor() } catch {
                driver.log.warn(
                    "host", "logind delay inhibitor not taken again after wake: \(error)", event: .inhibitorFailed,
                    .string("reason", "\(error)"))
            }
            if wasForeground { driver.becomeActive() }
        }
    }

    private func prepareForShutdown() {
        guard let driver else { return }
        driver.log.info("host", "the system is shutting down", event: .systemShutdown)
        // The inhibitor closes when the process exits, after willTerminate returned.
        driver.terminate()
    }
}
