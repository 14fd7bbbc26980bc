import ServiceKit

/// Means to handle continueUserActivity and adopts its protocol, but guessed the method's name.
final class MisspelledService: UserActivityHandling {
    func `continue`(_ activity: UserActivity) -> Bool { true }
}

/// The same guess without the protocol (issue 16's report): servicehost.json lists the event.
final class GuessedService: ApplicationService {
    func `continue`(_ activity: UserActivity) -> Bool { true }
}
