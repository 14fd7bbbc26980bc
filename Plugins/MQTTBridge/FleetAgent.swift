import Dispatch
import Glibc
import MQTTCodec
import ServiceKit

/// The host's side of a fleet's desired state (issue 41): follows the retained
/// `<prefix>/desired` (``FleetDesired``), fetches the bundle it names from the broker, has the
/// host check its size, digest and signature (`deploy` `verify`), unpacks it (``BundleArchive``,
/// only then), hands the folder to the host's deploy (extension deploy/1, whose `done` says how
/// its probation ended), and publishes the retained `<prefix>/reported`:
///
///     {"hostId": "kiosk-17", "desired": "<digest>", "status": "applied",
///      "deploy": {"digest": …, "status": …, "reason": …, "detail": …, "culprit": …, "generation": 3},
///      "generation": {"digest": "<the bundle running>", "number": 3},
///      "services": [{"id": …, "version": …, "state": "running", "health": {"status": …, "reason": …},
///                    "lastFailure": …}]}
///
/// `status` is `downloading`, `verifying`, `probation`, `applied`, `rolledBack` or `refused`.
/// What it did is kept in the store (``FleetRecord``): a desired state applied, refused or
/// rolled back is not tried again until it changes; a download or check cut short by a stop is
/// started again from the retained messages when the host is back; a deploy in probation is
/// watched to its end, also by a new copy of the bridge the deploy itself brought. An `applied`
/// that the deploy's `done` said is not written at once: the stored `probation` stands for it
/// until the next write or the bridge's stop, the host's deploy status saying how it ended
/// after a crash (as it says for a `downloading` the store never held).
///
/// Work runs on one serial queue; the host's replies (main thread) hop onto it.
final class FleetAgent: Sendable {
    private let settings: MQTTBridgeSettings
    private let host: HostContext
    private let mqtt: MQTTClient
    private let queue = DispatchQueue(label: "servicehost.mqtt-bridge.fleet")
    /// The record's writes to the store, in order, off `queue`.
    private let saves = DispatchQueue(label: "servicehost.mqtt-bridge.fleet-store")

    /// A bundle being fetched: its pieces are written to ``BundleFile`` in order as they come,
    /// never assembled in memory; one that comes before its turn waits in `early`.
    private struct Download {
        var desired: FleetDesired
        var early: [Int: [UInt8]] = [:]
        /// The piece to write next, and the bytes received (written or early).
        var next = 0
        var bytes = 0
        /// Made at the first piece; closed (and removed) when the download is dropped.
        var file: BundleFile?
    }

    private struct State {
        var record = FleetRecord()
        var desired: String?
        var download: Download?
        /// The generation whose probation is being followed.
        var watching: Int?
        /// A desired state that came while another deploy was in probation: fetched at its end.
        var pending: FleetDesired?
        /// A probation the fleet did not start (a `ctl deploy` by hand): its generation, and the
        /// desired state that waits for its end before it is fetched (one deploy at a time).
        var foreign: Int?
        var afterForeign: FleetDesired?
        var stopped = false
        /// Whether this copy of the bridge fetched a bundle (or was asked to) since it started.
        var fetched = false
        /// The last reported state published, and whether the refresh is running.
        var lastReported: [UInt8]?
        var refreshing = false
        /// Whether the record is newer than the store by an `applied` not written at once.
        var unstored = false
        /// The services last reported, from the host's `list` and `digests`.
        var services: [JSONValue]?
    }

    // Changed on `queue`; `stopped` is also set from the main thread (willTerminate).
    private let state = Locked(State())
    /// The record to write next, when a write is queued on `saves`.
    private let unsaved = Locked<FleetRecord?>(nil)

    /// How often a deploy in probation is asked about when no `done` will say its end: a host
    /// without extension deploy/1, or a probation this copy of the bridge did not start (after
    /// a restart, or a new bridge the bundle brought).
    static let watchInterval = 0.5

    init(settings: MQTTBridgeSettings, host: HostContext, client: MQTTClient) {
        self.settings = settings
        self.host = host
        // Held, not borrowed from the bridge: a watch still queued when the bridge was replaced
        // by a deploy finds it (and the `stopped` flag) rather than a freed bridge.
        self.mqtt = client
        if let bytes = try? host.store.get(FleetRecord.storeKey) {
            state.withLock { $0.record = FleetRecord(stored: bytes) }
        }
    }

