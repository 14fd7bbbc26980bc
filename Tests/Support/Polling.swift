import Foundation

/// Waits until `condition` holds, checking every 20 ms, for at most `seconds`.
/// Used to wait for a host to reach a state, never to assert a duration.
public func eventually(within seconds: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}
