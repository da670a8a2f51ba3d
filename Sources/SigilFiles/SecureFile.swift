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

    /// Reads a file, or `nil` when it does not exist.
    ///
    /// - Parameter secret: refuse the file when its group or others may read or write it, as ssh does
    ///   (a key or secret others can read is no longer this device's alone).
    /// - Throws: ``SigilInputError`` naming the path (never the contents).
    public static func read(_ path: String, secret: Bool) throws -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        if secret {
            var status = stat()
            guard stat(path, &status) == 0 else { throw SigilInputError("cannot read \(path)") }
            guard status.st_mode & 0o077 == 0 else {
                throw SigilInputError("\(path) is readable by others; run chmod 600 \(path)")
            }
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SigilInputError("cannot read \(path)")
        }
        return Array(data)
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
