import ServiceKit

/// Seed 002's offline queue: items (JSON values) waiting to be sent, kept in the service's
/// store so that none is lost across a restart or a kill -9.
///
/// Notifications it subscribes to (any payload on flush and dump is ignored):
/// - `queue.enqueue`: the payload, whatever JSON value it is, is the item (an object is
///   enqueued as is, never unwrapped). No payload, or one that is not valid JSON, enqueues
///   nothing (a warn line). `host ctl post queue.enqueue '{"text":"hi"}'`.
/// - `queue.flush`: "sends" every item (as the seed does once online: here it only logs
///   them), then empties the queue.
/// - `network.reachable`: the network came back (seed 002: "once online, send what is
///   queued first"): `network reachable: flushing`, then as `queue.flush`.
/// - `network.changed` (the host's network source): `"online"` becoming true is as
///   `network.reachable`.
/// - `queue.dump`: logs the items.
///
/// Requests it answers (`host ctl request queue.count`, or `host.request("queue.count")`
/// from another service): `queue.count` replies `{"count": N}`, the items pending.
///
/// Storage: one key, `queue.items`, holds the whole queue as a JSON array, oldest first
/// (`[{"text":"hi"},42]`). It is written on every change (enqueue, flush) before the line
/// reporting the change is logged, and again at didEnterBackground and willTerminate if an
/// earlier write failed. An item whose queue the store refuses (`invalid`: in practice over
/// the host's size limit for one value) is dropped with a warn line, never reported
/// enqueued. The host writes a key atomically and durably, so after a kill -9 the key holds
/// the queue as it was before or after the last change, never a mix: one key needs no
/// recovery logic, whereas a key per item plus an index could be torn between the writes. The price is rewriting the queue on every enqueue, which `maxItems`
/// bounds. Sending is at-least-once: a flush logs the items, then writes the empty queue,
/// so a crash between the two sends them again at the next flush rather than losing them.
///
/// The stored queue is read at didFinishLaunching, or earlier if a notification arrives
/// first; items enqueued before that go after the stored ones. The key is never written
/// before it was read, so a failed read cannot overwrite items; a stored value that is not
/// a JSON array is kept under `queue.items.unreadable` before the queue starts empty. When
/// the host has no store, one warn line says so and the queue lives in memory only.
///
/// Log lines (all prefixed `offline-queue: `):
/// - info `restored N item(s)`; `enqueued <json> (N pending)`; `sent N item(s)`;
///   `N item(s) pending: <json array>`
/// - debug `sending <json>` (one per item, before `sent`); `saved N item(s) (<why>)`, where
///   why is `enqueue`, `flush`, `didEnterBackground` or `willTerminate`
/// - warn: the host has no store (once), a store error (with the error), an unreadable
///   stored queue, bad settings, an enqueue without a JSON payload, a full queue, an item
///   the store refuses.
///
/// Settings: see ``OfflineQueueSettings`` (`{"maxItems": 1000}`).
final class OfflineQueueService: NotificationReceiving, Answering {
    /// The store key holding the queue as a JSON array.
    static let key = "queue.items"
    /// Where an unreadable stored queue is kept, so that writing ``key`` does not destroy it.
    static let unreadableKey = "queue.items.unreadable"

    // Every member is used on the main thread only (every event arrives there).
    private var settings = OfflineQueueSettings()
    /// The queue, oldest first.
    private var items: [JSONValue] = []
    /// The stored queue has been read into `items` (or there was none): writing the key
    /// cannot lose anything.
    private var loaded = false
    /// `items` holds changes the store does not have yet.
    private var unsaved = false
    /// The host has no store: the queue lives in memory only.
    private var inMemoryOnly = false
    /// What the host's last `network.changed` said (nil: none yet).
    private var networkOnline: Bool?

