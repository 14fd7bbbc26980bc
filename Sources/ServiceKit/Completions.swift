import ServiceABI

/// The host's `sh_completion` for one event of one service.
struct CompletionHandle: @unchecked Sendable {
    // @unchecked: the host keeps the completion valid from delivery on and its
    // `complete` member is [thread-safe] (events.h).
    let raw: UnsafePointer<sh_completion>?

    /// Calls `complete(result)`, every time it is asked: the host ignores and logs a
    /// second call, so the SDK does not hide one.
    func complete(_ result: Int32) {
        guard let raw else { return }
        let offset = MemoryLayout<sh_completion>.offset(of: \.complete)!
        guard Int(raw.pointee.size) >= offset + MemoryLayout<Int>.size, let complete = raw.pointee.complete else {
            return
        }
        complete(raw, result, nil, 0)
    }

    /// Calls `complete(result, json)`: an answer that carries JSON (a request's reply).
    func complete(_ result: Int32, json: [UInt8]) {
        guard let raw else { return }
        let offset = MemoryLayout<sh_completion>.offset(of: \.complete)!
        guard Int(raw.pointee.size) >= offset + MemoryLayout<Int>.size, let complete = raw.pointee.complete else {
            return
        }
        json.withUnsafeBytes { complete(raw, result, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
    }
}

/// Answers `didReceiveRemoteNotification` (a background fetch): call it exactly once,
/// from any thread, when the fetch is done.
///
/// ```swift
/// func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion) {
///     Task.detached { completion(await download() ? .newData : .failed) }
/// }
/// ```
///
/// Exactly once: the host ignores a second call and logs it, and when the deadline
/// (`--fetch-timeout`) passes without a call it answers for the service and logs that.
public final class FetchCompletion: Sendable {
    private let handle: CompletionHandle
    private let body: (@Sendable (FetchResult) -> Void)?

    init(_ handle: CompletionHandle) {
        self.handle = handle
        body = nil
    }

    /// Creates a completion that calls `body`; for tests of a service.
    public init(_ body: @escaping @Sendable (FetchResult) -> Void) {
        handle = CompletionHandle(raw: nil)
        self.body = body
    }

    /// Delivers the result. Call exactly once, from any thread.
    public func complete(_ result: FetchResult) {
        if let body { body(result) } else { handle.complete(result.rawValue) }
    }

    /// The same as ``complete(_:)``.
    public func callAsFunction(_ result: FetchResult) { complete(result) }
}

/// Answers `willPresent` with how to show the notification: call it exactly once, from
/// any thread.
///
/// Exactly once: the host ignores a second call and logs it, and answers for the service
/// when its deadline passes without one.
public final class PresentationCompletion: Sendable {
    private let handle: CompletionHandle
    private let body: (@Sendable (PresentationOptions) -> Void)?

    init(_ handle: CompletionHandle) {
        self.handle = handle
        body = nil
    }

    /// Creates a completion that calls `body`; for tests of a service.
    public init(_ body: @escaping @Sendable (PresentationOptions) -> Void) {
        handle = CompletionHandle(raw: nil)
        self.body = body
    }

    /// Delivers the options (`[]`: do not present). Call exactly once, from any thread.
    public func complete(_ options: PresentationOptions) {
        if let body { body(options) } else { handle.complete(Int32(bitPattern: options.rawValue)) }
    }

    /// The same as ``complete(_:)``.
    public func callAsFunction(_ options: PresentationOptions) { complete(options) }
}

/// Answers `didReceive(_:completion:)` for a notification response: call it exactly once,
/// from any thread, when the response is handled.
///
/// Exactly once: the host ignores a second call and logs it, and answers for the service
/// when its deadline passes without one.
public final class ResponseCompletion: Sendable {
    private let handle: CompletionHandle
    private let body: (@Sendable () -> Void)?

    init(_ handle: CompletionHandle) {
        self.handle = handle
        body = nil
    }

    /// Creates a completion that calls `body`; for tests of a service.
    public init(_ body: @escaping @Sendable () -> Void) {
        handle = CompletionHandle(raw: nil)
        self.body = body
    }

    /// Reports the response handled. Call exactly once, from any thread.
    public func complete() {
        if let body { body() } else { handle.complete(Int32(SH_OK)) }
    }

    /// The same as ``complete()``.
    public func callAsFunction() { complete() }
}
