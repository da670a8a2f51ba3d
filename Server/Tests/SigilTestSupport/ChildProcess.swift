import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program started with `posix_spawn`, its standard streams on pipes. Foundation's `Process.run()`
/// is not used: on Linux it over-reads `/proc/self/fd` entries and crashes now and then, the more
/// descriptors the test process holds (swift-corelibs-foundation PR 5472, in Swift 6.3.1).
final class ChildProcess: @unchecked Sendable {
    /// Its process ID.
    let processIdentifier: pid_t
    /// Where to write its standard input (closed by ``closeInput()``), or `nil` when it reads /dev/null.
    private(set) var input: FileHandle?
    /// Its standard output.
    let output: FileHandle
    /// Its standard error, or `nil` when it goes to /dev/null.
    let error: FileHandle?
    private var status: Int32?

    /// Starts `executable` with `arguments` and `environment` (the test process's when `nil`).
    init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input hasInput: Bool = true,
        error hasError: Bool = true
    ) throws {
        Self.ignoreBrokenPipes
        var opened: [Int32] = []
        func pipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [0, 0]
            guard Glibc.pipe(&fds) == 0 else {
                for fd in opened { Glibc.close(fd) }
                throw SigilCommandError("pipe failed: errno \(errno)")
            }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            opened += fds
            return (fds[0], fds[1])
        }
        let stdin = hasInput ? try pipe() : nil
        let stdout = try pipe()
        let stderr = hasError ? try pipe() : nil
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, stdout.write, 1)
        if let stderr {
            posix_spawn_file_actions_adddup2(&actions, stderr.write, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // Last: the pipes' own descriptors were copied to 0, 1 and 2 above.
        Self.closeOthers(&actions)
        var attributes = Self.attributes()
        defer { posix_spawnattr_destroy(&attributes) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let environmentList = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0)=\($1)") } + [nil]
        defer { for entry in environmentList { free(entry) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environmentList)
        for fd in [stdin?.read, stdout.write, stderr?.write].compactMap({ $0 }) { Glibc.close(fd) }
        guard spawned == 0 else {
            for fd in [stdin?.write, stdout.read, stderr?.read].compactMap({ $0 }) { Glibc.close(fd) }
            throw SigilCommandError("cannot start \(executable): error \(spawned)")
        }
        processIdentifier = pid
        input = stdin.map { FileHandle(fileDescriptor: $0.write, closeOnDealloc: true) }
        output = FileHandle(fileDescriptor: stdout.read, closeOnDealloc: true)
        error = stderr.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
    }

    /// Closes, in the child, every descriptor above the standard three, after their `dup2`s: a pipe
    /// another thread made a moment before it set close-on-exec, or a socket the test process opened,
    /// reaches no child (glibc's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc does not
    /// import: looked up by name).
    static func closeOthers(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }

    /// A write to a child that exited fails with `EPIPE` rather than killing the test process.
    static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Reads its standard output and standard error to their ends at once (a child that fills one
    /// pipe while the other is read to its end would wait forever), then waits for it to exit.
    func finish() -> (output: Data, error: Data, status: Int32) {
        let error = Mutex(Data())
        let errorRead = DispatchSemaphore(value: 0)
        if let handle = self.error {
            Thread {
                let read = handle.allChunks
                error.withLock { $0 = read }
                errorRead.signal()
            }.start()
        } else {
            errorRead.signal()
        }
        let output = output.allChunks
        errorRead.wait()
        return (output, error.withLock { $0 }, waitUntilExit())
    }

    /// The attributes every child starts with: the test runner's threads block signals, and a child
    /// must not inherit that (or SIGTERM waits), nor signals ignored. Destroy them after the spawn.
    static func attributes() -> posix_spawnattr_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return attributes
    }

    /// Writes `bytes` to its standard input and closes it (a program that exits before reading its
    /// input closes the pipe: that is its answer, not a failure).
    func send(_ bytes: [UInt8]) {
        guard let input else { return }
        var written = 0
        bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = Glibc.write(input.fileDescriptor, buffer.baseAddress! + written, buffer.count - written)
                if count > 0 {
                    written += count
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
        }
        closeInput()
    }

    /// Closes its standard input.
    func closeInput() {
        try? input?.close()
        input = nil
    }

    /// Whether it still runs.
    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        let result = waitpid(processIdentifier, &raw, WNOHANG)
        if result == processIdentifier {
            status = raw
            return false
        }
        return result == 0
    }

    /// Sends SIGTERM.
    func terminate() { kill(processIdentifier, SIGTERM) }

    /// Waits for it to end; its exit status (128 plus the signal's number when a signal ended it).
    @discardableResult
    func waitUntilExit() -> Int32 {
        if status == nil {
            var raw: Int32 = 0
            while waitpid(processIdentifier, &raw, 0) == -1 && errno == EINTR {}
            status = raw
        }
        return Self.exitStatus(status ?? 0)
    }

    /// Whether it ended by exiting (not by a signal).
    var exited: Bool { status.map { $0 & 0x7F == 0 } ?? false }

    static func exitStatus(_ raw: Int32) -> Int32 { raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F) }
}

/// A child process that could not be started.
struct SigilCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