    func willFinishLaunching(_ options: LaunchOptions) -> Bool {
        let (settings, problems) = OfflineQueueSettings.read(from: options)
        self.settings = settings
        for problem in problems { log(.warn, problem) }
        return true
    }

    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        loadIfNeeded()
        return true
    }

    func didEnterBackground() {
        // Seed 002: the machine may suspend right after. The save runs inside a background task,
        // so the host holds its sleep inhibitor until the save is done (or its time is up).
        let task =
            unsaved
            ? try? host.beginBackgroundTask("offline-queue.save") { task in
                self.log(.warn, "the save's time is up before it finished; the next save tries again")
                task.end()
            } : nil
        save(after: "didEnterBackground")
        task?.end()
    }

    func willTerminate() { save(after: "willTerminate") }

    func didReceive(_ notification: ServiceNotification) {
        switch notification.name {
        case "queue.enqueue": enqueue(notification)
        case "queue.flush": flush()
        case "network.reachable":
            log(.info, "network reachable: flushing")
            flush()
        case "network.changed":
            // The host's network source posts each change: a flush when the network comes back.
            let online = notification.payload?["online"]?.boolValue
            defer { networkOnline = online }
            guard online == true, networkOnline != true else { return }
            log(.info, "network reachable: flushing")
            flush()
        case "queue.dump": dump()
        default: break  // the manifest subscribes to these five names only
        }
    }

    // MARK: - Commands

    private func enqueue(_ notification: ServiceNotification) {
        guard let item = notification.payload else {
            let why = notification.json == nil ? "has no payload" : "has a payload that is not valid JSON"
            log(.warn, "queue.enqueue from \(notification.sender) \(why): nothing enqueued")
            return
        }
        loadIfNeeded()
        guard items.count < settings.maxItems else {
            log(.warn, "queue full (\(items.count) item(s), maxItems \(settings.maxItems)): dropped \(item)")
            return
        }
        // Written before it is accepted: an item the store refuses is never reported enqueued.
        let queue = items + [item]
        switch write(queue, after: "enqueue") {
        case .written:
            unsaved = false
        case .skipped:
            unsaved = true
        case .failed(.invalid):
            // The store refuses the value itself (in practice: over the host's size limit),
            // so no later save could succeed: refuse the item instead of holding it unsaved.
            log(.warn, "the store refused a queue of \(queue.count) item(s) (invalid: too large?): dropped \(item)")
            return
        case .failed(let error):
            log(.warn, "cannot save \(queue.count) item(s) (enqueue): \(error); the next save tries again")
            unsaved = true
        }
        items = queue
        log(.info, "enqueued \(item) (\(items.count) pending)")
    }

    private func flush() {
        loadIfNeeded()
        let sent = items
        for item in sent { log(.debug, "sending \(item)") }
        items.removeAll()
        if !sent.isEmpty { unsaved = true }
        save(after: "flush")
        log(.info, "sent \(sent.count) item(s)")
    }

    func answer(_ request: ServiceRequest, reply: ReplyCompletion) {
        loadIfNeeded()
        reply(["count": .number(Double(items.count))])
    }

    private func dump() {
        loadIfNeeded()
        log(.info, "\(items.count) item(s) pending: \(JSONValue.array(items))")
    }

    // MARK: - Storage

    /// Reads the stored queue once and puts its items before those already in memory.
    /// On a read error `loaded` stays false, and the next call tries again.
    private func loadIfNeeded() {
        guard !loaded, !inMemoryOnly else { return }
        let bytes: [UInt8]?
        do {
            bytes = try host.store.get(Self.key)
        } catch HostError.unsupported {
            storeIsUnsupported()
            return
        } catch {
            log(.warn, "cannot read the stored queue: \(error) (it is read again before the next save)")
            return
        }
        var stored: [JSONValue] = []
        if let bytes {
            switch Self.decode(bytes) {
            case .items(let decoded):
                stored = decoded
            case .unreadable(let reason):
                do {
                    try host.store.set(Self.unreadableKey, bytes)
                } catch {
                    log(
                        .warn,
                        "the stored queue is unreadable (\(reason)) and cannot be kept as \(Self.unreadableKey): \(error)"
                    )
                    return
                }
                log(
                    .warn,
                    "the stored queue is unreadable (\(reason)): kept it as \(Self.unreadableKey) and started empty")
            }
        }
        loaded = true
        if !items.isEmpty { unsaved = true }
        items = stored + items
        log(.info, "restored \(stored.count) item(s)")
    }

    /// Writes the queue if the store lacks changes; on failure a warn line says why and the
    /// next save tries again.
    private func save(after reason: String) {
        guard unsaved else { return }
        loadIfNeeded()
        switch write(items, after: reason) {
        case .written:
            unsaved = false
        case .skipped:
            break
        case .failed(let error):
            log(.warn, "cannot save \(items.count) item(s) (\(reason)): \(error); the next save tries again")
        }
    }

    private enum Write {
        /// The store holds `queue` now.
        case written
        /// Not attempted: the host has no store, or the stored queue has not been read
        /// (both logged).
        case skipped
        /// The store answered this error (not logged).
        case failed(HostError)
    }

    /// Writes `queue` as the stored queue, unless the host has no store or the stored queue
    /// was not read (`loadIfNeeded` first): writing over a queue never read could lose it.
    private func write(_ queue: [JSONValue], after reason: String) -> Write {
        guard !inMemoryOnly else { return .skipped }
        guard loaded else {
            log(
                .warn,
                "not saving \(queue.count) item(s) (\(reason)): the stored queue could not be read,"
                    + " and writing over it could lose items; the next save tries again")
            return .skipped
        }
        do {
            try host.store.set(Self.key, JSONValue.array(queue).serialized)
        } catch HostError.unsupported {
            storeIsUnsupported()
            return .skipped
        } catch {
            return .failed(error)
        }
        log(.debug, "saved \(queue.count) item(s) (\(reason))")
        return .written
    }

    private func storeIsUnsupported() {
        guard !inMemoryOnly else { return }
        inMemoryOnly = true
        log(.warn, "the host has no persistent store (unsupported): the queue is kept in memory only")
    }

    private enum Stored {
        case items([JSONValue])
        case unreadable(String)
    }

    private static func decode(_ bytes: [UInt8]) -> Stored {
        do {
            // One level deeper than a notification payload may be: the array around the items.
            let value = try JSONValue(parsing: bytes, maxDepth: JSONValue.defaultMaxDepth + 1)
            guard let items = value.arrayValue else { return .unreadable("not a JSON array") }
            return .items(items)
        } catch {
            return .unreadable("not valid JSON: \(error)")
        }
    }

    private func log(_ level: LogLevel, _ message: String) {
        host.log(level, "offline-queue: \(message)")
    }
}
