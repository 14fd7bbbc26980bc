import Foundation
import TestSupport
import Testing

/// Source compatibility for C plugin authors (issue 35 item 8): a plugin that compiled against
/// an earlier header of this major version still compiles. Tests/Fixtures/EarlierCExamples holds
/// a copy of every earlier public example, collected from git history (the README's C, HelloC,
/// CPlugins' probe, Uptime, the headers' own examples); each builds against today's header with
/// gcc and clang, `-Werror` off, and loads in the real host. The one changed macro,
/// `SH_CLAIM_METADATA` with an id string, warns naming `SH_CLAIM_METADATA_ID` and writes the
/// record that macro writes.
@Suite(.timeLimit(.minutes(10))) struct CSourceCompatTests {
    /// The fixtures, by file name.
    static let examples: [String] = {
        let folder = Repository.fixture("EarlierCExamples")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".c") }.sorted().map { folder + "/" + $0 }
    }()

    /// The probe's claims, so its `SH_CLAIM_METADATA` lines (behind `#ifdef`s) are compiled too.
    /// No `PROBE_REQUIRES`: a run would leave the probe out for it.
    static let probeClaims = [
        "PROBE_URL_CLAIM=\"myapp\"", "PROBE_ACTIVITY_CLAIM=\"com.example.browse\"", "PROBE_SUBSCRIBE=\"compat.note\"",
        "PROBE_SCENE_ROLE=\"car\"", "PROBE_ANSWERS=\"compat.ask\"", "PROBE_AFTER=\"compat.other\"",
    ]

    /// The text a compiler prints when the deprecated form is used: it names the replacement.
    static let deprecation = "use SH_CLAIM_METADATA_ID"

    /// Compiles `source` into a shared library with `compiler`, as a plugin author would
    /// (`-Werror` off; `_POSIX_C_SOURCE` for Uptime's clock_gettime, which it built with as gnu11).
    static func compile(_ compiler: String, _ source: String, to output: String, flags: [String] = ["-std=c11"]) throws
        -> CommandResult
    {
        try Command.run(
            "/usr/bin/env",
            [compiler] + flags + [
                "-D_POSIX_C_SOURCE=200809L", "-Wall", "-shared", "-fPIC", "-I", Repository.abiInclude,
            ]
                + probeClaims.map { "-D" + $0 } + [source, "-o", output])
    }

    /// Whether the example says it uses the deprecated form (its first comment, written when
    /// it was collected, by what its text holds).
    static func usesIDString(_ source: String) throws -> Bool {
        try String(contentsOfFile: source, encoding: .utf8).prefix(600).contains(
            "Deprecated form: SH_CLAIM_METADATA with an id string")
    }

    /// `host inspect --json FILE`: its services.
    static func inspect(_ library: String) throws -> [[String: Any]] {
        let result = try Command.run(try Repository.product("host"), ["inspect", "--json", library])
        let files = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        let file = try #require(files?.first, "\(result.stdout)\(result.stderr)")
        #expect(file["valid"] as? Bool == true, "\(library): \(file)")
        return file["services"] as? [[String: Any]] ?? []
    }

    @Test func theExamples_coverEverySource() {
        let names = Self.examples.map { URL(fileURLWithPath: $0).lastPathComponent }
        for prefix in ["readme-", "hello-", "probe-", "uptime-", "header-"] {
            #expect(names.contains { $0.hasPrefix(prefix) }, "no \(prefix)* example in \(names)")
        }
        #expect(names.count >= 40, "\(names)")
    }

    @Test(arguments: ["cc", "clang"]) func everyEarlierExample_compiles_warningOnlyForTheIDStringForm(compiler: String)
        throws
    {
        let scratch = try Scratch()
        var deprecated = 0
        for source in Self.examples {
            let name = URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent
            let result = try Self.compile(compiler, source, to: scratch.file("lib\(name).so"))
            #expect(result.status == 0, "\(compiler) \(name):\n\(result.stderr)")
            let warned = result.stderr.contains(Self.deprecation)
            #expect(warned == (try Self.usesIDString(source)), "\(compiler) \(name):\n\(result.stderr)")
            if warned { deprecated += 1 }
        }
        // The old form is really among them (the README's, the probe's, the header's own).
        #expect(deprecated >= 3)
    }

    @Test func everyEarlierExample_loadsInTheHost() throws {
        // `readme-*-audit.c` requires dev.servicehost.logger >=1.2 <2: a stand-in of that version.
        let scratch = try Scratch()
        let required = try scratch.folder("required")
        try Plugins.probe(required + "/logger.so", ["PROBE_ID=\"dev.servicehost.logger\"", "PROBE_VERSION=\"1.2.0\""])
        for source in Self.examples {
            let name = URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent
            let host = try RunningHost()
            let built = try Self.compile("cc", source, to: host.lib + "/lib\(name).so")
            try #require(built.status == 0, "\(name):\n\(built.stderr)")
            let ids = try Self.inspect(host.lib + "/lib\(name).so").compactMap { $0["id"] as? String }
            #expect(!ids.isEmpty, "\(name)")
            try host.start(plugins: [host.lib, required])
            // A lazy example is opened by request, so its code runs too.
            let before = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
            for entry in before where entry["activation"] as? String == "lazy" {
                let id = entry["id"] as? String ?? ""
                #expect(try host.ctl("service", "start", id).status == 0, "\(name): \(id)")
            }
            let listed = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
            let running = Set(listed.filter { $0["state"] as? String == "running" }.compactMap { $0["id"] as? String })
            #expect(Set(ids).isSubset(of: running), "\(name): \(listed)")
            if name.hasSuffix("-request") {
                // The README's answerer answers, its claim (either form) naming it.
                let asked = try host.ctlJSON("request", "queue.count")
                #expect((asked.reply["result"] as? [String: Any])?["count"] as? Int == 0, "\(name): \(asked.reply)")
            }
            let stopped = host.stop()
            #expect(stopped.status == 0, "\(name): \(stopped.stderr)")
        }
    }

    /// Two services in one file, each claim naming its service by an id string: the host
    /// refuses an id-less claim in such a file, so each record must carry its id, exactly as
    /// `SH_CLAIM_METADATA_ID` writes it. In C11 and C++14, with both compilers.
    static let twoServices = """
        #include <servicehost.h>

        SH_PLUGIN_METADATA("c");
        SH_SERVICE_METADATA(a_meta, "compat.a", "A", "1.0.0", SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_OPEN_URL), 0);
        SH_SERVICE_METADATA(b_meta, "compat.b", "B", "1.0.0", SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_OPEN_URL), 0);
        #ifdef NEW_FORM
        SH_CLAIM_METADATA_ID(a_url, "compat.a", SH_CLAIM_URL, "alpha");
        SH_CLAIM_METADATA_ID(b_url, "compat.b", SH_CLAIM_URL, "beta");
        #else
        SH_CLAIM_METADATA(a_url, "compat.a", SH_CLAIM_URL, "alpha");
        SH_CLAIM_METADATA(b_url, "compat.b", SH_CLAIM_URL, "beta");
        #endif

        static int32_t handle(const sh_service *service, const sh_event *event) {
            (void)service;
            (void)event;
            return SH_OK;
        }
        static const sh_service a = {sizeof(sh_service), SH_SERVICE_VERSION, a_meta.id, NULL, NULL, handle};
        static const sh_service b = {sizeof(sh_service), SH_SERVICE_VERSION, b_meta.id, NULL, NULL, handle};
        static const sh_service *const services[] = {&a, &b};
        static sh_plugin plugin = {sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 2, services, NULL};

        #ifdef __cplusplus
        extern "C"
        #endif
        SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
            (void)offer;
            return &plugin;
        }

        """

    @Test(arguments: [("cc", "-std=c11"), ("clang", "-std=c11"), ("g++", "-std=c++14"), ("clang++", "-std=c++14")])
    func theIDStringForm_writesTheRecordOfSH_CLAIM_METADATA_ID(compiler: String, standard: String) throws {
        let scratch = try Scratch()
        let source = try scratch.write(standard.contains("++") ? "two.cpp" : "two.c", Array(Self.twoServices.utf8))
        var claims: [[String]] = []
        for form in ["OLD_FORM", "NEW_FORM"] {
            let result = try Self.compile(
                compiler, source, to: scratch.file("\(form).so"), flags: [standard, "-Wextra", "-D" + form])
            #expect(result.status == 0, "\(compiler) \(form):\n\(result.stderr)")
            // Only the old form warns, naming the replacement.
            #expect(
                result.stderr.contains(Self.deprecation) == (form == "OLD_FORM"),
                "\(compiler) \(form):\n\(result.stderr)")
            #expect(!result.stderr.contains("warning:") || form == "OLD_FORM", "\(compiler) \(form):\n\(result.stderr)")
            let services = try Self.inspect(scratch.file("\(form).so"))
            claims.append(services.map { "\($0["id"] as? String ?? "") \(($0["urls"] as? [String] ?? []).joined())" })
        }
        #expect(claims == [["compat.a alpha", "compat.b beta"], ["compat.a alpha", "compat.b beta"]])
    }

    /// Today's form, the metadata variable, builds with every warning an error: in C11, and in
    /// C++11 (where only this form builds) and later.
    @Test(arguments: [
        ("cc", "-std=c11"), ("clang", "-std=c11"), ("g++", "-std=c++11"), ("g++", "-std=c++17"),
        ("clang++", "-std=c++14"),
    ])
    func theVariableForm_buildsWithoutAWarning(compiler: String, standard: String) throws {
        let scratch = try Scratch()
        let text = try String(
            contentsOfFile: Repository.fixture("EarlierCExamples/readme-42037fd-links.c"), encoding: .utf8)
        let source = try scratch.write(standard.contains("++") ? "links.cpp" : "links.c", Array(text.utf8))
        let flags = [standard, "-Wextra", "-pedantic", "-Werror"]
        let result = try Self.compile(compiler, source, to: scratch.file("links.so"), flags: flags)
        #expect(result.status == 0, "\(compiler) \(standard):\n\(result.stderr)")
        #expect(try Self.inspect(scratch.file("links.so")).first?["urls"] as? [String] == ["myapp"])
    }

    @Test(arguments: [("cc", "-std=c11"), ("clang", "-std=c11"), ("g++", "-std=c++14"), ("clang++", "-std=c++14")])
    func anyOtherSecondArgument_failsTheBuild(compiler: String, standard: String) throws {
        let scratch = try Scratch()
        let text = Self.twoServices.replacingOccurrences(
            of: #"SH_CLAIM_METADATA(a_url, "compat.a","#, with: "SH_CLAIM_METADATA(a_url, 42,")
        let source = try scratch.write(standard.contains("++") ? "bad.cpp" : "bad.c", Array(text.utf8))
        let result = try Self.compile(compiler, source, to: scratch.file("bad.so"), flags: [standard])
        #expect(result.status != 0, "\(compiler) built SH_CLAIM_METADATA(a_url, 42, …)")
        #expect(result.stderr.contains("a_url") || result.stderr.contains("SH_CLAIM_METADATA"), "\(result.stderr)")
    }
}
