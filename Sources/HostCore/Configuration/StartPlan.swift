import ServiceVocabulary

/// A service the loader found in the plugin directories.
public struct FoundService: Sendable, Equatable {
    /// The service id.
    public var id: String
    /// The priority its metadata declares.
    public var priority: Int32
    /// The version its metadata declares.
    public var version: String
    /// The services its metadata requires (`SH_CLAIM_REQUIRES`).
    public var requires: [ServiceRequirement]
    /// The services its metadata starts after (`SH_CLAIM_AFTER`).
    public var after: [String]

    /// A found service.
    public init(
        id: String, priority: Int32, version: String = "0.0.0", requires: [ServiceRequirement] = [],
        after: [String] = []
    ) {
        self.id = id
        self.priority = priority
        self.version = version
        self.requires = requires
        self.after = after
    }

    /// The service `metadata` describes.
    public init(_ metadata: ServiceMetadata) {
        self.init(
            id: metadata.id, priority: metadata.priority, version: metadata.version, requires: metadata.requires,
            after: metadata.after)
    }
}

/// Where an edge of the start order comes from.
public enum DependencyOrigin: Sendable, Equatable, CustomStringConvertible {
    /// The configuration's `requires` or `after` of the service.
    case configurationRequires, configurationAfter
    /// The service's own metadata (`SH_CLAIM_REQUIRES`, `SH_CLAIM_AFTER`; the manifest's
    /// `requires` and `after`).
    case pluginRequires, pluginAfter

    /// How messages name it: "requires in the configuration".
    public var description: String {
        switch self {
        case .configurationRequires: "requires in the configuration"
        case .configurationAfter: "after in the configuration"
        case .pluginRequires: "requires declared by its plugin"
        case .pluginAfter: "after declared by its plugin"
        }
    }
}

/// A service left out because something its plugin requires is not there as required, or
/// because a service it requires (by its plugin or the configuration) is left out.
public struct UnmetRequirement: Sendable, Equatable, CustomStringConvertible {
    /// Why the requirement is not met.
    public enum Reason: Sendable, Equatable {
        /// No plugin provides it.
        case missing
        /// Its version is outside the range; the installed version.
        case version(installed: String)
        /// Its version is not a semantic version; the parser's reason.
        case invalidVersion(installed: String, problem: String)
        /// The configuration disables it.
        case disabled
        /// It is not in the configuration and `--only-configured` is set.
        case notConfigured
        /// It is itself left out.
        case notStarted
    }

    /// The service left out, and its version.
    public var service: String, version: String
    /// What it requires, as its plugin writes it (`id` or `id range`).
    public var requirement: String
    /// The id of the service required.
    public var requirementID: String
    public var reason: Reason

    /// `dev.a 1.0.0 requires dev.servicehost.logger >=1.2 <2, but 1.1.0 is installed`.
    public var description: String {
        let head = "\(service) \(version) requires \(requirement)"
        return switch reason {
        case .missing: "\(head), which no plugin provides"
        case .version(let installed): "\(head), but \(installed) is installed"
        case .invalidVersion(let installed, let problem):
            "\(head), but the installed version \(problem) (\(requirementID) \(installed))"
        case .disabled: "\(head), which is disabled in the configuration"
        case .notConfigured: "\(head), which is not in the configuration and --only-configured is set"
        case .notStarted: "\(head), which is not started"
        }
    }
}

