import ServiceABI

/// What a pool slot tells of its answer: the host's ``CompletionRecord``, or a worker's
/// ``WorkerCompletion`` (which relays it to the host).
protocol CompletionTarget: AnyObject, Sendable {
    /// The first call of the slot's completion, on the thread that made it.
    func answered(_ result: Int32, _ json: [UInt8]?)
}

/// The host's `sh_completion`s: generation-tagged slots that are reused, so a completion's
/// memory is reclaimed once it is answered or its deadline passed, while a late or second
/// call is still detected and logged.
///
/// Each slot's C struct stays at one address for the process lifetime; its `host_data` holds
/// the slot's index and generation. A retired slot is reused only after ``quarantine`` other
/// completions retired after it (oldest first), so a call that late still finds its own
/// generation's state: answered (a second call) or timed out (a late one). The pool grows
/// only while more than that many completions wait at once; RSS stays flat otherwise.
final class CompletionPool: Sendable {
    /// The pool every `sh_completion` handed to in-process services comes from: the C callback
    /// finds it from `host_data` alone, so only this pool is reached through `complete`
    /// (another, as a test makes, is called directly).
    static let shared = CompletionPool()

    /// Retired slots kept before one is reused: at least 8192 answers come between a
    /// completion's answer (or deadline) and its memory's reuse (about 600 KiB of slots).
    static let quarantine = 8192
    private static let blockSize = 4096

    /// A slot and the generation one completion got.
    struct Handle: Sendable {
        let pool: CompletionPool
        let index: Int
        let generation: UInt32
    }

    private enum State { case waiting, answered, timedOut }
    private struct Slot {
        var generation: UInt32 = 0
        var state = State.timedOut
        var target: (any CompletionTarget)?
        var serviceID = ""
        var event = EventKind.willFinishLaunching
        var log: Log?
        /// Told of every call after the first instead of logging it (a worker relays them all).
        var again: (@Sendable (Int32, [UInt8]?) -> Void)?
    }
    private struct Storage {
        /// The C structs, `blockSize` per block, never freed: a service may keep a pointer.
        var blocks: [UnsafeMutablePointer<sh_completion>] = []
        var slots: [Slot] = []
        /// Retired slot indexes, oldest first from `retiredHead`.
        var retired: [Int] = []
        var retiredHead = 0

        var retiredCount: Int { retired.count - retiredHead }

        mutating func table(_ index: Int) -> UnsafeMutablePointer<sh_completion> {
            blocks[index / CompletionPool.blockSize] + index % CompletionPool.blockSize
        }

        mutating func retire(_ index: Int) {
            retired.append(index)
        }

        mutating func reusable(quarantine: Int) -> Int? {
            guard retiredCount > quarantine else { return nil }
            let index = retired[retiredHead]
            retiredHead += 1
            if retiredHead >= 4096, retiredHead * 2 >= retired.count {
                retired.removeFirst(retiredHead)
                retiredHead = 0
            }
            return index
        }
    }

    private let storage = Locked(Storage())
    private let quarantine: Int

    init(quarantine: Int = CompletionPool.quarantine) { self.quarantine = quarantine }

    /// How many slots exist (waiting, retired or being reused): the pool's size.
    var capacity: Int { storage.withLock { $0.slots.count } }

