import Foundation
import TestSupport
import Testing

/// Sources/ServiceKit/ServiceKit.docc/Reference.md cannot drift: every declaration in its `swift` blocks becomes a typed
/// reference (`let _: (HostContext) -> (String, JSONValue?) throws(HostError) -> Void =
/// HostContext.post(_:payload:)`) compiled against the built ServiceKit and ServiceKitTesting.
/// A renamed method, a changed label, parameter, return type or thrown error fails to compile.
@Suite(.timeLimit(.minutes(10))) struct ReferenceTests {
    @Test func everyDeclarationInTheReference_compilesAgainstTheSDK() throws {
        let reference = try String(
            contentsOf: Repository.root.appendingPathComponent("Sources/ServiceKit/ServiceKit.docc/Reference.md"),
            encoding: .utf8)
        let checks = try ReferenceChecks(markdown: reference)
        // The reference covers every protocol and the host: a page that lost a section fails here.
        #expect(checks.count >= 70, "only \(checks.count) declarations found")
        for container in [
            "ApplicationService", "SceneService", "URLHandling", "HostContext", "HostContext.Store", "TestHost",
            "ServiceRequest",
            "ReplyCompletion", "RequestError",
        ] {
            #expect(checks.containers.contains(container), "no \(container) in the reference")
        }
        let scratch = try Scratch()
        let source = try scratch.write("Reference.swift", Array(checks.source.utf8))
        // ServiceKitTesting runs on the host's core (HostCore), which imports this C module.
        let cSystemMap = "CSystem.build/module.modulemap"
        let result = try Command.run(
            "/usr/bin/env",
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-I",
                Repository.binDirectory.appendingPathComponent("Modules").path,
                "-I", Repository.abiInclude,
                "-Xcc", "-fmodule-map-file=" + Repository.binDirectory.appendingPathComponent(cSystemMap).path,
                source,
            ])
        #expect(result.status == 0, "the reference does not match the SDK:\n\(result.stderr)\n\(checks.source)")
    }
}

/// The typed references for the declarations of a markdown page's `swift` blocks.
struct ReferenceChecks {
    private(set) var lines = ["import ServiceKit", "import ServiceKitTesting", ""]
    private(set) var count = 0
    private(set) var containers: Set<String> = []

    var source: String { lines.joined(separator: "\n") + "\n" }

