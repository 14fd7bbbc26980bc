import Glibc
import ServiceABI

/// A service the loader accepted: its metadata and the plugin's `sh_service`.
public struct LoadedServiceInfo {
    /// The static metadata, which the runtime descriptor was checked against.
    public let metadata: ServiceMetadata
    /// The library it came from.
    public let path: String
    /// The library's identity when it was inspected.
    public let identity: FileIdentity
    /// The plugin-owned descriptor, valid for the process lifetime; passed back as the first
    /// argument of its functions.
    let descriptor: UnsafePointer<sh_service>
    /// Its `attach`, read within the `size` the plugin declared.
    let attach: (@convention(c) (UnsafePointer<sh_service>?, UnsafePointer<sh_host>?) -> Int32)?
    /// Its `handle_event`, read within the `size` the plugin declared.
    let handleEvent: @convention(c) (UnsafePointer<sh_service>?, UnsafePointer<sh_event>?) -> Int32

    init(
        metadata: ServiceMetadata, path: String, identity: FileIdentity, descriptor: UnsafePointer<sh_service>,
        attach: (@convention(c) (UnsafePointer<sh_service>?, UnsafePointer<sh_host>?) -> Int32)?,
        handleEvent: @escaping @convention(c) (UnsafePointer<sh_service>?, UnsafePointer<sh_event>?) -> Int32
    ) {
        self.metadata = metadata
        self.path = path
        self.identity = identity
        self.descriptor = descriptor
        self.attach = attach
        self.handleEvent = handleEvent
    }

    /// A service whose descriptor the host made itself (a worker's proxy): its own full size.
    init(
        metadata: ServiceMetadata, path: String, identity: FileIdentity, hostMade descriptor: UnsafePointer<sh_service>
    ) {
        self.init(
            metadata: metadata, path: path, identity: identity, descriptor: descriptor,
            attach: descriptor.pointee.attach, handleEvent: descriptor.pointee.handle_event!)
    }
}

/// Turns plugin directories into services in two steps: `inspect` reads every file without
/// running it (and refuses duplicate ids), so the host can decide what to start; `open`
/// then `dlopen`s a chosen file, calls `servicehost_entry` and checks the answer against the
/// metadata.
///
/// `open` calls plugin code (`servicehost_entry`, ELF constructors), so it runs on the main thread.
@MainActor
public enum PluginLoader {
    /// What the inspection of some directories found.
    public struct Inspection {
        /// Valid plugin files, in load order (directory order, then file name order).
        public var plugins: [PluginInspector.Inspected] = []
        /// Every file that was refused, in the order met.
        public var failures: [LoadFailure] = []

        /// The services of `plugins`, in load order (file order, then record order).
        public var services: [(service: ServiceMetadata, plugin: PluginInspector.Inspected)] {
            plugins.flatMap { plugin in plugin.metadata.services.map { ($0, plugin) } }
        }
    }

    /// The steps of loading that run plugin code (a worker reports them, so a crash names the step).
    public enum LoadStage: UInt8, Sendable {
        /// `dlopen`: the library's ELF constructors.
        case dlopen = 1
        /// `servicehost_entry`.
        case entry = 2
    }

