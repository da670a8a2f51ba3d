import Crypto
import Foundation
import NIOCore
import NIOSSL
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilServer
import SigilTLS
import Synchronization

/// The TLS key a server that makes its own certificate serves: the current TLS key of its key ring
/// (PROTOCOL.md section 8.1), read at each handshake, so a promotion (`sigil admin keys promote tls`,
/// by this process or another on the same store) is served from the next connection on, without a
/// restart. Each key's self-signed certificate is made once; the one served is written to the data
/// directory's `tls-cert.pem` (its key to `tls-key.pem`, owner-only), for clients that trust that
/// file (`curl --cacert`) and for the next start.
final class ServedTLSKey: Sendable {
    let ring: ServerKeyRing
    let names: [String]
    let certificateFile: String
    let keyFile: String
    /// The certificate and key of each key served so far, by key ID.
    let made = Mutex<[String: TLSIdentity]>([:])

    /// - Parameter initial: the key the ring's current TLS key was imported from, with the certificate
    ///   the data directory holds for it, served as it is.
    init(
        ring: ServerKeyRing, names: [String], certificateFile: String, keyFile: String,
        initial: (keyID: String, TLSIdentity)?
    ) {
        self.ring = ring
        self.names = names
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        if let initial {
            made.withLock { $0[initial.keyID] = initial.1 }
        }
    }

    /// The identity to serve now: the ring's current TLS key's.
    func current() throws -> TLSIdentity {
        guard let key = ring.current(.tls) else { throw SigilInputError("the store holds no TLS key") }
        return try identity(of: key)
    }

    func identity(of key: ServerKeyRing.Key) throws -> TLSIdentity {
        let keyID = key.stored.keyID
        if let identity = made.withLock({ $0[keyID] }) { return identity }
        guard case .p256(let privateKey) = key.signing?.material else {
            throw SigilInputError("TLS key \(keyID) is not a P-256 key")
        }
        let pem = try Certificates.selfSignedServer(names: names, key: privateKey)
        let madeNow = try TLSIdentity(certificatePEM: pem.certificatePEM, keyPEM: pem.keyPEM)
        // Two handshakes right after a promotion may each make one: the first kept is served by all,
        // and only its maker writes the files, so they hold the certificate served.
        let (identity, kept) = made.withLock { made -> (TLSIdentity, Bool) in
            if let first = made[keyID] { return (first, false) }
            made[keyID] = madeNow
            return (madeNow, true)
        }
        if kept {
            // The file follows the key served; a failure to write it serves the key all the same.
            try? SecureFile.write(pem.keyPEM, to: keyFile)
            try? SecureFile.write(pem.certificatePEM, to: certificateFile, mode: 0o644)
        }
        return identity
    }

    /// The pin of the key served now, then those of the keys published next (a rotation's) and of the
    /// one served before during the overlap, which discovery lists among the backup pins: devices pin
    /// the next key before its promotion, and one that learns late still connects to a server a
    /// moment behind.
    var pins: (current: [String], next: [String]) {
        guard let phase = ring.phase(.tls) else { return ([], []) }
        return (
            [Self.pin(phase.current)].compactMap { $0 },
            (phase.next + [phase.previous].compactMap { $0 }).compactMap(Self.pin)
        )
    }

    static func pin(_ key: ServerKeyRing.Key) -> String? {
        guard case .p256(let privateKey) = key.signing?.material else { return nil }
        return SPKIPin.pin(spkiDER: privateKey.publicKey.derRepresentation)
    }

    /// `configuration` serving ``current()`` at each handshake.
    func serving(_ configuration: TLSConfiguration) -> TLSConfiguration {
        var configuration = configuration
        configuration.sslContextCallback = { [self] _, promise in
            do {
                let identity = try current()
                var override = NIOSSLContextConfigurationOverride()
                override.certificateChain = identity.chain.map { .certificate($0) }
                override.privateKey = .privateKey(identity.privateKey)
                promise.succeed(override)
            } catch {
                // The key read last at start stays served rather than no handshake at all.
                promise.succeed(.noChanges)
            }
        }
        return configuration
    }
}
