import Foundation

/// Where the tests' files are, whatever target a test is in.
enum TestPaths {
    /// `Server/Tests`: vectors, fixtures, the Python peers (`Interop`, `Upstream`, `Browser`).
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    /// `Server`: the server package.
    static let server = tests.deletingLastPathComponent()
    /// The repository's root.
    static let repository = server.deletingLastPathComponent()
}
