import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles

/// Runs the built `sigil` executable.
enum SigilCommand {
    static let executable: URL = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [beside, beside.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent("sigil")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return TestPaths.server.appendingPathComponent(".build/debug/sigil")
    }()

    struct Result {
        let status: Int32
        let output: [UInt8]
        let error: String
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs the command on a thread of its own: waiting for it here would hold one of the few
    /// threads Swift concurrency has, which a server in this process may need to answer the command.
    static func run(_ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:]) async throws
        -> Result
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Swift.Result { try runBlocking(arguments, input: input, environment: environment) })
            }.start()
        }
    }

    static func runBlocking(_ arguments: [String], input: [UInt8], environment: [String: String]) throws -> Result {
        let process = try ChildProcess(
            executable.path, arguments,
            environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 })
        process.send(input)
        let (output, error, status) = process.finish()
        return Result(status: status, output: Array(output), error: String(decoding: error, as: UTF8.self))
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sigil-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
