import Synchronization

/// `--first-launch auto|always|never`.
public enum FirstLaunchMode: String, Sendable, CaseIterable {
    /// Ask the marks in the state directory. The default.
    case auto
    /// Every launch is the first, of the host and of every service (the seed's `alwaysFirst()`),
    /// for trying out first-launch code. The marks are neither read nor written.
    case always
    /// No launch is the first. The marks are neither read nor written.
    case never
}

/// Whether this is the host's first launch, and each service's (seed 004: "detecting the first
/// launch, the wrong and the right way").
///
/// The logic takes its storage as two injected closures, "was this seen?" and "mark it seen",
/// so it is tested without a disk, and `--first-launch always` is just another pair of closures
/// (``alwaysFirst()``). ``init(mode:stateDirectory:)`` builds the disk-backed pair on the state
/// directory's `launched/` folder.
///
/// Each answer is read once, then kept: it stays the same for the whole process, even after the
/// launch is marked, so `willFinishLaunching` and `didFinishLaunching` agree.
///
/// **When the mark is written.** Not when the answer is read (as the seed's first version does)
/// but when the launch has succeeded: ``hostDidLaunch()`` once the host is active, and
/// ``serviceDidLaunch(_:)`` once the service's `didFinishLaunching` returned `SH_OK` or
/// `SH_FALSE`. A crash, a kill or a failed launch during the first launch then leaves it the
/// first launch next time, so first-launch work (seeding data, onboarding) is retried rather
/// than skipped for ever. The price is that work done before the crash runs again, so
/// first-launch code should be idempotent, which it must be anyway for `--first-launch always`.
public final class FirstLaunch: Sendable {
    /// What a flag is about.
    public enum Subject: Hashable, Sendable {
        /// The host, with this state directory.
        case host
        /// One service, by id.
        case service(String)
    }

    /// Reads a mark: did `subject` launch successfully before?
    public typealias WasSeen = @Sendable (Subject) throws(StorageError) -> Bool
    /// Writes a mark: `subject` launched successfully. It need not be durable before ``Commit``.
    public typealias MarkSeen = @Sendable (Subject) throws(StorageError) -> Void
    /// Makes the marks written so far durable (one directory `fsync` for a batch of them).
    public typealias Commit = @Sendable () throws(StorageError) -> Void

    /// The mode this object answers for.
    public let mode: FirstLaunchMode
    private let wasSeen: WasSeen
    private let markSeen: MarkSeen
    private let commit: Commit
    /// Removes what interrupted writes left (``removeInterruptedMarks()``).
    private let tidy: @Sendable () -> Void
    /// Told how many questions a launch is about to ask (``willAsk(_:)``).
    private let expect: @Sendable (Int) -> Void
    // Each subject's answer, read once, and the subjects marked by this launch. The mutex also
    // keeps two threads from reading or marking the same subject at once.
    private let state = Locked(State())

    private struct State {
        /// The host's answer, apart: every service's launch flags ask it again, and a lookup in
        /// `answers` hashed `.host` once per service at every start.
        var host: Bool?
        var answers: [Subject: Bool] = [:]
        var marked: Set<Subject> = []
    }

    /// First-launch detection over injected storage. In `.always` and `.never` modes the
    /// closures are never called.
    public init(
        mode: FirstLaunchMode = .auto, wasSeen: @escaping WasSeen, markSeen: @escaping MarkSeen,
        commit: @escaping Commit = {},
        tidy: @escaping @Sendable () -> Void = {}, expect: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.mode = mode
        self.wasSeen = wasSeen
        self.markSeen = markSeen
        self.commit = commit
        self.tidy = tidy
        self.expect = expect
    }

    /// Removes the temporary files of marks whose write a crash interrupted. The host calls it
    /// once it is active, off the main thread: it lists the whole marks folder (one file per
    /// service ever launched), which cost a start with thousands of marks ~1 ms before `active`.
    /// Never races a mark being written: both hold the same lock.
    public func removeInterruptedMarks() { state.withLock { _ in tidy() } }

    /// Every launch is the first; nothing is read or written (`--first-launch always`).
    public static func alwaysFirst() -> FirstLaunch {
        FirstLaunch(mode: .always, wasSeen: { _ in false }, markSeen: { _ in })
    }

    /// No launch is the first; nothing is read or written (`--first-launch never`).
    public static func neverFirst() -> FirstLaunch {
        FirstLaunch(mode: .never, wasSeen: { _ in true }, markSeen: { _ in })
    }

    /// Whether this is the host's first launch with its state directory.
    public func isFirstHostLaunch() throws(StorageError) -> Bool { try isFirst(.host) }

    /// Whether this is the first launch of service `id` (its id never launched here before).
    public func isFirstServiceLaunch(_ id: String) throws(StorageError) -> Bool { try isFirst(.service(id)) }

    /// Records that the host launched successfully (it became active). Writes only when
    /// this was its first launch, and only in `.auto` mode.
    public func hostDidLaunch() throws(StorageError) { try markLaunched([.host]) }

    /// Records that service `id` launched successfully (`didFinishLaunching` answered). Writes
    /// only when this was its first launch, and only in `.auto` mode.
    public func serviceDidLaunch(_ id: String) throws(StorageError) { try markLaunched([.service(id)]) }

    /// ``serviceDidLaunch(_:)`` for each of `ids`, made durable together: the first start of
    /// 100 services costs one directory `fsync`, not two per mark.
    public func servicesDidLaunch(_ ids: [String]) throws(StorageError) { try markLaunched(ids.map { .service($0) }) }

