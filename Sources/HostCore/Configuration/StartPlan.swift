/// A service the loader found in the plugin directories.
public struct FoundService: Sendable, Equatable {
    /// The service id.
    public var id: String
    /// The priority its metadata declares.
    public var priority: Int32

    /// A found service.
    public init(id: String, priority: Int32) {
        self.id = id
        self.priority = priority
    }
}

/// Which of the found services start, and in what order; termination runs in reverse.
///
/// The order, computed by ``compute(found:configuration:onlyConfigured:)``:
/// 1. Configured, enabled services (and any installed service one of them requires or starts
///    after, configured or not) in a stable topological order: a service starts after every
///    service in its `requires` and `after`. Among the services free to start, the highest
///    priority goes first (the configuration's `priority` overrides the metadata's), then the
///    one loaded first.
/// 2. Then the services the configuration does not mention, by metadata priority, then load
///    order — the order the host uses without a configuration — unless `onlyConfigured`.
public struct StartPlan: Sendable, Equatable {
    /// The ids to start, in start order.
    public var order: [String] = []
    /// Installed services the configuration disables, in load order.
    public var disabled: [String] = []
    /// Installed services left out because `onlyConfigured` is set and the configuration does
    /// not mention them, in load order.
    public var notConfigured: [String] = []
    /// Enabled services the configuration lists but no plugin provides, by id. The host decides
    /// what that means: a failure under `policy: required`, a warning otherwise.
    public var missing: [String] = []

    /// An empty plan.
    public init() {}

    /// The plan for the services `found` (in load order) under `configuration`.
    ///
    /// An `after` naming a service that is missing, disabled or left out is ignored. A
    /// `requires` naming one is an error naming both services, as is a cycle (naming each
    /// service in it). A pure function: same input, same plan.
    public static func compute(
        found: [FoundService], configuration: HostConfiguration, onlyConfigured: Bool
    ) throws(StartOrderError) -> StartPlan {
        var graph = Graph()
        for service in found where graph.loadIndex[service.id] == nil {
            graph.loadIndex[service.id] = graph.services.count
            graph.services.append(service)
        }
        let config = configuration.services
        var plan = StartPlan()
        plan.missing = config.values.filter { $0.enabled && graph.loadIndex[$0.id] == nil }.map(\.id).sorted()

        // Configured services are ordered; so is every installed service one of them depends on.
        var ordered = Set<String>()
        for service in graph.services {
            guard let entry = config[service.id] else { continue }
            guard entry.enabled else {
                plan.disabled.append(service.id)
                continue
            }
            graph.priority[service.id] = entry.priority ?? service.priority
            let dependencies = try dependencies(of: entry, graph: graph, config: config, onlyConfigured: onlyConfigured)
            graph.dependencies[service.id] = dependencies
            ordered.insert(service.id)
            ordered.formUnion(dependencies)
        }
        plan.order = try graph.topologicalOrder(of: graph.services.filter { ordered.contains($0.id) })

        let rest = graph.services.filter { !ordered.contains($0.id) && config[$0.id] == nil }
        if onlyConfigured {
            plan.notConfigured = rest.map(\.id)
        } else {
            plan.order += rest.enumerated().sorted { a, b in
                a.element.priority != b.element.priority ? a.element.priority > b.element.priority : a.offset < b.offset
            }.map(\.element.id)
        }
        return plan
    }

    /// The installed, running services `entry` must start after: its `requires` (each checked)
    /// then its `after` (ignored when not running), without repeats.
    private static func dependencies(
        of entry: ServiceConfiguration, graph: Graph, config: [String: ServiceConfiguration], onlyConfigured: Bool
    ) throws(StartOrderError) -> [String] {
        var result: [String] = []
        var listed = Set<String>()
        for requirement in entry.requires {
            let requirementEntry = config[requirement]
            if requirementEntry?.enabled == false {
                throw StartOrderError(.requirementDisabled(service: entry.id, requirement: requirement))
            }
            guard graph.loadIndex[requirement] != nil else {
                throw StartOrderError(.requirementMissing(service: entry.id, requirement: requirement))
            }
            if requirementEntry == nil && onlyConfigured {
                throw StartOrderError(.requirementNotConfigured(service: entry.id, requirement: requirement))
            }
            if listed.insert(requirement).inserted { result.append(requirement) }
        }
        for other in entry.after where !listed.contains(other) && graph.loadIndex[other] != nil {
            let running = config[other].map(\.enabled) ?? !onlyConfigured
            if running && listed.insert(other).inserted { result.append(other) }
        }
        return result
    }
}

