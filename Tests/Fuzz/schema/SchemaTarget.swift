import ServiceJSON

// Fuzz target `schema`: a settings schema (a manifest's settingsSchema, a C plugin's
// SH_CLAIM_SETTINGS_SCHEMA claims put together) through SettingsSchema's reader, then settings
// through the checker. The input is the schema's text, then optionally a NUL and the settings'
// JSON text. What must hold: a refusal names its reason; an accepted schema accepts its own
// defaults-filled settings again unchanged (filling in is idempotent) and never traps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let cut = bytes.firstIndex(of: 0)
    let schemaText = Array(bytes[..<(cut ?? bytes.count)])
    let schema: SettingsSchema
    do { schema = try SettingsSchema(parsing: schemaText) } catch {
        guard !error.reason.isEmpty else { fatalError("a refusal without a reason") }
        return 0
    }
    // The schema as the manifest writes it (serialized) reads back as the same schema.
    if let value = try? JSONValue(parsing: schemaText), value.serialized.utf8.count <= SettingsSchema.largestText {
        guard let again = try? SettingsSchema(parsing: Array(value.serialized.utf8)), again == schema else {
            fatalError("the serialized schema does not read back")
        }
    }
    let settings: JSONValue?
    if let cut {
        guard let value = try? JSONValue(parsing: Array(bytes[(cut + 1)...])) else { return 0 }
        settings = value
    } else {
        settings = nil
    }
    switch schema.apply(to: settings) {
    case .success(let filled):
        guard case .success(let again) = schema.apply(to: filled), again == filled else {
            fatalError("settings the schema accepted, filled in, are not accepted unchanged")
        }
    case .failure(let violation):
        guard !violation.reason.isEmpty else { fatalError("a violation without a reason") }
    }
    return 0
}
