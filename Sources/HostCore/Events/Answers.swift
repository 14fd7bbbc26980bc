import ServiceABI

// FetchResult and PresentationOptions are declared once in ServiceVocabulary; here is only
// how the host reads a service's raw answer code.

extension FetchResult {
    /// The result a service answered, or nil for a code that is not one.
    public init?(_ code: Int32) { self.init(rawValue: code) }
}

extension PresentationOptions {
    /// The options a service answered; bits this host does not know and negative codes
    /// (errors) count as nothing.
    init(_ code: Int32) { self.init(rawValue: code < 0 ? 0 : UInt32(code) & Self.all.rawValue) }
}

extension PresentationOptions {
    /// The options named in `names` ("banner", "list"…); unknown names count as nothing.
    init(names: [String]) {
        self = names.reduce(into: []) { options, name in
            if let option = Self.named.first(where: { $0.name == name }) { options.insert(option.option) }
        }
    }
}
