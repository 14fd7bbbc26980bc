import Glibc

/// `host new-service NAME [--swift|--c] [--id ID] [--dir DIR] [--sdk DIR]`: writes a plugin
/// package that builds and loads the first time, pointing at the SDK this `host` came from.
public enum NewServiceCommand {
    /// The language of the scaffold.
    public enum Language: Sendable { case swift, c }

    /// What `host new-service` was asked.
    public struct Options: Sendable {
        var language = Language.swift
        var id: String?
        var directory: String?
        var sdk: String?
    }

    /// The options of `host new-service`, in the order its help lists them.
    public static let table = OptionTable<Options>(
        "new-service",
        [
            .flag("--swift", "a Swift package: ServiceKit, the build plugin, a TestHost test (default)") {
                $0.language = .swift
            },
            .flag("--c", "one C file and a build script, against servicehost.h alone") { $0.language = .c },
            .value("--id", "ID", "the service id (default: com.example.NAME, lowercased)") { $0.id = $1 },
            .value("--dir", "DIR", "where to write it (default: ./NAME); must not exist or be empty") {
                $0.directory = $1
            },
            .value(
                "--sdk", "DIR",
                "the ServiceHost checkout or install to build against (default: the\none this host came from)"
            ) {
                $0.sdk = $1
            },
        ])

    /// The text of `host new-service --help`.
    public static var help: String {
        """
        host new-service NAME [--swift|--c] [--id ID] [--dir DIR] [--sdk DIR]
          write a plugin that builds and loads the first time; its README has the
          three commands to build, install and run it

        \(table.help)

        EXAMPLE
          host new-service Greeter && cd Greeter && swift build -c release
        """
    }

    /// A file to write, relative to the scaffold's folder.
    public struct File: Sendable, Equatable {
        /// The path under the scaffold's folder.
        public let path: String
        /// The text.
        public let text: String
        /// Whether it is a script to make executable.
        public let executable: Bool
    }

    /// What to write where.
    public struct Plan: Sendable {
        /// The scaffold's folder.
        public let directory: String
        /// Its files.
        public let files: [File]
        /// What to tell the author afterwards.
        public let nextSteps: String
    }

    /// Parses the arguments into the files to write; nothing is written yet.
    public static func plan(_ arguments: [String]) throws(UsageError) -> Plan {
        let parsed = try table.parse(arguments, from: Options())
        guard parsed.operands.count == 1, let name = parsed.operands.first else {
            throw UsageError("new-service: give one NAME, such as Greeter")
        }
        guard let first = name.utf8.first, isLetter(first), name.utf8.allSatisfy({ isLetter($0) || isDigit($0) }),
            name.utf8.count <= 63
        else {
            throw UsageError(
                "new-service: \"\(name)\" is not a valid NAME: it names the Swift target, the class "
                    + "and the library, so use letters and digits, starting with a letter (Greeter)")
        }
        let options = parsed.options
        let id = options.id ?? "com.example.\(name.lowercased())"
        if let problem = idProblem(id) { throw UsageError("new-service: --id \"\(id)\" \(problem)") }
        let sdk: String
        if let given = options.sdk { sdk = given } else { sdk = try defaultSDK() }
        guard access(sdk + "/Package.swift", F_OK) == 0 else {
            throw UsageError(
                "new-service: \(sdk) is not a ServiceHost checkout or install (no Package.swift); pass --sdk DIR")
        }
        let templates = ServiceTemplates(name: name, id: id, sdk: sdk)
        let directory = options.directory ?? name
        switch options.language {
        case .swift:
            return Plan(directory: directory, files: templates.swiftFiles, nextSteps: templates.swiftSteps(directory))
        case .c:
            return Plan(directory: directory, files: templates.cFiles, nextSteps: templates.cSteps(directory))
        }
    }

    /// Writes `plan`'s files; the folder must not exist or be empty.
    public static func write(_ plan: Plan) throws(ScaffoldError) {
        if let entries = try? listing(plan.directory), !entries.isEmpty {
            throw ScaffoldError("\(plan.directory) already exists and is not empty; choose another --dir")
        }
        for file in plan.files {
            let path = plan.directory + "/" + file.path
            try makeDirectories(String(path[..<path.lastIndex(of: "/")!]))
            try writeFile(path, file.text, mode: file.executable ? 0o755 : 0o644)
        }
    }

    /// Why `host new-service` could not write the scaffold.
    public struct ScaffoldError: Error, CustomStringConvertible {
        /// What went wrong, naming the path.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The SDK beside an installed host (`PREFIX/share/servicehost`, see scripts/install),
    /// else the checkout this host was built from.
    static func defaultSDK() throws(UsageError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        if length > 0 {
            let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let bin = String(executable[..<(executable.lastIndex(of: "/") ?? executable.endIndex)])
            let installed = bin + "/../share/servicehost"
            if access(installed + "/Package.swift", F_OK) == 0, let real = realpath(installed, nil) {
                defer { free(real) }
                return String(cString: real)
            }
        }
        // This file is Sources/HostCore/CommandLine/NewServiceCommand.swift in the checkout.
        var checkout = #filePath
        for _ in 0..<4 { checkout = String(checkout[..<(checkout.lastIndex(of: "/") ?? checkout.startIndex)]) }
        guard !checkout.isEmpty else { throw UsageError("new-service: cannot tell where the SDK is; pass --sdk DIR") }
        return checkout
    }

    /// Why `id` is not a service id, or nil (the rule servicehost-metagen and the loader apply).
    static func idProblem(_ id: String) -> String? {
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        let valid =
            id.utf8.count <= 127 && labels.count >= 2
            && labels.allSatisfy { label in
                !label.isEmpty
                    && label.utf8.allSatisfy {
                        isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                    }
            }
        return valid
            ? nil
            : "is not a reverse-DNS id (letters, digits, '-' and '_' in at least two dot-separated labels, at most 127 bytes)"
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func listing(_ path: String) throws(ScaffoldError) -> [String] {
        guard let directory = opendir(path) else { throw ScaffoldError("\(path): cannot read") }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = String(decoding: entry.nameBytes, as: UTF8.self)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private static func makeDirectories(_ path: String) throws(ScaffoldError) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o755) != 0 && errno != EEXIST {
                throw ScaffoldError("cannot create \(built): \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func writeFile(_ path: String, _ text: String, mode: mode_t) throws(ScaffoldError) {
        do throws(SystemError) {
            let file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: mode)
            // A buffer of our own: Array.withUnsafeBytes would erase the typed error.
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: text.utf8.count, alignment: 1)
            defer { buffer.deallocate() }
            buffer.copyBytes(from: text.utf8)
            try file.writeAll(UnsafeRawBufferPointer(buffer), path: path)
            try file.close(path)
        } catch {
            throw ScaffoldError("cannot write \(path): \(error)")
        }
    }
}