    /// Inspects every `*.so` of each directory, in order; one bad file never stops the others.
    /// A file declaring a service id an earlier file declares is refused, naming both. With a
    /// `registry`, files it knows unchanged are not read, and it is saved afterwards without
    /// the entries of these directories' files that are gone or changed. Nonisolated: it runs no
    /// plugin code, and its closures would each be checked for the main actor at every call.
    public nonisolated static func inspect(
        directories: [String], allowInsecure: Bool, registry: RegistryCache? = nil
    ) throws(PluginScanner.DirectoryError) -> Inspection {
        var entries: [Result<PluginScanner.Checked, LoadFailure>] = []
        for directory in directories {
            entries += try PluginScanner.scanFiles(directory: directory, allowInsecure: allowInsecure)
        }
        var inspection = Inspection()
        // Sized once: growing it re-hashed every id so far.
        var providers: [String: String] = [:]
        providers.reserveCapacity(entries.count)
        for entry in entries {
            let start = Clock.nanoseconds()
            let inspected = entry.flatMap { PluginInspector.inspect($0, registry: registry) }
            switch inspected {
            case .failure(let failure):
                inspection.failures.append(failure)
            case .success(var plugin):
                plugin.inspectNanoseconds = Clock.nanoseconds() &- start
                if let (id, other) = claim(plugin.metadata.services, for: plugin.path, in: &providers) {
                    inspection.failures.append(
                        LoadFailure(path: plugin.path, reason: .duplicateServiceID(id: id, otherPath: other)))
                    continue
                }
                inspection.plugins.append(plugin)
            }
        }
        registry?.save(scanned: directories)
        return inspection
    }

    /// Records `path` as the provider of each id of `services`; when an earlier file provides
    /// one of them, records none and returns that id and file. One hash of each id (a lookup,
    /// then an insert, was two for every plugin at every start).
    private nonisolated static func claim(
        _ services: [ServiceMetadata], for path: String, in providers: inout [String: String]
    ) -> (id: String, other: String)? {
        for (index, service) in services.enumerated() {
            guard let other = providers.updateValue(path, forKey: service.id), other != path else { continue }
            providers[service.id] = other
            for earlier in services[..<index] where providers[earlier.id] == path { providers[earlier.id] = nil }
            return (service.id, other)
        }
        return nil
    }