    var desiredTopic: String { "\(settings.prefix)/desired" }
    var reportedTopic: String { "\(settings.prefix)/reported" }

    /// Whether `topic` is a bundle's (the bridge hands those here).
    static func isBundleTopic(_ topic: String) -> Bool { topic.hasPrefix(FleetDesired.bundlesPrefix) }

    /// Stops the work; an `applied` not written yet is written now (after the writes queued).
    func stop() {
        let record = state.withLock { state in
            defer { (state.stopped, state.unstored) = (true, false) }
            return state.unstored ? state.record : nil
        }
        guard let record else { return }
        saves.sync { [host] in Self.store(record, host) }
    }

    /// Connected (again): a fetch in progress subscribes again (a new session has lost it), and
    /// a host that ever took part says where it is.
    func connected() {
        queue.async { [self] in
            let (download, known, record, watching) = state.withLock {
                ($0.download, $0.record.status != nil, $0.record, $0.watching)
            }
            if let download {
                mqtt.subscribe(download.desired.filters.map { MQTTSubscription($0, qos: 0) })
            }
            if known { report() }
            // A stored probation (its `applied` may not have been written) is asked about now,
            // whether or not a desired state comes.
            if record.status == "probation", let generation = record.generation, let digest = record.digest,
                watching == nil
            {
                watch(generation, digest: digest)
            }
            let start = state.withLock { state in
                defer { state.refreshing = true }
                return !state.refreshing
            }
            if start { refresh() }
        }
    }

    /// Every `reportInterval` seconds, a host that ever took part looks at its services again
    /// and publishes its reported state when it changed: a service's state or health (issue 42's
    /// health checks) changes without a deploy.
    private func refresh() {
        queue.asyncAfter(deadline: .now() + settings.reportInterval) { [self] in
            let (stopped, known) = state.withLock { ($0.stopped, $0.record.status != nil) }
            guard !stopped else { return }
            if known { report(onlyIfChanged: true) }
            refresh()
        }
    }

    // MARK: The desired state

    /// A message on `<prefix>/desired`.
    func desired(_ payload: [UInt8]) {
        queue.async { [self] in
            guard !payload.isEmpty else { return }  // cleared: nothing is desired, nothing changes
            let desired: FleetDesired
            do throws(FleetDesired.Problem) { desired = try FleetDesired.parse(payload) } catch {
                host.log(.warn, "mqtt.fleetRefused reason=badDesired: \(desiredTopic): \(error)")
                settle(digest: nil, status: "refused", reason: "badDesired", detail: error.description)
                return
            }
            let record = state.withLock {
                $0.desired = desired.digest
                return $0.record
            }
            if record.digest == desired.digest, record.isSettled {
                host.log(
                    .info,
                    "mqtt.fleetSkipped status=\(record.status ?? ""): \(desired.digest) was \(record.status ?? "") before; not tried again until the desired state changes"
                )
                report()
                return
            }
            if record.status == "probation", let generation = record.generation, let watched = record.digest {
                // One deploy at a time: the one in probation is followed to its end (also after a
                // restart), and a different desired state waits for it. Before the check of the
                // running bundle: what runs is known once the probation has ended.
                let following = state.withLock { state in
                    if watched != desired.digest { state.pending = desired }
                    return state.watching == generation
                }
                if !following { watch(generation, digest: watched) }
                return
            }
            let waiting = state.withLock { state in
                if state.foreign != nil { state.afterForeign = desired }
                return state.foreign != nil
            }
            if waiting { return report() }
            if desired.digest == record.running {
                // The host runs it already (a later bundle was refused or rolled back).
                settle(
                    digest: desired.digest, status: "applied", generation: record.runningGeneration, running: true)
                return
            }
            if let download = state.withLock({ $0.download }), download.desired == desired { return }
            let replaced = state.withLock { state in
                defer { state.fetched = true }
                return !state.fetched
            }
            if replaced {
                // This copy fetched nothing yet, and the desired state is neither settled nor in
                // probation in the store: the deploy may have started this copy (a bundle bringing
                // another bridge), its probation running, which the host says.
                return follow(desired)
            }
            fetch(desired)
        }
    }