    init(markdown: String) throws {
        var inSwift = false
        var container: (name: String, generics: String, isProtocol: Bool)?
        for raw in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("```") {
                inSwift = line == "```swift"
                container = nil
                continue
            }
            guard inSwift, !line.hasPrefix("///") else { continue }
            var declaration = line.hasPrefix("public ") ? String(line.dropFirst("public ".count)) : line
            if let header = Self.header(declaration) {
                container = header
                containers.insert(header.name)
                continue
            }
            guard let current = container, declaration != "}" else { continue }
            if declaration.hasSuffix("{ get }") || declaration.hasSuffix("{ get set }") {
                declaration = String(declaration[..<declaration.firstIndex(of: "{")!]).trimmingCharacters(
                    in: .whitespaces)
            }
            let check = try Self.check(declaration, in: current)
            count += 1
            let typeParameter = current.isProtocol ? "<T: \(current.name)>" : current.generics
            // The generic parameter is passed as a metatype so the function uses it.
            let names = current.isProtocol ? ["T"] : Self.parameterNames(current.generics)
            let arguments = names.enumerated().map { "_ _\($0.offset): \($0.element).Type" }.joined(separator: ", ")
            lines.append("func _check\(count)\(typeParameter)(\(arguments)) { \(check) }  // \(line)")
        }
    }

    /// `<A: P, B>` → ["A", "B"].
    static func parameterNames(_ generics: String) -> [String] {
        generics.dropFirst().dropLast().split(separator: ",").map {
            $0.split(separator: ":")[0].trimmingCharacters(in: .whitespaces)
        }
    }

    /// `protocol P: Q {`, `struct S {`, `final class C<G: P> {` → name, generic clause.
    static func header(_ line: String) -> (name: String, generics: String, isProtocol: Bool)? {
        for keyword in ["protocol ", "struct ", "final class ", "class ", "enum "]
        where line.hasPrefix(keyword) && line.hasSuffix("{") {
            let rest = line.dropFirst(keyword.count)
            let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." })
            var generics = ""
            if rest.dropFirst(name.count).hasPrefix("<") {
                generics = String(rest.dropFirst(name.count).prefix { $0 != ">" }) + ">"
            }
            return (name, generics, keyword == "protocol ")
        }
        return nil
    }

    /// A typed reference to one declaration of `container`.
    static func check(_ declaration: String, in container: (name: String, generics: String, isProtocol: Bool)) throws
        -> String
    {
        let parameterNames = Self.parameterNames(container.generics)
        let type =
            container.isProtocol
            ? "T"
            : container.generics.isEmpty
                ? container.name : "\(container.name)<\(parameterNames.joined(separator: ", "))>"
        if declaration.hasPrefix("var ") {
            let body = declaration.dropFirst("var ".count)
            let colon = body.firstIndex(of: ":")!
            return
                "let _: KeyPath<\(type), \(body[body.index(after: colon)...].trimmingCharacters(in: .whitespaces))> = \\\(type).\(body[..<colon])"
        }
        let isInit = declaration.hasPrefix("init(")
        guard isInit || declaration.hasPrefix("func ") else {
            throw TestFailure("not a declaration the reference test reads: \(declaration)")
        }
        let signature = isInit ? Substring(declaration) : declaration.dropFirst("func ".count)
        let open = signature.firstIndex(of: "(")!
        let name = signature[..<open]
        let (parameters, close) = balanced(signature, from: open)
        var effects = signature[signature.index(after: close)...].trimmingCharacters(in: .whitespaces)
        var result = "Void"
        if let arrow = effects.range(of: "->") {
            result = effects[arrow.upperBound...].trimmingCharacters(in: .whitespaces)
            effects = effects[..<arrow.lowerBound].trimmingCharacters(in: .whitespaces)
        }
        var labels: [String] = []
        var types: [String] = []
        for parameter in splitTopLevel(parameters, at: ",") where !parameter.isEmpty {
            let parts = splitTopLevel(parameter, at: ":")
            let names = parts[0].split(separator: " ")
            labels.append(String(names[0]))
            let typeAndDefault = parts.dropFirst().joined(separator: ":")
            types.append(splitTopLevel(typeAndDefault, at: "=")[0].trimmingCharacters(in: .whitespaces))
        }
        let reference =
            "\(type).\(isInit ? "init" : String(name))"
            + (labels.isEmpty ? "" : "(\(labels.map { $0 + ":" }.joined()))")
        let function =
            "(\(types.joined(separator: ", ")))\(effects.isEmpty ? "" : " " + effects) -> \(isInit ? type : result)"
        return isInit ? "let _: \(function) = \(reference)" : "let _: (\(type)) -> \(function) = \(reference)"
    }

    /// The text between the parenthesis at `open` and its match, and the match's index.
    static func balanced(_ text: Substring, from open: Substring.Index) -> (String, Substring.Index) {
        var depth = 0
        var index = open
        while index < text.endIndex {
            if "([<".contains(text[index]) { depth += 1 }
            if ")]>".contains(text[index]) && !(text[index] == ">" && text[text.index(before: index)] == "-") {
                depth -= 1
            }
            if depth == 0 { return (String(text[text.index(after: open)..<index]), index) }
            index = text.index(after: index)
        }
        return (String(text[text.index(after: open)...]), text.endIndex)
    }

    /// `text` split at `separator` outside brackets.
    static func splitTopLevel(_ text: String, at separator: Character) -> [String] {
        var parts: [String] = []
        var depth = 0
        var current = ""
        for character in text {
            if "([<".contains(character) { depth += 1 }
            if ")]>".contains(character) { depth -= 1 }
            if character == separator && depth == 0 {
                parts.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current.trimmingCharacters(in: .whitespaces))
        return parts
    }
}