    /// Opens one inspected file from its stored copy (``StoredCopy``: the file may change
    /// afterwards, the code loaded never does) and checks its answer against its
    /// metadata. `willRun` is told before each step that runs plugin code.
    public static func open(
        _ inspected: PluginInspector.Inspected, willRun: (LoadStage) -> Void = { _ in }
    ) throws(LoadFailure.Reason) -> [LoadedServiceInfo] {
        let metadata = inspected.metadata
        var copy = try StoredCopy(of: inspected.path, identity: inspected.identity)
        willRun(.dlopen)
        let library: DynamicLibrary
        do { library = try DynamicLibrary(path: copy.loadPath, naming: inspected.path) } catch {
            // A stored copy is opened unseen: missing (a version's first start, or another
            // host's eviction since), or damaged, it is made now and opened once more. A copy
            // that is intact failed as it is.
            guard try copy.makeIfNeeded() else { throw error }
            willRun(.dlopen)
            library = try DynamicLibrary(path: copy.loadPath, naming: inspected.path)
        }
        let entry = unsafeBitCast(try library.symbol(SH_ENTRY_SYMBOL), to: sh_entry_fn.self)

        var offer = sh_host_offer(
            size: UInt32(MemoryLayout<sh_host_offer>.size), version: SH_HOST_OFFER_VERSION,
            abi_min: PluginInspector.hostABI.lowerBound, abi_max: PluginInspector.hostABI.upperBound,
            host_version: HostVersion.cString)
        willRun(.entry)
        guard let answer = withUnsafePointer(to: &offer, { entry($0) }) else {
            throw .entry("returned NULL: the plugin failed to initialise (see its log lines)")
        }
        let plugin: sh_plugin
        do { plugin = try ABIStruct.read(answer, v1Size: SH_PLUGIN_SIZE_V1) } catch {
            throw .entry("its sh_plugin is \(error.declared) bytes, smaller than version 1's \(error.v1Size)")
        }
        let declined = plugin.error.map { ": " + String(cString: $0) } ?? ""
        // The answer must come from the plugin's own declared range (else the plugin is wrong,
        // not the host) and from the offer.
        let declared = metadata.abiMin...max(metadata.abiMin, metadata.abiVersion)
        guard declared.contains(plugin.abi_version) else {
            throw .entry(
                "answered ABI \(plugin.abi_version), outside the \(declared.lowerBound)–\(declared.upperBound)"
                    + " its metadata declares (a plugin bug: answer a version from both the offer and that range)")
        }
        guard PluginInspector.hostABI.contains(plugin.abi_version) else {
            throw .abiMismatch(
                pluginMin: plugin.abi_version, pluginMax: plugin.abi_version,
                hostMin: PluginInspector.hostABI.lowerBound, hostMax: PluginInspector.hostABI.upperBound)
        }
        guard plugin.service_count > 0, let list = plugin.services else {
            throw .entry("exports no services\(declined)")
        }

        // Matched by where the id points: a descriptor whose id is the metadata record's own
        // (the SDK's C macros point it there) is that record's service, known without reading
        // the id, whose page nothing else touches before the first event (a page fault per
        // plugin, ~1.5 µs of a start's ~37). The copy loaded has the identity the metadata was
        // read from, so the record at that address is the one decoded. Any other id is matched
        // by scanning the file's few declared services with `strcmp` (metadata ids are unique):
        // a dictionary, a set and a String per file were a cost of every start.
        let declaredServices = metadata.services
        let idAddresses = IDAddresses(inspected, loadedAt: library.loadAddress)
        var accepted: [LoadedServiceInfo] = []
        accepted.reserveCapacity(declaredServices.count)
        for index in 0..<Int(plugin.service_count) {
            guard let descriptor = list[index] else { throw .entry("service \(index) is NULL") }
            let service: sh_service
            do { service = try ABIStruct.read(descriptor, v1Size: SH_SERVICE_SIZE_V1) } catch {
                throw .entry(
                    "service \(index)'s sh_service is \(error.declared) bytes, smaller than version 1's \(error.v1Size)"
                )
            }
            guard let idPointer = service.id else { throw .entry("service \(index) has no id") }
            guard
                let meta = idAddresses.service(at: idPointer, in: declaredServices)
                    ?? Self.declaredService(named: idPointer, in: declaredServices)
            else {
                throw .entry("exports service \(String(cString: idPointer)), which its metadata does not declare")
            }
            let id = meta.id
            guard let handleEvent = service.handle_event else { throw .entry("service \(id) has no handle_event") }
            guard !accepted.contains(where: { $0.metadata.id == id }) else {
                throw .entry("exports service \(id) twice")
            }
            accepted.append(
                LoadedServiceInfo(
                    metadata: meta, path: inspected.path, identity: inspected.identity,
                    descriptor: descriptor, attach: service.attach, handleEvent: handleEvent))
        }
        // Each accepted id is a distinct declared one: fewer accepted than declared means one is missing.
        if accepted.count < declaredServices.count,
            let missing = declaredServices.first(where: { service in
                !accepted.contains { $0.metadata.id == service.id }
            })
        {
            throw .entry("its metadata declares service \(missing.id), which it does not export")
        }
        return accepted
    }

    /// Where the ids of a loaded file's metadata records lie in memory.
    struct IDAddresses {
        /// The load address plus the section's (0: the section is not loaded, or unknown).
        private let section: UInt

        init(_ inspected: PluginInspector.Inspected, loadedAt base: UInt) {
            let address = UInt(exactly: inspected.metadataAddress) ?? 0
            section = base == 0 || address == 0 ? 0 : base &+ address
        }

        /// The service of `services` (the file's metadata) whose record's id field is at `id`.
        func service(at id: UnsafePointer<CChar>, in services: [ServiceMetadata]) -> ServiceMetadata? {
            guard section != 0 else { return nil }
            let address = UInt(bitPattern: id)
            for service in services where service.idOffset >= 0 && section &+ UInt(service.idOffset) == address {
                return service
            }
            return nil
        }
    }

    /// The service of `services` whose id is the C string `id`, compared in place.
    private nonisolated static func declaredService(named id: UnsafePointer<CChar>, in services: [ServiceMetadata])
        -> ServiceMetadata?
    {
        for service in services where service.id.withCString({ strcmp($0, id) }) == 0 { return service }
        return nil
    }
}
