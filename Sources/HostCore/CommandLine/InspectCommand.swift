import Glibc

/// `host inspect PATH…`: what each plugin file declares, read without running it.
public enum InspectCommand {
    /// The result for one file.
    public typealias Result = Swift.Result<PluginInspector.Inspected, LoadFailure>

    /// Parses `[--json] PATH…` and inspects every path; directories give their `*.so` files.
    public static func run(_ arguments: [String]) throws(UsageError) -> (json: Bool, results: [Result]) {
        var json = false
        var paths: [String] = []
        for argument in arguments {
            if argument == "--json" { json = true } else if argument.hasPrefix("-") {
                throw UsageError("inspect: unknown option \(argument)")
            } else { paths.append(argument) }
        }
        guard !paths.isEmpty else { throw UsageError("inspect: give one or more plugin files or directories") }
        var results: [Result] = []
        for path in paths {
            if isDirectory(path) {
                // Reading metadata runs nothing, so inspect shows insecure files too.
                do {
                    let entries = try PluginScanner.scan(directory: path, allowInsecure: true)
                    results += entries.map { $0.flatMap(PluginInspector.inspect) }
                } catch {
                    results.append(.failure(LoadFailure(path: path, reason: .notRegularFile(kind: "unreadable directory: \(error.reason)"))))
                }
            } else {
                results.append(PluginScanner.check(path: path, allowInsecure: true).flatMap(PluginInspector.inspect))
            }
        }
        return (json, results)
    }

    /// Human-readable text, one block per file.
    public static func text(_ results: [Result]) -> String {
        results.map { result in
            switch result {
            case .failure(let failure):
                return "\(failure.path)\n  not loadable: \(failure.message)\n"
            case .success(let plugin):
                let meta = plugin.metadata
                let sdk = meta.sdkVersion.isEmpty ? "" : ", ServiceKit \(meta.sdkVersion)"
                var out = "\(plugin.path)\n  ABI \(meta.abiVersion) (speaks \(meta.abiMin) to \(meta.abiVersion)),"
                    + " built with \(meta.toolchain)\(sdk)\n"
                for service in meta.services {
                    out += "  service \(service.id)\n"
                    out += "    name:     \(service.name)\n"
                    out += "    version:  \(service.version)\n"
                    out += "    priority: \(service.priority)\n"
                    out += "    events:   \(eventNames(service.events).joined(separator: ", "))\n"
                    for (label, values) in [("urls", service.urls), ("activities", service.activities),
                                            ("subscribes", service.subscriptions)] where !values.isEmpty {
                        out += "    \(label):\(String(repeating: " ", count: max(1, 10 - label.count)))\(values.joined(separator: ", "))\n"
                    }
                }
                return out
            }
        }.joined(separator: "\n")
    }

    /// A JSON array, one object per file.
    public static func json(_ results: [Result]) -> String {
        JSONText.array(results.map { result in
            switch result {
            case .failure(let failure):
                return JSONText.object([
                    "path": JSONText.string(failure.path), "valid": "false", "reason": JSONText.string(failure.message),
                ])
            case .success(let plugin):
                let meta = plugin.metadata
                return JSONText.object([
                    "path": JSONText.string(plugin.path), "valid": "true",
                    "abiVersion": String(meta.abiVersion), "abiMin": String(meta.abiMin),
                    "toolchain": JSONText.string(meta.toolchain), "sdkVersion": JSONText.string(meta.sdkVersion),
                    "services": JSONText.array(meta.services.map { service in
                        JSONText.object([
                            "id": JSONText.string(service.id), "name": JSONText.string(service.name),
                            "version": JSONText.string(service.version), "priority": String(service.priority),
                            "events": JSONText.array(eventNames(service.events).map(JSONText.string)),
                            "urls": JSONText.array(service.urls.map(JSONText.string)),
                            "activities": JSONText.array(service.activities.map(JSONText.string)),
                            "subscribes": JSONText.array(service.subscriptions.map(JSONText.string)),
                        ])
                    }),
                ])
            }
        }) + "\n"
    }

    /// Known event names, then unknown kinds as "event N".
    static func eventNames(_ mask: EventMask) -> [String] {
        mask.knownKinds.map(\.name) + mask.unknownRawKinds.map { "event \($0)" }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }
}
