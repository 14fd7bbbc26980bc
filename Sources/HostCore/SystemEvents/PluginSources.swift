import Dispatch
import ServiceJSON

/// What plugin sources (extension sources/1, sources.h) reach in the host: the app's moves,
/// descriptors watched on the main loop, and current states the host answers. Main thread only.
@MainActor
final class PluginSources {
    /// The host moved and answering; set once it exists (Host.init).
    weak var host: Host?
    private var watches: [UInt64: (service: String, watch: MainLoop.Watch)] = [:]
    private var nextWatch: UInt64 = 1

    init() {}

    /// Carries out `move` from the main queue, after the service's current call returned.
    func move(_ move: AppMove, for service: String) {
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let host = self?.host else { return }
                // The moves the built-in sources make, with their rules (AppDriver); terminate is not offered.
                let driver = AppDriver(host: host) {}
                switch move {
                case .resignActive: driver.resignActive()
                case .enterBackground: driver.enterBackground()
                case .enterForeground: driver.enterForeground()
                case .becomeActive: driver.becomeActive()
                }
            }
        }
    }

    /// Watches `fd` for `service`: `readable` on the main thread while the service runs. 0 when
    /// the loop refuses the descriptor (logged).
    func watch(_ fd: Int32, for service: String, readable: @escaping @MainActor @Sendable (Int32) -> Void) -> UInt64 {
        let id = nextWatch
        nextWatch += 1
        let watch = MainLoop.shared.watch(fd, name: "\(service) descriptor \(fd)")
        watch.setHandler { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                // A stopped service's watches end: its code is not called once it stopped.
                guard self.host?.services.contains(where: { $0.id == service }) == true else {
                    _ = self.unwatch(id, for: service)
                    return
                }
                readable(fd)
            }
        }
        do { try watch.resume() } catch {
            host?.log.warn(service, "sources: descriptor \(fd) cannot be watched: \(error)")
            watch.cancel()
            return 0
        }
        watches[id] = (service, watch)
        return id
    }

    /// Makes the host answer request `name` with `json` (an object) from now on; false for a
    /// built-in source's name or JSON that is not an object.
    func setCurrentState(_ name: String, json: [UInt8]) -> Bool {
        guard !SystemSources.stateRequests.contains(name), let host, let value = try? JSONValue(parsing: json),
            value.objectValue != nil
        else { return false }
        host.application.desk.setHostAnswer(name, .state(value))
        return true
    }

    /// Ends watch `id` of `service`; false when it has none such.
    func unwatch(_ id: UInt64, for service: String) -> Bool {
        guard let entry = watches[id], entry.service == service else { return false }
        entry.watch.cancel()
        watches[id] = nil
        return true
    }
}
