// Fuzz target `netlink`: one read of a NETLINK_ROUTE socket (what the network source reads)
// through RouteNetlink's parser, and the messages it accepts into the reachability state.
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        let messages = try RouteNetlink.parse(bytes[...])
        var state = ReachabilityState()
        for message in messages { state.apply(message) }
        let summary = state.summary
        // Online names an interface or a multipath route; offline names none.
        guard summary.online || summary.interface == nil else { fatalError("offline through \(summary.interface!)") }
    } catch {
        guard !error.reason.isEmpty else { fatalError("an error without a reason") }
    }
    return 0
}
