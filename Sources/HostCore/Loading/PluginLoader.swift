import ServiceABI

/// A service the loader accepted: its metadata and the plugin's `sh_service`.
public struct LoadedServiceInfo {
    /// The static metadata, which the runtime descriptor was checked against.
    public let metadata: ServiceMetadata
    /// The library it came from.
    public let path: String
    /// The plugin-owned descriptor, valid for the process lifetime.
    let descriptor: UnsafePointer<sh_service>
}

/// Turns plugin directories into services: scan, inspect without running code, then
/// `dlopen`, call `servicehost_entry` and check the answer against the metadata.
///
/// Calls plugin code (`servicehost_entry`, ELF constructors), so it runs on the main thread.
@MainActor
public struct PluginLoader {
    /// What one `load` call produced.
    public struct Report {
        /// Accepted services, in load order (file name order, then record order).
        public var services: [LoadedServiceInfo] = []
        /// Every file that was refused, in the order met.
        public var failures: [LoadFailure] = []
    }

    /// Service ids already provided, and by which file (duplicates are refused).
    private var providers: [String: String] = [:]
    /// Takes a file instead of this process (issue 5): its services running in a worker
    /// process, or none (safe mode); nil loads the file here.
    var placement: ((PluginInspector.Inspected) throws(LoadFailure.Reason) -> [LoadedServiceInfo]?)?
    /// Told before plugin code runs (a worker reports it, so a crash names the step).
    var willRun: ((LoadStage) -> Void)?

    /// The steps of loading that run plugin code.
    enum LoadStage: UInt8 {
        /// `dlopen`: the library's ELF constructors.
        case dlopen = 1
        /// `servicehost_entry`.
        case entry = 2
    }

    /// A loader that knows no services yet.
    public init() {}

    /// Loads every `*.so` of each directory, in order; one bad file never stops the others.
    public mutating func load(directories: [String], allowInsecure: Bool) throws(PluginScanner.DirectoryError) -> Report {
        var entries: [PluginScanner.Entry] = []
        for directory in directories {
            entries += try PluginScanner.scan(directory: directory, allowInsecure: allowInsecure)
        }
        var report = Report()
        for entry in entries {
            switch entry.flatMap(PluginInspector.inspect) {
            case .failure(let failure):
                report.failures.append(failure)
            case .success(let inspected):
                do throws(LoadFailure.Reason) {
                    report.services += try open(inspected)
                } catch {
                    report.failures.append(LoadFailure(path: inspected.path, reason: error))
                }
            }
        }
        return report
    }

    /// Opens one inspected file and checks its answer.
    mutating func open(_ inspected: PluginInspector.Inspected) throws(LoadFailure.Reason) -> [LoadedServiceInfo] {
        let metadata = inspected.metadata
        for service in metadata.services {
            if let other = providers[service.id] { throw .duplicateServiceID(id: service.id, otherPath: other) }
        }
        if let elsewhere = try placement?(inspected) {
            for service in elsewhere { providers[service.metadata.id] = inspected.path }
            return elsewhere
        }
        willRun?(.dlopen)
        let library = try DynamicLibrary(path: inspected.path)
        let entry = unsafeBitCast(try library.symbol(SH_ENTRY_SYMBOL), to: sh_entry_fn.self)

        var offer = sh_host_offer(
            size: UInt32(MemoryLayout<sh_host_offer>.size), version: SH_HOST_OFFER_VERSION,
            abi_min: PluginInspector.hostABI.lowerBound, abi_max: PluginInspector.hostABI.upperBound,
            host_version: HostVersion.cString)
        willRun?(.entry)
        guard let answer = withUnsafePointer(to: &offer, { entry($0) }) else {
            throw .entry("returned NULL: the plugin failed to initialise (see its log lines)")
        }
        guard answer.pointee.size >= UInt32(MemoryLayout<sh_plugin>.size) else {
            throw .entry("its sh_plugin is \(answer.pointee.size) bytes, smaller than version 1's \(MemoryLayout<sh_plugin>.size)")
        }
        let plugin = answer.pointee
        let declined = plugin.error.map { ": " + String(cString: $0) } ?? ""
        guard PluginInspector.hostABI.contains(plugin.abi_version) else {
            throw .abiMismatch(pluginMin: plugin.abi_version, pluginMax: plugin.abi_version,
                               hostMin: PluginInspector.hostABI.lowerBound, hostMax: PluginInspector.hostABI.upperBound)
        }
        guard plugin.service_count > 0, let list = plugin.services else {
            throw .entry("exports no services\(declined)")
        }

        var accepted: [LoadedServiceInfo] = []
        for index in 0..<Int(plugin.service_count) {
            guard let descriptor = list[index] else { throw .entry("service \(index) is NULL") }
            let service = descriptor.pointee
            guard service.size >= UInt32(MemoryLayout<sh_service>.size) else {
                throw .entry("service \(index)'s sh_service is \(service.size) bytes, smaller than version 1's")
            }
            guard let idPointer = service.id else { throw .entry("service \(index) has no id") }
            let id = String(cString: idPointer)
            guard let meta = metadata.services.first(where: { $0.id == id }) else {
                throw .entry("exports service \(id), which its metadata does not declare")
            }
            guard service.handle_event != nil else { throw .entry("service \(id) has no handle_event") }
            guard !accepted.contains(where: { $0.metadata.id == id }) else { throw .entry("exports service \(id) twice") }
            accepted.append(LoadedServiceInfo(metadata: meta, path: inspected.path, descriptor: descriptor))
        }
        if let missing = metadata.services.first(where: { meta in !accepted.contains { $0.metadata.id == meta.id } }) {
            throw .entry("its metadata declares service \(missing.id), which it does not export")
        }
        for service in accepted { providers[service.metadata.id] = inspected.path }
        return accepted
    }
}
