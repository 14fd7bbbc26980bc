import Foundation

/// Debian packages a test needs (xdg-utils, desktop-file-utils, …): present, or installed with
/// apt-get when the machine allows it (root); otherwise nil, with the reason printed once, so
/// the tests that need them say loudly why they were skipped.
public enum SystemPackages {
    // Guarded by `lock`: suites run in parallel and ask for the same packages.
    nonisolated(unsafe) private static var known: [String: Bool] = [:]
    private static let lock = NSLock()

    /// True when every program of `programs` is executable (and `check`, when given, passes),
    /// after installing `packages` with apt-get if not. `purpose` names the tests that are
    /// skipped otherwise, in the banner printed once.
    public static func ensure(
        _ packages: [String], providing programs: [String], check: (() -> Bool)? = nil,
        for purpose: String = "the tests that need them"
    ) -> Bool {
        lock.withLock {
            let key = packages.joined(separator: " ")
            if let answer = known[key] { return answer }
            func present() -> Bool {
                programs.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } && (check?() ?? true)
            }
            var answer = present()
            if !answer, getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/apt-get") {
                FileHandle.standardError.write(Data("\(key): not installed; installing with apt-get\n".utf8))
                let environment = ["DEBIAN_FRONTEND": "noninteractive"]
                // Another test (or scripts/test-packages) may hold dpkg's lock: wait for it.
                let install =
                    ["-o", "DPkg::Lock::Timeout=300", "install", "-y", "-qq", "--no-install-recommends"] + packages
                _ = try? Command.run("/usr/bin/apt-get", install, environment: environment)
                if !present() {
                    _ = try? Command.run("/usr/bin/apt-get", ["update", "-qq"])
                    _ = try? Command.run("/usr/bin/apt-get", install, environment: environment)
                }
                answer = present()
            }
            if !answer {
                FileHandle.standardError.write(
                    Data(
                        """
                        **************************************************************************
                        SKIPPED: \(purpose) need the Debian packages \(key), and they could not
                        be installed here (not root, no apt-get, or apt-get failed). Install them
                        (scripts/test-packages) and run the tests again.
                        **************************************************************************

                        """.utf8))
            }
            known[key] = answer
            return answer
        }
    }
}