    /// Says that a launch is about to ask `count` questions (every service's and the host's): the
    /// table of answers is sized once (growing it re-hashed every subject so far at each
    /// doubling), and the disk-backed storage chooses between a `stat` per question and one
    /// listing of the marks folder by that count.
    public func willAsk(_ count: Int) {
        state.withLock { (state: inout State) in state.answers.reserveCapacity(count) }
        expect(count)
    }

    /// The answer for `subject`: read once, then kept.
    public func isFirst(_ subject: Subject) throws(StorageError) -> Bool {
        try state.withLock { (state: inout State) throws(StorageError) -> Bool in try answer(subject, &state) }
    }

    private func markLaunched(_ subjects: [Subject]) throws(StorageError) {
        guard mode == .auto else { return }
        try state.withLock { (state: inout State) throws(StorageError) in
            var wrote = false
            // A failed mark still commits the ones before it.
            defer { if wrote { try? commit() } }
            for subject in subjects {
                // Read before writing, so the answer of this launch is kept whatever the order of calls.
                guard try answer(subject, &state), !state.marked.contains(subject) else { continue }
                try markSeen(subject)
                wrote = true
                state.marked.insert(subject)
            }
            if wrote {
                wrote = false
                try commit()
            }
        }
    }

    private func answer(_ subject: Subject, _ state: inout State) throws(StorageError) -> Bool {
        let isHost = if case .host = subject { true } else { false }
        if let known = isHost ? state.host : state.answers[subject] { return known }
        let first: Bool
        switch mode {
        case .always: first = true
        case .never: first = false
        case .auto: first = try !wasSeen(subject)
        }
        if isHost { state.host = first } else { state.answers[subject] = first }
        return first
    }
}

extension FirstLaunch {
    /// The disk-backed detection: the marks are empty files in `<state>/launched/`, `host` for
    /// the host and the service id for a service (`host` is never a service id: ids have at
    /// least two labels). The first ``listedAfter`` questions are each one `fstatat`; past them
    /// the folder is listed once and every later answer comes from that listing. In `.always` and
    /// `.never` modes the directory is not touched.
    public convenience init(mode: FirstLaunchMode, stateDirectory: StateDirectory) throws(StorageError) {
        guard mode == .auto else {
            self.init(mode: mode, wasSeen: { _ in mode == .never }, markSeen: { _ in })
            return
        }
        let marks = try stateDirectory.subdirectory("launched")
        // Why both: a `stat` per service was a system call per plugin at every start, but the
        // folder holds the marks of every plugin set that ever used this state directory, so
        // listing it for a host of a few services cost more than it saved (3000 marks: ~1.3 ms
        // before `active`, bench row 3). The listing cannot go stale for a question still to be
        // asked: only this process writes marks while it holds the state directory's lock, and a
        // subject is marked only after its answer was read (and kept).
        // A launch that says it asks few questions gets a `stat` each, whatever their number
        // past `listedAfter`: the listing costs the whole folder, and a folder of many plugin
        // sets' marks (3000) cost a 100-plugin start ~1.3 ms, ~13 µs per plugin. One that asks
        // many lists at once rather than after `listedAfter` stats.
        let listing = Locked<(asked: Int, statsAllowed: Int, names: Set<String>?)>((0, Self.listedAfter, nil))
        self.init(
            mode: mode,
            // Capturing the state directory keeps its lock held as long as the marks are used.
            wasSeen: { [stateDirectory] subject throws(StorageError) in
                _ = stateDirectory
                let name = try Self.markName(subject, in: marks)
                return try listing.withLock {
                    (listing: inout (asked: Int, statsAllowed: Int, names: Set<String>?)) throws(StorageError) -> Bool
                    in
                    if let names = listing.names { return names.contains(name) }
                    listing.asked += 1
                    guard listing.asked > listing.statsAllowed else {
                        return try StorageError.wrapping { () throws(SystemError) in try marks.contains(name) }
                    }
                    let found = Set(try StorageError.wrapping { () throws(SystemError) in try marks.names() })
                    listing.names = found
                    return found.contains(name)
                }
            },
            // An empty file per mark, made durable by one fsync of the directory per batch.
            markSeen: { subject throws(StorageError) in
                let name = try Self.markName(subject, in: marks)
                try StorageError.wrapping { () throws(SystemError) in try marks.createEmpty(name) }
            },
            commit: { () throws(StorageError) in
                try StorageError.wrapping { () throws(SystemError) in try marks.sync() }
            },
            // A leftover temporary is never read as a mark (its name differs), so it can wait.
            tidy: { _ = try? marks.removeTemporaryFiles() },
            expect: { count in
                listing.withLock { (listing: inout (asked: Int, statsAllowed: Int, names: Set<String>?)) in
                    listing.statsAllowed = count <= Self.statsAtMost ? max(Self.listedAfter, listing.asked + count) : 0
                }
            })
    }

    /// How many questions are answered by a `stat` each before the marks folder is listed, when
    /// no launch said how many it asks (a reload, a lazy service's first event).
    static let listedAfter = 32
    /// The most questions a launch may announce and still be answered by a `stat` each: past
    /// it the folder is listed at once. About where a `stat` per question costs a listing of
    /// a folder holding a few plugin sets' marks.
    static let statsAtMost = 256

    private static func markName(_ subject: Subject, in marks: DirectoryHandle) throws(StorageError) -> String {
        switch subject {
        case .host:
            return "host"
        case .service(let id):
            try StateDirectory.checkServiceID(id, in: marks.path)
            return id
        }
    }
}
