import ServiceKit

/// Seed 004's first-launch work: acts only on this service's first launch.
///
/// It reads `LaunchOptions.isFirstServiceLaunch` (this service's id was never seen with this
/// state directory), not `isFirstHostLaunch`: a service added to a host that has run before
/// must still onboard, and each service's flag is its own. The host owns the "launched
/// before" flag and its storage, so `--first-launch always|never` forces it (the seed's
/// `alwaysFirst()`) without this service knowing.
///
/// On a first launch, in didFinishLaunching: info `onboarding: first launch: showing the
/// welcome flow`, then it posts `onboarding.completed` (no payload), delivered to the
/// subscribers after the event. Otherwise: debug `onboarding: not the first launch`.
final class OnboardingService: ApplicationService {
    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        guard options.isFirstServiceLaunch else {
            host.log(.debug, "onboarding: not the first launch")
            return true
        }
        host.log(.info, "onboarding: first launch: showing the welcome flow")
        do {
            try host.post("onboarding.completed")
        } catch {
            host.log(.warn, "onboarding: cannot post onboarding.completed: \(error)")
        }
        return true
    }
}
