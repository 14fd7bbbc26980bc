import Glibc

/// Monotonic time in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)`).
func nowNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

/// The median of `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    precondition(!values.isEmpty, "median of no samples")
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The median time per unit of `body`, which does `units` units of work per call, over `reps`
/// calls after one unmeasured warm-up call.
func medianNanoseconds(reps: Int, units: Int, _ body: () -> Void) -> Double {
    body()
    var samples: [Double] = []
    for _ in 0..<reps {
        let start = nowNanoseconds()
        body()
        samples.append((nowNanoseconds() - start) / Double(units))
    }
    return median(samples)
}

/// The allocation counter of `Sources/bench-fixtures/malloc_count.c`, when scripts/bench
/// preloaded it (`LD_PRELOAD`); it counts every malloc-family call of the process.
enum MallocCounter {
    private typealias Read = @convention(c) () -> UInt64
    // dlsym(RTLD_DEFAULT, …): RTLD_DEFAULT is the null handle.
    private static let read: Read? = dlsym(nil, "bench_malloc_count").map { unsafeBitCast($0, to: Read.self) }

    /// Whether the counter is loaded.
    static var isLoaded: Bool { read != nil }

    /// Allocation calls per unit of `body`, which does `units` units of work; nil without the counter.
    static func callsPerUnit(units: Int, _ body: () -> Void) -> Double? {
        guard let read else { return nil }
        body()  // warm-up: first-time allocations (lazy globals, capacity growth) are not per event
        let before = read()
        body()
        return Double(read() - before) / Double(units)
    }
}