    /// A slot for one completion; its target is attached right after (`attach`). `again`, when
    /// given, is told of later calls instead of the log.
    func acquire(
        serviceID: String, event: EventKind, log: Log?,
        again: (@Sendable (Int32, [UInt8]?) -> Void)? = nil
    ) -> (Handle, UnsafePointer<sh_completion>) {
        storage.withLock { storage in
            let index: Int
            if let reused = storage.reusable(quarantine: quarantine) {
                index = reused
            } else {
                index = storage.slots.count
                if index % Self.blockSize == 0 { storage.blocks.append(.allocate(capacity: Self.blockSize)) }
                storage.slots.append(Slot())
            }
            storage.slots[index].generation &+= 1
            let generation = storage.slots[index].generation
            storage.slots[index].state = .waiting
            storage.slots[index].serviceID = serviceID
            storage.slots[index].event = event
            storage.slots[index].log = log
            storage.slots[index].again = again
            let table = storage.table(index)
            table.initialize(
                to: sh_completion(
                    size: UInt32(MemoryLayout<sh_completion>.size), version: SH_COMPLETION_VERSION,
                    host_data: Self.hostData(index: index, generation: generation),
                    complete: { completion, result, json, length in
                        guard let completion else { return }
                        let answer = json.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) }
                        CompletionPool.shared.complete(completion, result, answer)
                    }))
            return (Handle(pool: self, index: index, generation: generation), UnsafePointer(table))
        }
    }

    func attach(_ target: any CompletionTarget, to handle: Handle) {
        storage.withLock { storage in
            if storage.slots[handle.index].generation == handle.generation {
                storage.slots[handle.index].target = target
            }
        }
    }

    /// `sh_completion.complete`, on any thread: the first call of a waiting slot is the answer.
    func complete(_ completion: UnsafePointer<sh_completion>, _ result: Int32, _ json: [UInt8]?) {
        enum Outcome {
            case answer(any CompletionTarget)
            case again(@Sendable (Int32, [UInt8]?) -> Void)
            case twice(String, EventKind, Log?)
            case late(String, EventKind, Log?)
            case unknown(Log?)
        }
        let outcome = storage.withLock { storage -> Outcome in
            // host_data is read under the lock: the pool rewrites it when it reuses the slot.
            let (index, generation) = Self.decode(completion.pointee.host_data)
            guard index < storage.slots.count else { return .unknown(storage.slots.first?.log) }
            guard storage.slots[index].generation == generation else { return .unknown(storage.slots[index].log) }
            let slot = storage.slots[index]
            switch slot.state {
            case .waiting:
                storage.slots[index].state = .answered
                storage.slots[index].target = nil
                storage.retire(index)
                return slot.target.map(Outcome.answer) ?? .unknown(slot.log)
            case .answered: return slot.again.map(Outcome.again) ?? .twice(slot.serviceID, slot.event, slot.log)
            case .timedOut: return .late(slot.serviceID, slot.event, slot.log)
            }
        }
        switch outcome {
        case .answer(let target):
            target.answered(result, json)
        case .again(let relay):
            relay(result, json)
        case .twice(let service, let event, let log):
            log?.warn(
                service, "completed \(event.name) a second time; the second call is ignored",
                event: .completionTwice, .string("event", event.name))
        case .late(let service, let event, let log):
            log?.warn(
                service, "completed \(event.name) after its deadline; the late answer is ignored",
                event: .completionLate, .string("event", event.name))
        case .unknown(let log):
            // A copy of a completion whose slot was reused since: too late to say whose it was.
            log?.warn(
                "host", "a completion was called long after its event finished; the call is ignored",
                event: .completionStale)
        }
    }

    /// Marks a waiting slot timed out and frees its record; true when it timed out now.
    func expire(_ handle: Handle) -> Bool {
        storage.withLock { storage in
            guard storage.slots[handle.index].generation == handle.generation,
                storage.slots[handle.index].state == .waiting
            else { return false }
            storage.slots[handle.index].state = .timedOut
            storage.slots[handle.index].target = nil
            storage.retire(handle.index)
            return true
        }
    }

    // host_data: the slot index in the low 32 bits, its generation in the high 32.
    private static func hostData(index: Int, generation: UInt32) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: UInt(UInt64(generation) << 32 | UInt64(UInt32(index))))
    }

    private static func decode(_ data: UnsafeMutableRawPointer?) -> (index: Int, generation: UInt32) {
        let bits = UInt64(UInt(bitPattern: data))
        return (Int(UInt32(truncatingIfNeeded: bits)), UInt32(truncatingIfNeeded: bits >> 32))
    }
}