    /// A copy of the bridge started by the deploy of `desired` (the bundle brought it): the
    /// copy it replaced cannot say how the probation ends, so this one follows it, asking the
    /// host every ``watchInterval`` seconds. Only a probation deployed from a folder of this
    /// bundle's (``isDeployed(_:from:)``) is followed; one deployed otherwise (a `ctl deploy` by
    /// hand) is not reported as the bundle's: the bundle waits for its end (``waitForEnd(of:then:)``).
    /// No probation: the bundle never reached the deploy (a stop cut its download or check
    /// short), and it is fetched.
    private func follow(_ desired: FleetDesired) {
        let asked: Void? = try? host.control(.object(["command": "deploy", "action": "status"])) { [self] reply in
            queue.async { [self] in
                guard let probation = reply["deploy"]?["probation"], let generation = probation["generation"]?.intValue
                else { return fetch(desired) }
                guard Self.isDeployed(desired.digest, from: probation["from"]?.stringValue) else {
                    return waitForEnd(of: generation, then: desired)
                }
                host.log(
                    .info,
                    "mqtt.fleetProbation digest=\(desired.digest) generation=\(generation): deployed, watched by the bridge it brought"
                )
                update(digest: desired.digest, status: "probation", generation: generation)
                watch(generation, digest: desired.digest)
            }
        }
        if asked == nil { fetch(desired) }
    }

    /// Whether the deploy from folder `from` (`deploy status`'s) is the bridge's of bundle
    /// `digest`: the bridge unpacks a bundle into a folder named after its digest
    /// (``temporaryFolder(for:)``). A host that does not say `from` deployed nothing of ours as
    /// far as the bridge knows.
    static func isDeployed(_ digest: String, from: String?) -> Bool {
        guard let from, let name = from.split(separator: "/").last else { return false }
        return name.hasPrefix("\(folderPrefix)-\(digest).")
    }

    /// Generation `generation` is in probation, not deployed by the fleet: `desired` is fetched
    /// when it ends (applied or rolled back), the host asked every ``watchInterval`` seconds;
    /// the reported state says what the agent did and what the host runs, never that probation
    /// as the bundle's.
    private func waitForEnd(of generation: Int, then desired: FleetDesired) {
        let first = state.withLock { state in
            defer { (state.foreign, state.afterForeign) = (generation, desired) }
            return state.foreign != generation
        }
        if first {
            host.log(
                .info,
                "mqtt.fleetWaiting generation=\(generation) digest=\(desired.digest): generation \(generation) in probation was not deployed by the fleet; the bundle waits for its end"
            )
            report()
        }
        queue.asyncAfter(deadline: .now() + Self.watchInterval) { [self] in
            guard !state.withLock({ $0.stopped }) else { return }
            let asked: Void? = try? host.control(.object(["command": "deploy", "action": "status"])) { [self] reply in
                queue.async { [self] in
                    if reply["deploy"]?["probation"]?["generation"]?.intValue == generation {
                        return waitForEnd(of: generation, then: state.withLock { $0.afterForeign } ?? desired)
                    }
                    let next = state.withLock { state in
                        defer { (state.foreign, state.afterForeign) = (nil, nil) }
                        let next = state.afterForeign ?? desired
                        return state.desired == next.digest ? next : nil
                    }
                    if let next { fetch(next) }
                }
            }
            if asked == nil {
                host.log(
                    .warn,
                    "mqtt.fleetWatchFailed: generation \(generation) is not followed; \(desired.digest) is fetched"
                )
                state.withLock { ($0.foreign, $0.afterForeign) = (nil, nil) }
                fetch(desired)
            }
        }
    }

    private func fetch(_ desired: FleetDesired) {
        let previous = state.withLock { state in
            let previous = state.download
            state.download = Download(desired: desired)
            state.fetched = true
            return previous
        }
        if let previous { mqtt.unsubscribe(previous.desired.filters) }
        host.log(
            .info,
            "mqtt.fleetDownloading digest=\(desired.digest) bytes=\(desired.size) chunks=\(desired.chunks): from \(desired.source)"
        )
        // Reported, not stored (nor is `verifying`): a download or check cut short starts again
        // from the retained desired state whatever the store says (the record before it is as
        // good; a new copy of the bridge asks the host for a probation first), and each write
        // costs a file and two `fsync`s per rollout.
        update(digest: desired.digest, status: "downloading", store: false)
        mqtt.subscribe(desired.filters.map { MQTTSubscription($0, qos: 0) })
    }

    // MARK: The bundle

