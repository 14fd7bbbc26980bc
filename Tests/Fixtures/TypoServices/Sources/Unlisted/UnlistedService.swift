import ServiceKit

/// Handles openURL, but its manifest does not list the event: the host would never call it.
final class UnlistedService: URLHandling {
    func open(_ url: OpenURL) -> Bool { true }
}
