import ServiceABI

/// Extension `dev.servicehost.deploy/1` (deploy.h): a deploy a service asks for, carried out
/// as `ctl deploy` is (``Host/deploy(from:probation:settled:)``), its outcome handed to the
/// service's `done` on the main thread; in process and in a worker (a `deploy` frame, answered
/// by a `requestReply` frame).
enum DeployExtension {
    /// Its row: the id and the table, host-owned and never freed.
    static let row: HostExtensions.Row = {
        return HostExtensions.Row(
            id: SH_DEPLOY_ID,
            table: sh_deploy(
                size: UInt32(MemoryLayout<sh_deploy>.size), version: SH_DEPLOY_VERSION,
                deploy: { host, directory, probation, done, context in
                    guard let functions = HostAdapter.functions(host), let directory, let done,
                        let path = validDirectory(Array(String(cString: directory).utf8)),
                        isValidProbation(probation)
                    else { return HostAdapter.invalid }
                    let target = DoneTarget(function: done, context: context)
                    return functions.deploy(directory: path, probationMilliseconds: probation) { target.call($0) }
                }))
    }()

    /// The directory deploy.h takes (absolute, not empty), or nil.
    static func validDirectory(_ bytes: [UInt8]) -> String? {
        bytes.first == UInt8(ascii: "/") ? String(decoding: bytes, as: UTF8.self) : nil
    }

    /// Whether `milliseconds` is a probation deploy.h takes: 0 (the default) up to a day.
    static func isValidProbation(_ milliseconds: UInt32) -> Bool {
        Double(milliseconds) <= DeployStage.maxProbation * 1000
    }

    /// The probation in seconds of `milliseconds` (0: the default).
    static func probation(_ milliseconds: UInt32) -> Double {
        milliseconds == 0 ? DeployStage.defaultProbation : Double(milliseconds) / 1000
    }

    /// Where the outcome goes: the service's function and its context pointer.
    private struct DoneTarget: @unchecked Sendable {
        // @unchecked: the host never touches `context`, only hands it back to the service's
        // function once, on the main thread, as deploy.h promises.
        let function: sh_deploy_done_fn
        let context: UnsafeMutableRawPointer?

        func call(_ outcome: RequestReply) {
            HostAdapter.withCString(outcome.json) { function(context, outcome.result, $0, outcome.json.count) }
        }
    }
}
