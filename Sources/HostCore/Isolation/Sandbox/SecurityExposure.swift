import ServiceJSON

/// What a service may do when it runs, setting by setting, and a total from 0 to 10, as
/// `systemd-analyze security` rates a unit (issue 43): `host check` and `host inspect --security`
/// show it before the service runs, so an unsandboxed third-party plugin is seen first.
///
/// Each setting has an exposure from 0 (closed) to 1 (open) and a weight; the total is the
/// weighted mean times 10. A service that runs in the host is 10: it has the host's memory, user
/// and rights, and no setting applies. The weights: where it runs 3, its user 2, system calls
/// and file writes 1.5 each, network 1, no new privileges, memory, tasks and CPU 0.5 each.
public struct SecurityExposure: Sendable, Equatable {
    /// One setting: its key, what it is for this service, and how much it leaves open.
    public struct Setting: Sendable, Equatable {
        /// The configuration key (`isolation`, `user`, `syscalls`, …).
        public var name: String
        /// Its value for this service, in words (`dynamic user`, `default`, `not limited`).
        public var value: String
        /// 0 (closed) to 1 (open).
        public var exposure: Double
        /// Its share of the total.
        public var weight: Double
    }

    /// The service rated.
    public var service: String
    /// Every setting, in the order above.
    public var settings: [Setting]

    /// 0 (nothing open) to 10 (everything), one decimal.
    public var score: Double {
        let total = settings.reduce(0) { $0 + $1.weight }
        let open = settings.reduce(0) { $0 + $1.exposure * $1.weight }
        return total > 0 ? (open / total * 100).rounded() / 10 : 10
    }

    /// The score in systemd's words: OK below 2, MEDIUM below 5, EXPOSED below 8, else UNSAFE.
    public var rating: String {
        switch score {
        case ..<2: "OK"
        case ..<5: "MEDIUM"
        case ..<8: "EXPOSED"
        default: "UNSAFE"
        }
    }

    /// Service `service`'s exposure: `sandbox` nil and `isolated` false for one that runs in the
    /// host; `hostUser` the host's uid (root runs workers as root unless a user is named).
    public init(service: String, isolated: Bool, sandbox: Sandbox?, hostUser: UInt32) {
        self.service = service
        let inHost = !isolated
        func setting(_ name: String, _ value: String, _ exposure: Double, _ weight: Double) -> Setting {
            Setting(name: name, value: inHost ? "the host's" : value, exposure: inHost ? 1 : exposure, weight: weight)
        }
        let box = sandbox ?? Sandbox()
        let sandboxed = sandbox != nil
        var user: (String, Double) = (hostUser == 0 ? "root (the host's)" : "the host's", hostUser == 0 ? 1 : 0.8)
        if box.dynamicUser == true {
            user = ("dynamic user", 0)
        } else if let name = box.user {
            user = (name + (box.group.map { ":" + $0 } ?? ""), name == "0" || name == "root" ? 1 : 0.2)
        } else if let group = box.group {
            user = ("the host's, group " + group, hostUser == 0 ? 0.9 : 0.7)
        }
        let syscalls: (String, Double) =
            switch sandboxed ? box.profile : .unrestricted {
            case .unrestricted: ("unrestricted", 1)
            case .default: ("default", 0.3)
            case .strict: ("strict", 0.1)
            }
        var syscallText = syscalls.0
        if let allow = box.allowSyscalls, !allow.isEmpty { syscallText += ", allows " + allow.joined(separator: ",") }
        if let deny = box.denySyscalls, !deny.isEmpty { syscallText += ", denies " + deny.joined(separator: ",") }
        // Allowing back a denied call opens some of what the profile closed.
        let syscallExposure = min(1, syscalls.1 + (box.allowSyscalls?.isEmpty == false ? 0.2 : 0))
        let writes: (String, Double) =
            box.writablePaths.map { $0.isEmpty ? ("none", 0) : ($0.joined(separator: ","), 0.1) }
            ?? ("everywhere its user may", 1)
        let network: (String, Double) =
            box.network == false
            ? ("none (lo only)", 0) : sandboxed && box.profile == .strict ? ("AF_UNIX sockets only", 0.2) : ("any", 1)
        func limit(_ value: String?) -> (String, Double) { value.map { ($0, 0) } ?? ("not limited", 1) }
        let memory = limit(box.memoryMax.map { Sandbox.text(bytes: $0) })
        let tasks = limit(box.tasksMax.map(String.init))
        let cpu = limit(box.cpuQuota.map { "\(Int($0))%" })
        settings = [
            Setting(
                name: "isolation", value: inHost ? "in the host process" : "a worker process",
                exposure: inHost ? 1 : 0, weight: 3),
            setting("user", user.0, user.1, 2),
            setting("syscalls", syscallText, syscallExposure, 1.5),
            setting("writablePaths", writes.0, writes.1, 1.5),
            setting("network", network.0, network.1, 1),
            setting("noNewPrivileges", sandboxed ? "yes" : "no", sandboxed ? 0 : 1, 0.5),
            setting("memoryMax", memory.0, memory.1, 0.5),
            setting("tasksMax", tasks.0, tasks.1, 0.5),
            setting("cpuQuota", cpu.0, cpu.1, 0.5),
        ]
    }

    /// The table `host inspect --security` and `host check` print: a line per setting with its
    /// exposure, then the total.
    public var text: String {
        let width = settings.map(\.name.count).max() ?? 0
        var lines = ["security \(service): \(String(score)) \(rating)"]
        for setting in settings {
            let exposure = setting.exposure == 0 ? "  -" : String(format3(setting.exposure * setting.weight))
            lines.append(
                "  " + setting.name + String(repeating: " ", count: width - setting.name.count) + "  " + exposure
                    + "  " + setting.value)
        }
        return lines.joined(separator: "\n")
    }

    private func format3(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        let text = String(tenths / 10)
        return String(repeating: " ", count: max(0, 3 - text.count)) + text
    }

    /// `{"service", "score", "rating", "settings": [{"name", "value", "exposure", "weight"}]}`.
    public var json: JSONValue {
        .object([
            "service": .string(service), "score": .number(score), "rating": .string(rating),
            "settings": .array(
                settings.map {
                    .object([
                        "name": .string($0.name), "value": .string($0.value), "exposure": .number($0.exposure),
                        "weight": .number($0.weight),
                    ])
                }),
        ])
    }
}