/// Which of the found services start, and in what order; termination runs in reverse.
///
/// Edges come from the configuration (`requires`, `after`) and from each service's metadata
/// (`SH_CLAIM_REQUIRES`, `SH_CLAIM_AFTER`), merged. The order, computed by
/// ``compute(found:configuration:onlyConfigured:)``:
/// 1. Configured, enabled services (and every running service one of them requires or starts
///    after, directly or not, configured or not) in a stable topological order: a service
///    starts after every service in its `requires` and `after`. Among the services free to
///    start, the highest priority goes first (the configuration's `priority` overrides the
///    metadata's), then the one loaded first.
/// 2. Then the services the configuration does not mention, in the same kind of order by
///    metadata priority, then load order — the order the host uses without a configuration —
///    unless `onlyConfigured`.
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
    /// Services left out because a requirement is not met, in load order. The host decides
    /// what that means: a failure under `policy: required`, an error logged otherwise.
    public var unmet: [UnmetRequirement] = []
    /// What each service of ``order`` requires, the configuration's and its plugin's merged;
    /// a service without requirements has no entry.
    public var requirements: [String: [String]] = [:]

    /// An empty plan.
    public init() {}

    /// The plan for the services `found` (in load order) under `configuration`.
    ///
    /// An `after` naming a service that is missing, disabled or left out is ignored. A
    /// configuration's `requires` naming one is an error naming both services, as is a cycle
    /// (naming each service in it and where each edge comes from). A plugin's requirement
    /// that is missing, left out or out of its version range leaves the requiring service out
    /// (``unmet``), and every service requiring that one. A pure function: same input, same
    /// plan.
    public static func compute(
        found: [FoundService], configuration: HostConfiguration, onlyConfigured: Bool
    ) throws(StartOrderError) -> StartPlan {
        var graph = Graph()
        // Sized once: every start plans every plugin's services (1000 lazy ones too).
        graph.loadIndex.reserveCapacity(found.count)
        graph.services.reserveCapacity(found.count)
        for service in found {
            // One hash of the id: inserted through the default's accessor when absent.
            var added = false
            Self.insert(&graph.loadIndex[service.id, default: -1], graph.services.count, added: &added)
            if added { graph.services.append(service) }
        }
        let config = configuration.services
        var plan = StartPlan()
        plan.missing = config.values.filter { $0.enabled && graph.loadIndex[$0.id] == nil }.map(\.id).sorted()
        let runs = { (id: String) in graph.loadIndex[id] != nil && isEnabled(config[id], onlyConfigured: onlyConfigured)
        }

        // Every running service's edges, the configuration's first; `running` lists them by
        // position in `graph.services` (their load index).
        var unmet: [String: UnmetRequirement] = [:]
        var running: [(index: Int, configured: Bool)] = []
        running.reserveCapacity(graph.services.count)
        for (index, service) in graph.services.enumerated() {
            let entry = configuration.service(service.id)
            if entry?.enabled == false { plan.disabled.append(service.id) }
            if entry == nil && onlyConfigured { plan.notConfigured.append(service.id) }
            // Every found service is in the graph: whether it runs is its entry's say.
            guard isEnabled(entry, onlyConfigured: onlyConfigured) else { continue }
            running.append((index, entry != nil))
            if let priority = entry?.priority { graph.priority[service.id] = priority }
            guard entry != nil || !service.requires.isEmpty || !service.after.isEmpty else { continue }
            var edges = Edges()
            if let entry {
                try configurationEdges(
                    of: entry, into: &edges, graph: graph, config: config, onlyConfigured: onlyConfigured)
            }
            for requirement in service.requires {
                if let reason = problem(with: requirement, graph: graph, config: config, runs: runs) {
                    unmet[service.id] =
                        unmet[service.id]
                        ?? UnmetRequirement(
                            service: service.id, version: service.version, requirement: requirement.description,
                            requirementID: requirement.id, reason: reason)
                } else {
                    edges.add(requirement.id, .pluginRequires)
                }
            }
            for other in service.after where runs(other) { edges.add(other, .pluginAfter) }
            if !edges.list.isEmpty { graph.dependencies[service.id] = edges.list }
            if !edges.required.isEmpty { plan.requirements[service.id] = edges.required }
        }
        leaveOut(&unmet, graph: graph, plan: &plan)
        let met = { (index: Int) in unmet.isEmpty || unmet[graph.services[index].id] == nil }

        // Configured services are ordered first; so is every running service they depend on.
        var ordered = Set<String>()
        var queue = running.filter { $0.configured && met($0.index) }.map { graph.services[$0.index].id }
        ordered.formUnion(queue)
        while let id = queue.popLast() {
            for edge in graph.dependencies[id] ?? [] where unmet[edge.id] == nil && ordered.insert(edge.id).inserted {
                queue.append(edge.id)
            }
        }
        let first = ordered.isEmpty ? [] : graph.services.indices.filter { ordered.contains(graph.services[$0].id) }
        plan.order = try graph.topologicalOrder(of: first)
        if !onlyConfigured {
            let rest = running.lazy.map(\.index).filter {
                met($0) && (ordered.isEmpty || !ordered.contains(graph.services[$0].id))
            }
            plan.order += try graph.topologicalOrder(of: Array(rest))
        }
        if !unmet.isEmpty { plan.requirements = plan.requirements.filter { unmet[$0.key] == nil } }
        return plan
    }

    /// Whether a found service with configuration `entry` runs: its entry's `enabled`, else
    /// unless `onlyConfigured`.
    private static func isEnabled(_ entry: ServiceConfiguration?, onlyConfigured: Bool) -> Bool {
        entry.map(\.enabled) ?? !onlyConfigured
    }

    /// Sets `slot` (a dictionary's value through its `default:` accessor, -1 when absent) to
    /// `value` when it was absent.
    private static func insert(_ slot: inout Int, _ value: Int, added: inout Bool) {
        if slot < 0 {
            slot = value
            added = true
        }
    }

    /// The edges of the configuration's `requires` (each checked, throwing) then `after`
    /// (ignored when not running).
    private static func configurationEdges(
        of entry: ServiceConfiguration, into edges: inout Edges, graph: Graph, config: [String: ServiceConfiguration],
        onlyConfigured: Bool
    ) throws(StartOrderError) {
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
            edges.add(requirement, .configurationRequires)
        }
        for other in entry.after where graph.loadIndex[other] != nil {
            if isEnabled(config[other], onlyConfigured: onlyConfigured) { edges.add(other, .configurationAfter) }
        }
    }

    /// Why a plugin's `requirement` is not met, or nil when it is.
    private static func problem(
        with requirement: ServiceRequirement, graph: Graph, config: [String: ServiceConfiguration],
        runs: (String) -> Bool
    ) -> UnmetRequirement.Reason? {
        guard let index = graph.loadIndex[requirement.id] else { return .missing }
        if config[requirement.id]?.enabled == false { return .disabled }
        if !runs(requirement.id) { return .notConfigured }
        guard !requirement.range.comparators.isEmpty else { return nil }
        let installed = graph.services[index].version
        do throws(SemanticVersion.ParseError) {
            return requirement.range.contains(try SemanticVersion(parsing: installed))
                ? nil : .version(installed: installed)
        } catch {
            return .invalidVersion(installed: installed, problem: error.description)
        }
    }

    /// Adds to `unmet` every service requiring one in it (until none is added), then lists
    /// them in the plan in load order.
    private static func leaveOut(_ unmet: inout [String: UnmetRequirement], graph: Graph, plan: inout StartPlan) {
        var requiredBy: [String: [String]] = [:]
        for (id, requirements) in plan.requirements {
            for requirement in requirements { requiredBy[requirement, default: []].append(id) }
        }
        var queue = Array(unmet.keys)
        while let id = queue.popLast() {
            for dependent in requiredBy[id] ?? [] where unmet[dependent] == nil {
                let service = graph.services[graph.loadIndex[dependent]!]
                unmet[dependent] = UnmetRequirement(
                    service: dependent, version: service.version, requirement: id, requirementID: id,
                    reason: .notStarted)
                queue.append(dependent)
            }
        }
        plan.unmet = unmet.isEmpty ? [] : graph.services.compactMap { unmet[$0.id] }
    }
}

