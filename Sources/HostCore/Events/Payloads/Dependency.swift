import ServiceABI

/// `sh_dependency`: dependencyWillStop and dependencyDidStart, the required service.
extension sh_dependency: EventPayload {
    static var currentVersion: UInt32 { SH_DEPENDENCY_VERSION }

    static func fields<Coder: PayloadCoder>(_ d: inout sh_dependency, _ c: inout Coder) throws(WireError) {
        try c.string(&d.id, "dependency id")
        try c.string(&d.service_version, "dependency version")
    }
}

extension EventArena {
    /// The data of dependencyWillStop / dependencyDidStart: service `id` at `version`.
    func dependency(id: String, version: String) -> UnsafePointer<sh_dependency> {
        var d = sh_dependency.empty
        d.id = string(id)
        d.service_version = string(version)
        return box(d)
    }
}
