import ServiceKit

/// The smallest Swift service: handles every lifecycle event and does nothing.
///
/// scripts/bench copies this library N times, rewriting the id placeholder in
/// servicehost.json (`bench.swift-service.s0000000`, longer than 15 bytes so the Swift
/// literal lives in the file as bytes, not inline in code) to a distinct id per copy.
final class BenchService: ApplicationService {}