/// The dependency graph of one ``StartPlan/compute(found:configuration:onlyConfigured:)`` call.
private struct Graph {
    /// Found services without duplicates, in load order.
    var services: [FoundService] = []
    var loadIndex: [String: Int] = [:]
    /// The effective priority of configured services (others use their metadata's).
    var priority: [String: Int32] = [:]
    /// What each configured service starts after; services without an entry have none.
    var dependencies: [String: [String]] = [:]

    /// Kahn's algorithm, taking the highest priority, then the earliest loaded, of the
    /// services whose dependencies have all started.
    func topologicalOrder(of group: [FoundService]) throws(StartOrderError) -> [String] {
        var waitingOn: [String: Int] = [:]
        var dependents: [String: [String]] = [:]
        for service in group {
            let dependencies = self.dependencies[service.id] ?? []
            waitingOn[service.id] = dependencies.count
            for dependency in dependencies { dependents[dependency, default: []].append(service.id) }
        }
        // A binary heap of the services free to start, first the one to start next: the order
        // costs n·log n however long the dependency lists are.
        var ready = Heap(precedes: precedes)
        for service in group where waitingOn[service.id] == 0 { ready.push(service.id) }
        var order: [String] = []
        while let id = ready.pop() {
            order.append(id)
            for dependent in dependents[id] ?? [] {
                waitingOn[dependent]! -= 1
                if waitingOn[dependent] == 0 { ready.push(dependent) }
            }
        }
        guard order.count == group.count else {
            throw StartOrderError(.cycle(cycle(among: group.filter { waitingOn[$0.id]! > 0 }.map(\.id))))
        }
        return order
    }

    /// Whether `a` starts before `b` when both are free to start.
    private func precedes(_ a: String, _ b: String) -> Bool {
        let (pa, pb) = (effectivePriority(a), effectivePriority(b))
        return pa != pb ? pa > pb : loadIndex[a]! < loadIndex[b]!
    }

    private func effectivePriority(_ id: String) -> Int32 {
        priority[id] ?? services[loadIndex[id]!].priority
    }

    /// One cycle among `stuck` (services still waiting, in load order), each service followed
    /// by one it waits for, starting and ending with its earliest-loaded member.
    ///
    /// Every stuck service waits for another stuck one, so walking from any of them along
    /// stuck dependencies must come back to a service already seen.
    private func cycle(among stuck: [String]) -> [String] {
        let stuckSet = Set(stuck)
        var path: [String] = []
        var seen: [String: Int] = [:]
        var current = stuck[0]
        while seen[current] == nil {
            seen[current] = path.count
            path.append(current)
            current = dependencies[current]!.first { stuckSet.contains($0) }!
        }
        let loop = Array(path[seen[current]!...])
        let start = loop.indices.min { loadIndex[loop[$0]]! < loadIndex[loop[$1]]! }!
        let rotated = Array(loop[start...] + loop[..<start])
        return rotated + [rotated[0]]
    }
}

/// A binary min-heap of ids under `precedes`.
private struct Heap {
    let precedes: (String, String) -> Bool
    private var items: [String] = []

    init(precedes: @escaping (String, String) -> Bool) { self.precedes = precedes }

    mutating func push(_ id: String) {
        items.append(id)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> String? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        guard !items.isEmpty else { return first }
        items[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var best = parent
            if left < items.count && precedes(items[left], items[best]) { best = left }
            if right < items.count && precedes(items[right], items[best]) { best = right }
            guard best != parent else { return first }
            items.swapAt(parent, best)
            parent = best
        }
    }
}