    /// A message on a bundle's topic.
    func piece(_ message: MQTTPublish) {
        queue.async { [self] in
            // The download changes only on this queue: it is worked on outside the lock.
            guard !message.payload.isEmpty, var download = state.withLock({ $0.download }),
                let index = download.desired.chunkIndex(message.topic), index >= download.next,
                download.early[index] == nil
            else { return }
            let (total, overflow) = download.bytes.addingReportingOverflow(message.payload.count)
            guard !overflow, total <= download.desired.size else {
                state.withLock { $0.download = nil }
                let digest = state.withLock { $0.record.digest }
                refuse(
                    digest: digest, reason: "sizeMismatch",
                    detail: "the pieces come to more than the \(download.desired.size) bytes the desired state says")
                return
            }
            download.bytes = total
            download.early[index] = message.payload
            do throws(RouteProblem) {
                let file: BundleFile
                if let made = download.file { file = made } else { file = try BundleFile() }
                download.file = file
                // This piece and those that came early after it, in order.
                while let piece = download.early.removeValue(forKey: download.next) {
                    try file.append(piece)
                    download.next += 1
                }
            } catch {
                state.withLock { $0.download = nil }
                refuse(digest: download.desired.digest, reason: "unpackFailed", detail: error.description)
                return
            }
            guard download.next == download.desired.chunks, let file = download.file else {
                state.withLock { $0.download = download }
                return
            }
            state.withLock { $0.download = nil }
            mqtt.unsubscribe(download.desired.filters)
            guard total == download.desired.size else {
                refuse(
                    digest: download.desired.digest, reason: "sizeMismatch",
                    detail: "the bundle is \(total) bytes, the desired state says \(download.desired.size)")
                return
            }
            verify(download.desired, file)
        }
    }

    /// A bundle's piece over `maxPacket`: it cannot be fetched.
    func oversized(_ topic: String, size: Int) {
        queue.async { [self] in
            guard let download = state.withLock({ $0.download }), download.desired.chunkIndex(topic) != nil else {
                return
            }
            state.withLock { $0.download = nil }
            mqtt.unsubscribe(download.desired.filters)
            refuse(
                digest: download.desired.digest, reason: "oversized",
                detail:
                    "\(topic) carries \(size) bytes, over settings.maxPacket (\(settings.maxPacket)): publish it in smaller chunks"
            )
        }
    }

    // MARK: Checking, unpacking, deploying

    private func verify(_ desired: FleetDesired, _ file: BundleFile) {
        update(digest: desired.digest, status: "verifying", store: false)
        let folder: String
        do { folder = try Self.temporaryFolder(for: desired.digest) } catch {
            refuse(digest: desired.digest, reason: "unpackFailed", detail: error.description)
            return
        }
        let request: JSONValue = .object([
            "command": "deploy", "action": "verify", "path": .string(file.path), "size": .number(Double(desired.size)),
            "sha256": .string(desired.digest), "signature": .string(desired.signature),
        ])
        submit(request, folder: folder, digest: desired.digest) { [self] reply in
            guard reply["ok"]?.boolValue == true, let verdict = reply["bundle"] else {
                Self.remove(folder)
                refuse(
                    digest: desired.digest, reason: "verifyFailed",
                    detail: reply["error"]?.stringValue ?? "the host did not check the bundle")
                return
            }
            guard verdict["verified"]?.boolValue == true else {
                Self.remove(folder)
                refuse(
                    digest: desired.digest, reason: verdict["reason"]?.stringValue ?? "verifyFailed",
                    detail: verdict["detail"]?.stringValue ?? "the bundle did not verify")
                return
            }
            // Checked: unpacked from the same file (nobody else can write it), then closed.
            unpackAndDeploy(desired, file, folder: folder)
        }
    }

    private func unpackAndDeploy(_ desired: FleetDesired, _ file: BundleFile, folder: String) {
        // The desired state changed while this one was checked: the new one is being fetched.
        guard state.withLock({ $0.desired }) == desired.digest else {
            Self.remove(folder)
            return
        }
        // Unpacked into the folder itself (0700: only the host's user opens it), which the
        // deploy's staging then takes over.
        let directory = folder
        do {
            try file.withContents(size: desired.size) { bytes in
                let archive = try BundleArchive(bytes: bytes)
                try Self.unpack(archive, bytes, into: directory)
            }
        } catch let error as BundleArchiveError {
            Self.remove(folder)
            refuse(digest: desired.digest, reason: error.reason.rawValue, detail: error.detail, culprit: error.entry)
            return
        } catch {
            Self.remove(folder)
            refuse(digest: desired.digest, reason: "unpackFailed", detail: "\(error)")
            return
        }
        deploy(desired, directory: directory, folder: folder)
    }

