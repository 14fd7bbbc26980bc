/// One worker's recent crashes: when the next restart may happen, and when the crash
/// limit is reached.
struct CrashHistory {
    /// The first restart waits this long; each crash within the window doubles it.
    static let firstDelay = 0.1
    /// Restarts never wait longer than this.
    static let longestDelay = 10.0

    let limit: CrashLimit
    /// Monotonic times of the crashes within the window.
    private(set) var times: [Double] = []

    init(limit: CrashLimit) { self.limit = limit }

    /// Records a crash at `now`; true when it reaches the limit.
    mutating func record(at now: Double) -> Bool {
        times.removeAll { now - $0 >= limit.window }
        times.append(now)
        return times.count >= limit.count
    }

    /// Crashes within the window.
    var recent: Int { times.count }

    /// How long to wait before the next restart: 0.1 s, doubling per recent crash, at most 10 s.
    var restartDelay: Double {
        let doublings = max(0, times.count - 1)
        return min(Self.longestDelay, Self.firstDelay * Double(1 << min(doublings, 20)))
    }

    /// Forgets every crash (the file changed).
    mutating func reset() { times = [] }
}
