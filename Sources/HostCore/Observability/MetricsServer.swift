import Dispatch
import Glibc

/// `--metrics-listen`: serves the host's statistics in the Prometheus text exposition format
/// on `GET /metrics`, one short HTTP/1.1 exchange per connection.
///
/// Connections are read on a background queue; the figures are rendered on the main thread
/// (where the dispatcher writes them), so a scrape never reads them mid-update. While the main
/// thread is stuck in a service, a scrape waits for it (and the scraper's own timeout ends it).
public final class MetricsServer: Sendable {
    /// The address actually bound (the port chosen when 0 was asked for).
    public let address: ListenAddress
    private let listener: FileDescriptor
    private let queue = DispatchQueue(label: "servicehost.metrics")
    // Immutable after init; DispatchSource is thread-safe. Kept alive for the process lifetime.
    nonisolated(unsafe) private let source: DispatchSourceRead
    private let render: @Sendable () -> String?

    /// Why the endpoint could not be opened.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong, naming the address.
        public let description: String
    }

    /// Listens on `address`; each scrape renders `host.metricsText()` on the main thread.
    @MainActor
    public init(address: ListenAddress, host: Host) throws(StartError) {
        do { listener = try TCPListener.listen(address) } catch {
            let hint =
                error.errno == EADDRINUSE ? " (another program uses the port: pick another --metrics-listen)" : ""
            throw StartError(
                description: "--metrics-listen \(address): \(error.operation) failed: \(error.reason)\(hint)")
        }
        self.address = try! ListenAddress(parsing: "\(address.host):\(TCPListener.port(of: listener))")
        render = {
            DispatchQueue.main.sync { MainActor.assumeIsolated { host.metricsText() } }
        }
        source = DispatchSource.makeReadSource(fileDescriptor: listener.rawValue, queue: queue)
        start()
    }

    // Nonisolated: the handler runs on the server's queue, not the main actor it was made on.
    private nonisolated func start() {
        source.setEventHandler { [self] in acceptOne() }
        source.resume()
    }

    private func acceptOne() {
        guard let connection = try? listener.accept(path: "\(address)") else { return }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection.rawValue, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The request head: up to its blank line, at most 8 KiB.
        var head: [UInt8] = []
        while head.count < 8192, !head.ends(with: [13, 10, 13, 10]), !head.ends(with: [10, 10]) {
            guard let bytes = try? connection.read(upTo: 8192 - head.count, path: "\(address)"), !bytes.isEmpty else {
                break
            }
            head += bytes
        }
        let requestLine = String(decoding: head.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self).split(separator: " ")
        let response: String
        if requestLine.count >= 2, requestLine[0] == "GET",
            requestLine[1] == "/metrics" || requestLine[1].hasPrefix("/metrics?")
        {
            let body = render() ?? ""
            response =
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        } else {
            let body = "only GET /metrics is served here\n"
            response =
                "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body
        }
        try? connection.sendAll(Array(response.utf8), path: "\(address)")
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