    /// Hands the unpacked set to the host's deploy (extension deploy/1), whose `done` says how
    /// the probation ended the moment it ends; a `deploy` `status` request made right after
    /// (the host carries a service's requests out in order, on its main thread) names the
    /// generation now in probation. A host without the extension gets the `deploy` request,
    /// and its probation is asked about every ``watchInterval`` seconds.
    private func deploy(_ desired: FleetDesired, directory: String, folder: String) {
        let probation = desired.probation.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) }
        do throws(HostError) {
            try host.deploy(directory, probation: probation) { [self] outcome in
                queue.async { self.ended(outcome, desired: desired, folder: folder) }
            }
        } catch .unsupported {
            return requestDeploy(desired, directory: directory, folder: folder)
        } catch {
            Self.remove(folder)
            return refuse(
                digest: desired.digest, reason: "deployRefused",
                detail: "the host did not take the deploy of \(directory) (\(error))")
        }
        do {
            try host.control(.object(["command": "deploy", "action": "status"])) { [self] reply in
                queue.async { self.switched(reply, digest: desired.digest, folder: folder) }
            }
        } catch {
            host.log(.warn, "mqtt.fleetWatchFailed: the host does not say which generation is in probation (\(error))")
        }
    }

    /// The host's deploy status just after the deploy: its generation in probation is this
    /// bundle's, unless the deploy has ended already (refused, or rolled back at once).
    private func switched(_ reply: JSONValue, digest: String, folder: String) {
        // The deploy copied the set into its generation: the unpacked folder is done with.
        Self.remove(folder)
        // A probation deployed by someone else (the deploy was refused: its `done` says so).
        guard let probation = reply["deploy"]?["probation"], let generation = probation["generation"]?.intValue,
            Self.isDeployed(digest, from: probation["from"]?.stringValue)
        else { return }
        let deploying = state.withLock { state in
            guard state.record.digest == digest, state.record.status == "verifying" else { return false }
            state.watching = generation
            return true
        }
        guard deploying else { return }
        host.log(.info, "mqtt.fleetProbation digest=\(digest) generation=\(generation): deployed, in probation")
        update(digest: digest, status: "probation", generation: generation)
    }

    /// The deploy's `done`: applied, rolled back (with the culprit and the reason) or refused.
    private func ended(_ outcome: DeployOutcome, desired: FleetDesired, folder: String) {
        let digest = desired.digest
        Self.remove(folder)
        guard state.withLock({ $0.record.digest == digest && !$0.record.isSettled }) else { return }
        switch outcome.result {
        case .applied:
            // Not written at once (a file and two `fsync`s per rollout): see the type's comment.
            settle(digest: digest, status: "applied", generation: outcome.generation, running: true, store: false)
        case .rolledBack:
            let reason = outcome.reason ?? "rolledBack"
            let generation = outcome.generation.map { "generation \($0)" } ?? "the generation"
            settle(
                digest: digest, status: "rolledBack", reason: reason,
                detail: reason == "requiredFailed"
                    ? "\(outcome.culprit ?? "a required service") did not start with \(generation)"
                    : "\(generation) was rolled back" + (outcome.culprit.map { " (\($0): \(reason))" } ?? ""),
                culprit: outcome.culprit, generation: outcome.generation)
        case .refused:
            refused(desired, detail: outcome.error ?? "the host did not deploy the bundle")
        }
    }

    /// The host refused the deploy of `desired`: when a probation the fleet did not start runs
    /// (a `ctl deploy` by hand), the bundle waits for its end and is fetched again after it (one
    /// deploy at a time); otherwise it is refused.
    private func refused(_ desired: FleetDesired, detail: String) {
        let asked: Void? = try? host.control(.object(["command": "deploy", "action": "status"])) { [self] reply in
            queue.async { [self] in
                if let probation = reply["deploy"]?["probation"], let generation = probation["generation"]?.intValue,
                    !Self.isDeployed(desired.digest, from: probation["from"]?.stringValue)
                {
                    return waitForEnd(of: generation, then: desired)
                }
                refuse(digest: desired.digest, reason: "deployRefused", detail: detail)
            }
        }
        if asked == nil { refuse(digest: desired.digest, reason: "deployRefused", detail: detail) }
    }

    /// The deploy as a `deploy` request, for a host without extension deploy/1: its reply names
    /// the generation, whose probation is then asked about every ``watchInterval`` seconds.
    private func requestDeploy(_ desired: FleetDesired, directory: String, folder: String) {
        var request: [String: JSONValue] = ["command": "deploy", "directory": .string(directory)]
        if let probation = desired.probation { request["seconds"] = .number(probation) }
        submit(.object(request), folder: folder, digest: desired.digest) { [self] reply in
            // The deploy copied the set into its generation: the unpacked folder is done with.
            Self.remove(folder)
            guard reply["ok"]?.boolValue == true, let generation = reply["generation"]?.intValue else {
                refuse(
                    digest: desired.digest, reason: "deployRefused",
                    detail: reply["error"]?.stringValue ?? "the host did not deploy the bundle")
                return
            }
            if let culprit = reply["rolledBack"]?.stringValue {
                settle(
                    digest: desired.digest, status: "rolledBack", reason: "requiredFailed",
                    detail: "\(culprit) did not start with generation \(generation)", culprit: culprit,
                    generation: generation)
                return
            }
            host.log(.info, "mqtt.fleetProbation digest=\(desired.digest) generation=\(generation): deployed, watched")
            update(digest: desired.digest, status: "probation", generation: generation)
            watch(generation, digest: desired.digest)
        }
    }

    /// Hands `request` to the host; its reply runs on the queue. A host that takes no requests
    /// from the bridge refuses the bundle (`"requests": "all"` is needed): false, `then` never runs.
    @discardableResult
    private func submit(
        _ request: JSONValue, folder: String, digest: String, then: @escaping @Sendable (JSONValue) -> Void
    ) -> Bool {
        do {
            try host.control(request) { [self] reply in queue.async { then(reply) } }
            return true
        } catch {
            Self.remove(folder)
            refuse(
                digest: digest, reason: "verifyFailed",
                detail: "the host takes no requests from the bridge (\(error)): grant it \"requests\": \"all\"")
            return false
        }
    }

    /// Asks the host how the probation of `generation` ends, every ``watchInterval`` seconds.
    private func watch(_ generation: Int, digest: String) {
        state.withLock { $0.watching = generation }
        queue.asyncAfter(deadline: .now() + Self.watchInterval) { [self] in
            guard !state.withLock({ $0.stopped }) else { return }
            do {
                try host.control(.object(["command": "deploy", "action": "status"])) { [self] reply in
                    queue.async { self.watched(generation, digest: digest, reply) }
                }
            } catch {
                host.log(.warn, "mqtt.fleetWatchFailed: \(error); generation \(generation) is not followed")
            }
        }
    }

    private func watched(_ generation: Int, digest: String, _ reply: JSONValue) {
        guard let status = reply["deploy"] else {
            watch(generation, digest: digest)
            return
        }
        if status["probation"]?["generation"]?.intValue == generation {
            watch(generation, digest: digest)
            return
        }
        let entry = status["generations"]?.arrayValue?.last {
            $0["generation"]?.intValue == generation && $0["outcome"]?.stringValue != "inProbation"
        }
        // A generation that is current was applied, when the history's last lines no longer name it.
        let current = status["current"]?.intValue == generation ? "applied" : nil
        switch entry?["outcome"]?.stringValue ?? current {
        case "applied":
            settle(digest: digest, status: "applied", generation: generation, running: true)
        case "rolledBack":
            let culprit = entry?["culprit"]?.stringValue
            let reason = entry?["reason"]?.stringValue ?? "rolledBack"
            settle(
                digest: digest, status: "rolledBack", reason: reason,
                detail: "generation \(generation) was rolled back" + (culprit.map { " (\($0): \(reason))" } ?? ""),
                culprit: culprit, generation: generation)
        default:
            // Neither applied nor rolled back in the host's record: not running.
            settle(
                digest: digest, status: "rolledBack", reason: "notAccepted",
                detail: "generation \(generation) is not in the host's record as applied", generation: generation)
        }
    }

    // MARK: The record and the report

    private func refuse(digest: String?, reason: String, detail: String, culprit: String? = nil) {
        host.log(
            .warn,
            "mqtt.fleetRefused reason=\(reason)\(digest.map { " digest=\($0)" } ?? ""): \(detail)")
        settle(digest: digest, status: "refused", reason: reason, detail: detail, culprit: culprit)
    }

    /// The deploy of `digest` reached `status`; `running`: the host now runs it.
    private func settle(
        digest: String?, status: String, reason: String? = nil, detail: String? = nil, culprit: String? = nil,
        generation: Int? = nil, running: Bool = false, store: Bool = true
    ) {
        // Refusals are said by `refuse`; the steps on the way by their own lines.
        if status == "applied" || status == "rolledBack" {
            host.log(
                status == "applied" ? .info : .warn,
                "mqtt.fleet\(status == "applied" ? "Applied" : "RolledBack")\(digest.map { " digest=\($0)" } ?? "")\(generation.map { " generation=\($0)" } ?? ""): \(detail ?? status)"
            )
        }
        state.withLock { state in
            var record = state.record
            record.digest = digest
            record.status = status
            record.reason = reason
            record.detail = detail
            record.culprit = culprit
            record.generation = generation
            if running {
                record.running = digest
                record.runningGeneration = generation
            }
            state.record = record
            if status == "applied" && !store { state.unstored = true }
        }
        if store { save() }
        report()
        // Settled: the desired state that waited for this deploy's probation goes next.
        guard status == "applied" || status == "rolledBack" || status == "refused" else { return }
        let next = state.withLock { state in
            state.watching = nil
            defer { state.pending = nil }
            return state.pending.flatMap { $0.digest == digest ? nil : $0 }
        }
        if let next { fetch(next) }
    }

    private func update(digest: String, status: String, generation: Int? = nil, store: Bool = true) {
        settle(digest: digest, status: status, generation: generation, store: store)
    }

    /// Writes the record to the store on a queue of its own, in order: the write waits for the
    /// disk (a file and a folder `fsync`), the download, the check and the report need not.
    /// A record superseded before its write began is not written (the newer one is): what is
    /// stored is always the newest record, with one write per wait rather than one per step.
    private func save() {
        let record = state.withLock { state in
            state.unstored = false
            return state.record
        }
        let queued = unsaved.withLock { unsaved in
            defer { unsaved = record }
            return unsaved != nil
        }
        guard !queued else { return }
        saves.async { [host, unsaved] in
            let next = unsaved.withLock { unsaved in
                defer { unsaved = nil }
                return unsaved
            }
            guard let record = next else { return }
            Self.store(record, host)
        }
    }

    private static func store(_ record: FleetRecord, _ host: HostContext) {
        do { try host.store.set(FleetRecord.storeKey, Array(record.json.serialized.utf8)) } catch {
            host.log(.warn, "mqtt.storeFailed: \(error); the fleet's deploy state may be tried again after a restart")
        }
    }

    /// Publishes the retained `<prefix>/reported`, with the services from a `list` request and
    /// their files' digests from a `deploy` `digests` one.
    /// `onlyIfChanged`: not when it is the one published last (the refresh).
    ///
    /// While a bundle is fetched and checked (`downloading`, `verifying`) nothing is deployed:
    /// the services last reported are reported again rather than asked for (two requests fewer
    /// per step); the refresh and every other status ask the host.
    func report(onlyIfChanged: Bool = false) {
        let (record, desired, stopped, known) = state.withLock { ($0.record, $0.desired, $0.stopped, $0.services) }
        guard !stopped else { return }
        if !onlyIfChanged, record.status == "downloading" || record.status == "verifying", let known {
            return publish(record, desired: desired, services: known, runs: nil, onlyIfChanged: false)
        }
        // What the host runs first: a deploy or a rollback by hand after the fleet's leaves the
        // record naming a generation that no longer runs (reported as drift). Not while the
        // fleet's own deploy is in probation: nothing drifts then (``HostGeneration/drifted(from:)``),
        // and each rollout asks one request fewer.
        if record.status == "probation" {
            return reportServices(record, desired: desired, runs: nil, onlyIfChanged: onlyIfChanged)
        }
        let asked: Void? = try? host.control(.object(["command": "deploy", "action": "status"])) { [self] status in
            reportServices(
                record, desired: desired, runs: HostGeneration(status["deploy"]), onlyIfChanged: onlyIfChanged)
        }
        if asked == nil { reportServices(record, desired: desired, runs: nil, onlyIfChanged: onlyIfChanged) }
    }

    /// The rest of ``report(onlyIfChanged:)``: the services and their digests, then the report.
    private func reportServices(
        _ record: FleetRecord, desired: String?, runs: HostGeneration?, onlyIfChanged: Bool
    ) {
        let publish: @Sendable ([JSONValue]) -> Void = { [self] services in
            state.withLock { $0.services = services }
            self.publish(record, desired: desired, services: services, runs: runs, onlyIfChanged: onlyIfChanged)
        }
        let submitted =
            (try? host.control(.object(["command": "deploy", "action": "digests"])) { [self] digests in
                let listed =
                    (try? host.control(.object(["command": "list"])) { reply in
                        let services = reply["services"]?.arrayValue ?? []
                        publish(services.map { Self.reportedService($0, digests: digests["digests"]) })
                    }) != nil
                if !listed { publish([]) }
            }) != nil
        if !submitted { publish([]) }
    }

    /// `runs`: what the host said it runs (nil: not asked, or it did not answer).
    private func publish(
        _ record: FleetRecord, desired: String?, services: [JSONValue], runs: HostGeneration?, onlyIfChanged: Bool
    ) {
        var object: [String: JSONValue] = [
            "hostId": .string(settings.hostID), "deploy": record.json, "services": .array(services),
            "status": record.status.map(JSONValue.string) ?? .null,
            "desired": desired.map(JSONValue.string) ?? .null,
        ]
        var generation: [String: JSONValue] = [:]
        if let runs, runs.drifted(from: record) {
            // Not the fleet's bundle: the generation the host runs, where it came from, and no digest.
            if let current = runs.current { generation["number"] = .number(Double(current)) }
            if let from = runs.from { generation["from"] = .string(from) }
            generation["drift"] = .bool(true)
        } else {
            if let running = record.running { generation["digest"] = .string(running) }
            if let number = record.runningGeneration { generation["number"] = .number(Double(number)) }
        }
        object["generation"] = generation.isEmpty ? .null : .object(generation)
        let payload = Array(JSONValue.object(object).serialized.utf8)
        let changed = state.withLock { state in
            defer { state.lastReported = payload }
            return state.lastReported != payload
        }
        guard changed || !onlyIfChanged else { return }
        mqtt.publish(topic: reportedTopic, payload, qos: settings.qos, retain: true)
    }

    /// One service of `list` as reported: id, version, its file's digest, state, health (the
    /// last check's `status` and `reason`, as `ctl list` shows it; null when it has none) and
    /// last failure.
    static func reportedService(_ service: JSONValue, digests: JSONValue?) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for key in ["id", "version", "state", "health"] { object[key] = service[key] ?? .null }
        object["digest"] = service["id"]?.stringValue.flatMap { digests?[$0] } ?? .null
        object["lastFailure"] = service["lastError"] ?? service["failure"] ?? .null
        return .object(object)
    }

    // MARK: Files

    /// The name the bridge's folders begin with.
    static let folderPrefix = "servicehost-bundle"

    /// A folder of the bridge's own (0700) under `$TMPDIR` or `/tmp`; with `digest`, named after
    /// it (`servicehost-bundle-<digest>.XXXXXX`): the deploy's `from`, so a new copy of the bridge
    /// knows a probation as this bundle's (``isDeployed(_:from:)``).
    static func temporaryFolder(for digest: String? = nil) throws(RouteProblem) -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let name = digest.map { "\(folderPrefix)-\($0)" } ?? folderPrefix
        var template = Array("\(base)/\(name).XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw RouteProblem("cannot make a folder under \(base): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// Writes `bytes` to a new file `path` (never one that exists, never through a link).
    static func write(_ bytes: UnsafeRawBufferPointer, to path: String, mode: mode_t = 0o600) throws(RouteProblem) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw RouteProblem("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try write(bytes, to: fd, path: path)
    }

    /// Writes all of `bytes` to the open `fd`; `path` names it in errors.
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws(RouteProblem) {
        var offset = 0
        while offset < bytes.count {
            let written = retryingOnInterrupt { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
            guard written > 0 else { throw RouteProblem("\(path): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// Writes the archive's files into the empty folder `directory`, one only the host's user
    /// can open (``temporaryFolder()``, 0700), the files read-only (0444), so the host's deploy
    /// takes them over (links them into its generation, on the same file system) rather than
    /// copying them.
    static func unpack(_ archive: BundleArchive, _ bytes: UnsafeRawBufferPointer, into directory: String)
        throws(RouteProblem)
    {
        for entry in archive.entries {
            try write(
                UnsafeRawBufferPointer(rebasing: bytes[entry.bytes]), to: directory + "/" + entry.name, mode: 0o444)
        }
    }

    /// Removes `folder` and the files the bridge put in it (one level: a bundle's set, or
    /// `bundle.tar`).
    static func remove(_ folder: String) {
        if let dir = opendir(folder) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { unlink(folder + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(folder)
    }
}
