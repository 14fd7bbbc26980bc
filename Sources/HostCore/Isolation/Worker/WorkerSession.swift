import Dispatch
import Glibc
import ServiceABI

/// The worker's side, on its main thread: loads the plugin with the host's own loader,
/// attaches its services with forwarding host tables, and delivers events exactly as the
/// host would have (same structs, same data, same thread discipline: one main thread,
/// never two calls at once).
@MainActor
final class WorkerSession {
    private let channel: FrameChannel
    private let calls: PendingCalls
    private var services: [LoadedServiceInfo] = []
    private var logLevel: Int32 = LogLevel.info.rawValue
    private var answerTimeout = 30.0
    /// Event data a service may still read until it completes (or the host's deadline passed).
    private var pendingData: [UInt32: EventArena] = [:]
    /// One `sh_scene` per scene connection, as in the host.
    private let scenes = WorkerScenes()

    init(channel: FrameChannel, calls: PendingCalls) {
        self.channel = channel
        self.calls = calls
    }

    /// Carries out one request from the host.
    func handle(_ frame: Frame) {
        do throws(WireError) {
            switch frame.type {
            case .open: try open(frame)
            case .attach: try attach(frame)
            case .event: try deliver(frame)
            default: throw .malformed("the host sent a \(frame.type) frame")
            }
        } catch {
            WorkerMain.fail("the host's \(frame.type) request: \(error)")
        }
    }

    private func reply(_ type: FrameType, to frame: Frame, _ fill: (inout WireWriter) -> Void) {
        var w = WireWriter()
        fill(&w)
        do { try channel.send(&w, type, sequence: frame.sequence) } catch {
            WorkerMain.fail("cannot answer the host: \(error)", status: WorkerMain.lostChannelStatus)
        }
    }

    private func open(_ frame: Frame) throws(WireError) {
        var r = frame.reader
        let path = try r.string("path")
        let expected = FileIdentity(
            device: try r.u64("device"), inode: try r.u64("inode"), size: try r.i64("size"),
            modified: try r.i64("modified"), changed: try r.i64("changed"))
        logLevel = Int32(try r.u8("log level"))
        answerTimeout = try r.f64("answer timeout")
        try r.finish("open")
        let refuse = { (reason: LoadFailure.Reason) in
            self.reply(.openFailed, to: frame) { LoadFailureCodec.encode(reason, into: &$0) }
        }
        let inspected: PluginInspector.Inspected
        switch PluginInspector.inspect(path: path) {
        case .failure(let failure): return refuse(failure.reason)
        case .success(let result): inspected = result
        }
        guard inspected.identity == expected else {
            return refuse(.worker("the file changed while it was being loaded"))
        }
        do {
            services = try PluginLoader.open(inspected) { [channel] stage in
                var w = WireWriter()
                w.u8(stage.rawValue)
                try? channel.send(&w, .stage)
            }
        } catch {
            return refuse(error)
        }
        reply(.opened, to: frame) { w in
            w.u32(UInt32(services.count))
            for service in services { w.string(service.metadata.id) }
        }
    }

    private func attach(_ frame: Frame) throws(WireError) {
        var r = frame.reader
        let index = Int(try r.u32("service"))
        try r.finish("attach")
        guard services.indices.contains(index) else { throw .malformed("no service \(index)") }
        let descriptor = services[index].descriptor
        let table = HostAdapter.make(
            WorkerHostFunctions(index: UInt32(index), channel: channel, calls: calls, level: logLevel))
        let result = services[index].attach.map { $0(descriptor, table) } ?? Int32(SH_OK)
        reply(.attached, to: frame) { $0.i32(result) }
    }

    private func deliver(_ frame: Frame) throws(WireError) {
        var r = frame.reader
        let arena = EventArena()
        let decoded = try EventCodec.decode(&r, arena: arena, scenes: scenes)
        guard services.indices.contains(decoded.service) else { throw .malformed("no service \(decoded.service)") }
        var completion: WorkerCompletion?
        if decoded.completion != 0 {
            let id = decoded.completion
            // The data stays readable until the service completes, or the host's deadline passed.
            pendingData[id] = arena
            completion = WorkerCompletion(
                id: id, event: EventKind(rawValue: decoded.kind) ?? .didReceiveRemoteNotification,
                channel: channel
            ) {
                DispatchQueue.main.async { MainActor.assumeIsolated { _ = self.pendingData.removeValue(forKey: id) } }
            }
            DispatchQueue.main.asyncAfter(deadline: .now() + answerTimeout + 1) { [weak self] in
                MainActor.assumeIsolated { _ = self?.pendingData.removeValue(forKey: id) }
            }
        }
        let descriptor = services[decoded.service].descriptor
        var event = sh_event(
            size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: decoded.kind,
            app_state: decoded.appState, seq: decoded.seq, data: decoded.data,
            completion: completion.map { UnsafePointer($0.table) })
        let result = withExtendedLifetime(arena) { services[decoded.service].handleEvent(descriptor, &event) }
        reply(.result, to: frame) { w in
            w.i32(result)
            // configurationForConnecting: the configuration the service filled goes back with it.
            withExtendedLifetime(arena) { EventCodec.writeAnswer(decoded, into: &w) }
        }
    }
}
