import Foundation
@_spi(Sigil) import SigilCore

/// Writes files that hold secrets: created with owner-only permissions, all or nothing.
public enum SecureFile {
    /// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
    /// reader sees the old file or the whole new one, never part of it.
    ///
    /// - Parameter mode: the permissions; `0o600` unless the file holds nothing secret.
    /// - Throws: ``SigilInputError`` naming the path (never the contents).
    public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: Int = 0o600) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, mode_t(mode))
        guard descriptor >= 0 else { throw SigilInputError("cannot write \(path)") }
        let data = Array(bytes)
        let written = data.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == data.count, synced, rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw SigilInputError("cannot write \(path)")
        }
    }

    /// Refuses to go on when `path` exists (a file, a directory, a link, even a dangling one): what
    /// makes a key or a CA never replaces one by accident (`sigil ca init`, `sigil keygen --out`).
    ///
    /// - Parameter advice: what to do instead, appended to the refusal.
    /// - Throws: ``SigilInputError`` naming the path (never the contents).
    public static func refuseExisting(_ path: String, advice: String? = nil) throws {
        var status = stat()
        guard lstat(path, &status) != 0 else {
            throw SigilInputError("\(path) exists already" + (advice.map { ": " + $0 } ?? ""))
        }
    }

    /// Reads a file, or `nil` when it does not exist.
    ///
    /// The file is opened once and its permissions are those of what was opened (`fstat` on the open
    /// descriptor, a symlink's target), so nothing can be swapped in between the check and the read.
    ///
    /// - Parameter secret: refuse the file when its group or others may read or write it, as ssh does
    ///   (a key or secret others can read is no longer this machine's alone); the error names the fix
    ///   (`chmod 600 FILE`, the target's path for a symlink).
    /// - Throws: ``SigilInputError`` naming the path (never the contents).
    public static func read(_ path: String, secret: Bool) throws -> [UInt8]? {
        try read(path, secretWhen: { _ in secret })
    }

    /// Reads a secret file (a private key, a token, a password): ``read(_:secret:)`` with `secret`,
    /// a missing file an error too.
    ///
    /// - Throws: ``SigilInputError`` naming the path (never the contents).
    public static func readSecret(_ path: String) throws -> [UInt8] {
        guard let bytes = try read(path, secret: true) else {
            throw SigilInputError("cannot read \(path): no such file")
        }
        return bytes
    }

    /// Reads a file whose contents say whether it is a secret (a key file: a private key or an HMAC
    /// secret is one, a public key is not), and refuses a secret one as ``read(_:secret:)`` does.
    ///
    /// - Parameter isSecret: given the contents, whether they are a secret.
    /// - Throws: ``SigilInputError`` naming the path (never the contents).
    public static func read(_ path: String, secretWhen isSecret: ([UInt8]) -> Bool) throws -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw SigilInputError("cannot read \(path)")
        }
        defer { close(descriptor) }
        // (A pipe, as `<(command)` gives, has its own owner-only mode and passes.)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw SigilInputError("cannot read \(path)") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        defer { for index in chunk.indices { chunk[index] = 0 } }
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw SigilInputError("cannot read \(path)") }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= 16 << 20 else { throw SigilInputError("\(path) is larger than 16 MiB") }
        }
        if status.st_mode & 0o077 != 0, isSecret(bytes) {
            bytes.withUnsafeMutableBytes { buffer in
                for index in buffer.indices { buffer[index] = 0 }
            }
            throw exposed(path)
        }
        return bytes
    }

    /// The refusal of a secret file its group or others may read or write, naming the fix.
    static func exposed(_ path: String) -> SigilInputError {
        var link = stat()
        if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            return SigilInputError(
                "\(path) is a link to \(target), which its group or others may read or write: it holds a secret; "
                    + "run chmod 600 \(target)")
        }
        return SigilInputError(
            "\(path) may be read or written by its group or others: it holds a secret; run chmod 600 \(path)")
    }

    /// Writes `text` as UTF-8; see ``write(_:to:mode:)``.
    public static func write(_ text: String, to path: String, mode: Int = 0o600) throws {
        try write(Array(text.utf8), to: path, mode: mode)
    }

    /// Creates `path` and its parents as directories readable by the owner only, if missing.
    public static func createDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(
                atPath: path,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw SigilInputError("cannot create the directory \(path)")
        }
    }
}
