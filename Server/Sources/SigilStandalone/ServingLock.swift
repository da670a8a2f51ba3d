import Foundation
import ServiceLifecycle
@_spi(Sigil) import SigilCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock a server holds on its data directory while its nonces are its own (in memory, or the
/// SQLite file's, whose recent nonces are in the process's memory): a second server on the same
/// directory would accept every request the first did once more (PROTOCOL.md section 3).
///
/// `serve.lock` in the directory, `flock`ed for the process's life (the kernel lets go at its exit,
/// however it ends) and holding its process ID for the refusal's message.
///
/// It is a service of the server's `ServiceGroup`, run before the stores: it lets go when the group
/// stops, after every other service has (or at ``SigilStandalone/Prepared/close()``).
public final class ServingLock: Service, Sendable {
    private let descriptor: Mutex<Int32?>

    /// Takes the lock of `data`: exclusive while this server's nonces are its own (`sharedNonces`
    /// `nil`), else shared with the servers whose nonces are in the same store, which the file names.
    ///
    /// - Throws: ``SigilInputError`` naming the process that holds it, or the other nonce store.
    init(_ data: DataDirectory, sharedNonces: String?) throws {
        let path = data.file("serve.lock")
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SigilInputError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        func recorded() -> (pid: Int?, store: String?) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            let lines = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).split(separator: "\n")
            return (lines.first.flatMap { Int($0) }, lines.dropFirst().first.map(String.init))
        }
        func refuse(_ why: String) -> SigilInputError {
            let holder = recorded().pid
            close(descriptor)
            return SigilInputError(
                "\(data.path) is served already\(holder.map { " by process \($0)" } ?? ""), \(why): "
                    + "a second server on it would accept each request once more. Servers on one data directory "
                    + "share nonces through one shared store (--nonces redis://…, or --store postgres://…)")
        }
        func write() {
            let line = Array("\(getpid())\n\(sharedNonces ?? "")\n".utf8)
            _ = ftruncate(descriptor, 0)
            _ = pwrite(descriptor, line, line.count, 0)
        }
        if let sharedNonces {
            guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else { throw refuse("whose nonces are its own") }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                // Alone: this server names the store; then shared again.
                write()
                _ = flock(descriptor, LOCK_SH)
            } else if let theirs = recorded().store, theirs != sharedNonces {
                throw refuse("whose nonces are in another store (\(theirs))")
            }
        } else {
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                throw refuse(
                    recorded().store.map { "whose nonces are in \($0), not this server's" }
                        ?? "whose nonces are its own")
            }
            write()
        }
        self.descriptor = Mutex(descriptor)
    }

    /// Whether a server holds `data`'s lock now (a shared-nonce server takes none: its directory may
    /// be in use all the same, which only the caller can tell).
    public static func isHeld(_ data: DataDirectory) -> Bool {
        let descriptor = open(data.file("serve.lock"), O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return true }
        _ = flock(descriptor, LOCK_UN)
        return false
    }

    /// Lets the lock go (once).
    func release() {
        descriptor.withLock { descriptor in
            if let open = descriptor { close(open) }
            descriptor = nil
        }
    }

    /// Holds the lock until the group shuts down or is cancelled.
    public func run() async throws {
        defer { release() }
        try? await gracefulShutdown()
    }

    deinit { release() }
}

extension SigilStandalone.Options {
    /// The store this server's nonces are in when other servers can share it (Redis, or PostgreSQL
    /// with the keys), named without any password; `nil` when they are the process's own.
    var sharedNonceStore: String? {
        func named(_ url: String) -> String {
            guard var components = URLComponents(string: url) else { return url }
            components.password = nil
            return components.string ?? url
        }
        switch (nonceStorage, keyStore) {
        case (.redis(let url), _): return named(url)
        case (.withKeys, .postgres(let url)): return named(url)
        case (.memory, _), (.withKeys, .dataDirectory): return nil
        }
    }
}
