import ServiceKit

/// A third-party service: logs one line per lifecycle event.
final class GreeterService: ApplicationService {
    func willFinishLaunching(_ options: LaunchOptions) -> Bool {
        host.log(.info, "greeter: willFinishLaunching")
        return true
    }

    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        host.log(.info, "greeter: didFinishLaunching")
        return true
    }

    func didBecomeActive() { host.log(.info, "greeter: didBecomeActive") }
    func willResignActive() { host.log(.info, "greeter: willResignActive") }
    func didEnterBackground() { host.log(.info, "greeter: didEnterBackground") }
    func willEnterForeground() { host.log(.info, "greeter: willEnterForeground") }
    func willTerminate() { host.log(.info, "greeter: willTerminate") }
}
