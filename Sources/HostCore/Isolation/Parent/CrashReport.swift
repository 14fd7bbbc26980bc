/// One crash of a worker, in words and numbers, for the log, `ctl list` and the failure record.
struct CrashReport: Sendable {
    /// What happened: "was killed by signal 11 (SIGSEGV)"; for a hang, "did not answer
    /// didEnterBackground within 1 s".
    var how: String
    /// When: "while handling didBecomeActive", "while idle", "in servicehost_entry".
    var when: String?
    var signal: Int32?
    var status: Int32?
    /// The event (or "attach") it was handling, if any.
    var event: String?
    /// Whether it missed a deadline (the host killed it) rather than died by itself.
    var hung = false
    /// The sandbox's `memoryMax`, when the kernel killed it there.
    var memoryMax: UInt64?

    /// A worker that died while handling `event` (nil: between events).
    init(_ death: WorkerDeath, during event: String?) {
        how = death.description
        when = event.map { "while handling \($0)" } ?? "while idle"
        signal = death.signal
        status = death.status
        memoryMax = death.memoryMax
        self.event = event
    }

    /// A worker the host killed because `event` missed its `deadline`.
    init(hungIn event: String, deadline: Double) {
        how = "did not answer \(event) within \(Seconds.text(deadline)) s"
        self.event = event
        hung = true
    }

    /// The crash in one phrase, after "its worker": the failure record's reason.
    var reason: String {
        let text = when.map { "\(how) \($0)" } ?? how
        return hung ? text + " and was killed" : text
    }
}
