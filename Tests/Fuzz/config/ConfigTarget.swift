// Fuzz target `config`: a services.json file's bytes through HostConfiguration.parse
// (the JSON parser, then ConfigurationReader).
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        let configuration = try HostConfiguration.parse(bytes: bytes, file: "services.json")
        // Every id the reader accepted is a valid service id.
        for id in configuration.services.keys where ServiceID.problem(with: id) != nil { fatalError("accepted id \(id)") }
    } catch {
        // An error names the file: the one promise every refusal keeps.
        guard "\(error)".contains("services.json") else { fatalError("an error without the file name: \(error)") }
    }
    return 0
}