/// What one service starts after, without repeats, each with where it comes from.
private struct Edges {
    var list: [Edge] = []
    /// The ids of the `requires` edges.
    var required: [String] = []
    private var seen = Set<String>(), seenRequired = Set<String>()

    mutating func add(_ id: String, _ origin: DependencyOrigin) {
        if origin == .configurationRequires || origin == .pluginRequires, seenRequired.insert(id).inserted {
            required.append(id)
        }
        if seen.insert(id).inserted { list.append(Edge(id: id, origin: origin)) }
    }
}

/// One edge: the service starts after `id`, because of `origin`.
struct Edge: Equatable {
    var id: String
    var origin: DependencyOrigin
}

/// The dependency graph of one ``StartPlan/compute(found:configuration:onlyConfigured:)`` call.
private struct Graph {
    /// Found services without duplicates, in load order.
    var services: [FoundService] = []
    var loadIndex: [String: Int] = [:]
    /// The effective priority of configured services (others use their metadata's).
    var priority: [String: Int32] = [:]
    /// What each running service starts after; services without an entry have none.
    var dependencies: [String: [Edge]] = [:]

    /// Kahn's algorithm, taking the highest priority, then the earliest loaded, of the
    /// services whose dependencies have all started. Dependencies outside `group` are
    /// ignored: they started before it or do not start.
    func topologicalOrder(of group: [Int]) throws(StartOrderError) -> [String] {
        // By position in `group`, found only when there are dependencies (most sets declare
        // none): every start plans every plugin's services (1000 lazy ones too), so each id is
        // hashed once rather than at every comparison, or not at all.
        var waitingOn = [Int](repeating: 0, count: group.count)
        var dependents = [[Int]](repeating: [], count: group.count)
        if !dependencies.isEmpty {
            var position: [String: Int] = [:]
            position.reserveCapacity(group.count)
            for (index, service) in group.enumerated() { position[services[service].id] = index }
            for (index, service) in group.enumerated() {
                for edge in dependencies[services[service].id] ?? [] {
                    guard let other = position[edge.id] else { continue }
                    waitingOn[index] += 1
                    dependents[other].append(index)
                }
            }
        }
        // What orders the services free to start: priority (higher first), then load order
        // (a service's index in `services`).
        let keys = group.map { (priority: effectivePriority($0), load: $0) }
        // A binary heap of the services free to start, first the one to start next: the order
        // costs n·log n however long the dependency lists are.
        var ready = Heap { a, b in
            keys[a].priority != keys[b].priority ? keys[a].priority > keys[b].priority : keys[a].load < keys[b].load
        }
        for index in group.indices where waitingOn[index] == 0 { ready.push(index) }
        var order: [String] = []
        order.reserveCapacity(group.count)
        while let index = ready.pop() {
            order.append(services[group[index]].id)
            for dependent in dependents[index] {
                waitingOn[dependent] -= 1
                if waitingOn[dependent] == 0 { ready.push(dependent) }
            }
        }
        guard order.count == group.count else {
            let (services, origins) = cycle(
                among: group.indices.filter { waitingOn[$0] > 0 }.map { self.services[group[$0]].id })
            throw StartOrderError(.cycle(services, origins: origins))
        }
        return order
    }

