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

/// Each measure's figure in every repetition (`samples[m][rep]`), after one unmeasured call of
/// each. Repetitions alternate between the measures, so a burst of load from another process
/// hits all of them alike, and a baseline is measured again in every repetition: a row's ratio
/// is then the median of the repetitions' ratios (``Row/paired(row:measured:unit:ours:baseline:target:maxRatio:maxValue:)``),
/// which one slow baseline cannot carry.
@MainActor
func interleavedSamples(reps: Int, _ measures: [() throws -> Double]) throws(BenchError) -> [[Double]] {
    // Untyped closures: a literal array of typed-throws closures crashed Swift 6.3's compiler.
    do {
        for measure in measures { _ = try measure() }  // warm-up
        var samples = Array(repeating: [Double](), count: measures.count)
        for _ in 0..<reps {
            for (index, measure) in measures.enumerated() { samples[index].append(try measure()) }
        }
        return samples
    } catch let error as BenchError {
        throw error
    } catch {
        throw BenchError("\(error)")
    }
}

/// The time per unit of one call of `body`, which does `units` units of work.
func timed(units: Int, _ body: () -> Void) -> Double {
    let start = nowNanoseconds()
    body()
    return (nowNanoseconds() - start) / Double(units)
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
