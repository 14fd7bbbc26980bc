/// The library this process loaded last from each plugin file, by path: its version and what
/// its entry answered (``ServiceSet/openPlugin(_:cost:)``). A service of that version started
/// again (a reload that changed only its settings, disabled then enabled, `service start` of a
/// sibling, a lazy service's activation) runs from it: a new load would map another copy for
/// good (code cannot be unloaded), and 40 settings edits were 40 copies. A process-isolated
/// file's entry is its worker's services (their proxies): started again, they stay in the
/// worker running them, where each edit started a new worker and left the one before running.
struct LoadedLibraries {
    /// One file's library.
    struct Entry {
        let path: String
        let identity: FileIdentity
        let services: [LoadedServiceInfo]
    }

    /// Recorded since the last lookup, in order: a start appends one per file and looks
    /// nothing up, so it hashes no path (a dictionary insert per plugin at every start).
    private var recent: [Entry] = []
    private var byPath: [String: Entry] = [:]

    /// Records `entry` as its file's library (replacing the one before).
    mutating func record(_ entry: Entry) { recent.append(entry) }

    /// Forgets `path`'s library when it is the version `identity` (its worker was retired).
    mutating func forget(_ path: String, identity: FileIdentity) {
        if find(path)?.identity == identity { byPath[path] = nil }
    }

    /// The library loaded last from `path`, if any.
    mutating func find(_ path: String) -> Entry? {
        if !recent.isEmpty {
            for entry in recent { byPath[entry.path] = entry }
            recent.removeAll()
        }
        return byPath.isEmpty ? nil : byPath[path]
    }
}
