import ServiceABI

/// How a deploy a service asked for ended (deploy.h): applied, rolled back (naming the
/// culprit and the reason) or refused (nothing running changed, with why).
public struct DeployOutcome: Sendable, Equatable {
    /// The three ends of a deploy.
    public enum Result: Sendable, Equatable {
        /// The set passed its probation: it is the host's current generation.
        case applied
        /// A failure in probation, a cancel or a rollback rolled it back.
        case rolledBack
        /// Not switched to: nothing running changed.
        case refused
    }

    public let result: Result
    /// The generation the set was staged as (not for a refusal).
    public let generation: Int?
    /// For a rollback: the service that failed (none for a cancel) and why (`signal`, `hang`,
    /// `requiredFailed`, `cancelled`, …).
    public let culprit: String?
    public let reason: String?
    /// For a refusal: why, naming the file or the request.
    public let error: String?

    /// The outcome the host gave: its code and JSON object.
    init(code: Int32, json: JSONValue?) {
        switch code {
        case Int32(SH_DEPLOY_APPLIED.rawValue): result = .applied
        case Int32(SH_DEPLOY_ROLLED_BACK.rawValue): result = .rolledBack
        default: result = .refused
        }
        generation = json?["generation"]?.intValue
        culprit = json?["culprit"]?.stringValue
        reason = json?["reason"]?.stringValue
        error = json?["error"]?.stringValue
    }
}

extension HostContext {
    /// Asks the host to deploy the set staged in `directory` (an absolute path), as `host ctl
    /// deploy DIR --probation SECS` does: verified, switched to (unchanged services keep
    /// running), watched for `probation` (nil: the host's default, 30 s) and rolled back at the
    /// first failure in it. `completion` runs once on the main thread when the deploy has ended
    /// (refused at once; applied or rolled back when the probation ends). In the host's process
    /// it runs also when the deploy or its rollback replaced or removed this service: after its
    /// stop, in this version's code (host calls made then act for the service id, whose store is
    /// the replacement's). In a worker, a worker that ended with its service never hears back; its
    /// replacement learns the outcome from the request `{"command":"deploy","action":"status"}`
    /// (`context.control(_:reply:)`). The configuration
    /// must grant the service `"requests": "all"`. Any thread; in process and in a worker.
    /// - Throws: ``HostError/unsupported`` when the host does not offer deploys (an older
    ///   host), ``HostError/invalid`` for a relative or empty directory or a probation over a day.
    public func deploy(
        _ directory: String, probation: Duration? = nil, completion: @escaping @Sendable (DeployOutcome) -> Void
    ) throws(HostError) {
        let raw = try attached()
        guard directory.hasPrefix("/"), !directory.utf8.contains(0) else { throw .invalid }
        let milliseconds = probation.map {
            $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000
        }
        guard let milliseconds = UInt32(exactly: milliseconds ?? 0), milliseconds <= 86_400_000 else { throw .invalid }
        guard let pointer = self.extension(id: SH_DEPLOY_ID) else { throw .unsupported }
        let table = pointer.assumingMemoryBound(to: sh_deploy.self)
        guard table.pointee.size >= SH_DEPLOY_SIZE_V1, let deploy = table.pointee.deploy else { throw .unsupported }
        let box = Unmanaged.passRetained(DeployBox(completion)).toOpaque()
        let code = deploy(
            raw, directory, milliseconds,
            { context, code, text, length in
                guard let context else { return }
                let box = Unmanaged<DeployBox>.fromOpaque(context).takeRetainedValue()
                let bytes = text.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
                box.completion(DeployOutcome(code: code, json: try? JSONValue(parsing: bytes)))
            }, box)
        if code != SH_OK {
            Unmanaged<DeployBox>.fromOpaque(box).release()  // the host will not call back
            throw HostError(code: code)
        }
    }
}

/// A deploy's completion, kept alive across the C call until the host answers.
private final class DeployBox: Sendable {
    let completion: @Sendable (DeployOutcome) -> Void
    init(_ completion: @escaping @Sendable (DeployOutcome) -> Void) { self.completion = completion }
}
