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

    /// Takes the lock of `data`.
    ///
    /// - Throws: ``SigilInputError`` naming the process that holds it.
    init(_ data: DataDirectory) throws {
        let path = data.file("serve.lock")
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SigilInputError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            let holder = Int(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).filter(\.isNumber))
            throw SigilInputError(
                "\(data.path) is served already\(holder.map { " by process \($0)" } ?? ""), whose nonces are its own: "
                    + "a second server on it would accept each request once more. Replicas share nonces "
                    + "through a shared store (--nonces redis://…, or --store postgres://…)")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
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
    /// Whether this server's nonces are in a store other servers share (Redis, or PostgreSQL with
    /// the keys), so that two servers on one data directory would not accept one request twice.
    var sharesNonces: Bool {
        switch (nonceStorage, keyStore) {
        case (.redis, _), (.withKeys, .postgres): true
        case (.memory, _), (.withKeys, .dataDirectory): false
        }
    }
}