    /// The priority of the service at `index` in `services`: the configuration's, else its metadata's.
    private func effectivePriority(_ index: Int) -> Int32 {
        (priority.isEmpty ? nil : priority[services[index].id]) ?? services[index].priority
    }

    /// One cycle among `stuck` (services still waiting, in load order), each service followed
    /// by one it waits for, starting and ending with its earliest-loaded member; and where
    /// each of its edges comes from.
    ///
    /// Every stuck service waits for another stuck one, so walking from any of them along
    /// stuck dependencies must come back to a service already seen.
    private func cycle(among stuck: [String]) -> ([String], [DependencyOrigin]) {
        let stuckSet = Set(stuck)
        var path: [Edge] = []
        var seen: [String: Int] = [:]
        var current = stuck[0]
        while seen[current] == nil {
            seen[current] = path.count
            let edge = dependencies[current]!.first { stuckSet.contains($0.id) }!
            path.append(Edge(id: current, origin: edge.origin))
            current = edge.id
        }
        let loop = Array(path[seen[current]!...])
        let start = loop.indices.min { loadIndex[loop[$0].id]! < loadIndex[loop[$1].id]! }!
        let rotated = Array(loop[start...] + loop[..<start])
        return (rotated.map(\.id) + [rotated[0].id], rotated.map(\.origin))
    }
}

/// A binary min-heap of positions under `precedes`.
private struct Heap {
    let precedes: (Int, Int) -> Bool
    private var items: [Int] = []

    init(precedes: @escaping (Int, Int) -> Bool) { self.precedes = precedes }

    mutating func push(_ id: Int) {
        items.append(id)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Int? {
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
