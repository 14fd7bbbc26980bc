import Foundation

/// Whether the tests run under a sanitizer (`scripts/test --sanitize`): the test binary and the
/// `host` beside it are then built with one, and run several times slower.
public enum Sanitizer {
    /// True when this process carries AddressSanitizer's or ThreadSanitizer's runtime.
    public static let isActive: Bool = ["__asan_init", "__tsan_init"].contains { (name: String) in
        dlsym(nil, name) != nil
    }

    /// `seconds` as a deadline for the host: stretched under a sanitizer, where the same work
    /// takes several times longer (a deadline here bounds a wait; no test asserts on time).
    public static func deadline(_ seconds: Double) -> Double { isActive ? seconds * 5 : seconds }

    /// Whether Swift's crash backtracer runs in the processes the tests start (scripts/test
    /// turns it off under the sanitizers, which cannot follow it: it forks in a signal handler).
    public static var crashReportsEnabled: Bool {
        !(ProcessInfo.processInfo.environment["SWIFT_BACKTRACE"] ?? "").contains("enable=no")
    }
}
