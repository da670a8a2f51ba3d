import Crypto
import Foundation
import SwiftASN1
import X509

/// A verified Android Key Attestation: a chain from the attested key's certificate to a Google
/// hardware attestation root, and what its Key Description says.
///
/// ```swift
/// let attestation = try AndroidKeyAttestation.verify(chain: ders, challenge: issued, at: Date(), statusList: list)
/// try policy.check(attestation)   // the server's rules: security level, boot, lock, patch, app
/// ```
public struct AndroidKeyAttestation: Sendable {
    /// The chain as given, leaf first.
    public let chain: [Certificate]
    /// The leaf's Key Description.
    public let keyDescription: KeyDescription
    /// The root the chain ends at (by its key).
    public let root: GoogleAttestationRoots.Root
    /// The attested key: the leaf's public key.
    public var publicKey: Certificate.PublicKey { chain[0].publicKey }

    /// The most certificates a chain may have.
    public static let maximumChainLength = 10

    /// Critical extensions this verifier processes (a certificate with any other is refused).
    static let processedCriticalExtensions: Set<ASN1ObjectIdentifier> = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.keyUsage,
    ]

    /// Verifies a chain (DER certificates, leaf first) for `challenge` at `time`: each certificate is
    /// signed by the next and names it as issuer, each issuer is a CA allowed to sign certificates (path
    /// length respected; the leaf's own issuer, the attestation batch certificate, may be no CA whose
    /// key may sign, as Google's verifier accepts), no certificate carries a critical extension not processed here, each is
    /// valid at `time` except the root, which is anchored by its key (the chain's last certificate has
    /// a root's key, or is signed by one); no certificate is in `statusList`; the leaf alone carries a
    /// Key Description, well formed, whose challenge is `challenge`.
    ///
    /// The server's policy (security level, key, boot state, lock, patch level, app) is
    /// ``AndroidAttestationPolicy``'s.
    ///
    /// - Throws: ``AndroidAttestationError``, one code per check.
    public static func verify(
        chain ders: [[UInt8]], challenge: [UInt8], at time: Date, statusList: AttestationStatusList? = nil,
        roots: [GoogleAttestationRoots.Root] = GoogleAttestationRoots.hardware
    ) throws -> AndroidKeyAttestation {
        guard !ders.isEmpty, ders.count <= maximumChainLength else {
            throw AndroidAttestationError(.malformed, "a chain has 1 to \(maximumChainLength) certificates")
        }
        var chain: [Certificate] = []
        for (index, der) in ders.enumerated() {
            do { chain.append(try Certificate(derEncoded: der)) } catch {
                throw AndroidAttestationError(.malformed, "certificate \(index) is not a DER X.509 certificate")
            }
        }
        let root = try anchor(chain, roots: roots)
        // The root's own copy (when the chain carries it) is trusted by its key; its validity is not ours
        // to check (the 2016 issue of Google's RSA root expired while devices still send it).
        let anchoredInChain = chain.count > 1 && isSameKey(chain[chain.count - 1], root.certificate)
        let checked = anchoredInChain ? chain.count - 1 : chain.count
        for index in 0..<chain.count {
            let certificate = chain[index]
            if index < chain.count - 1 {
                try link(certificate, to: chain[index + 1], index: index)
            }
            for item in certificate.extensions where item.critical {
                guard processedCriticalExtensions.contains(item.oid) else {
                    throw AndroidAttestationError(
                        .criticalExtension, "certificate \(index) has a critical extension \(item.oid)")
                }
            }
            if index < checked {
                guard certificate.notValidBefore <= time, time <= certificate.notValidAfter else {
                    throw AndroidAttestationError(
                        .certificateExpired,
                        "certificate \(index) is valid from \(certificate.notValidBefore) to \(certificate.notValidAfter)"
                    )
                }
            }
            if let entry = statusList?.entry(for: certificate) {
                throw AndroidAttestationError(
                    .certificateRevoked,
                    "certificate \(index) (serial \(certificate.serialNumber)) is \(entry.status) in the status list")
            }
            if index > 0, certificate.extensions[oid: KeyDescription.oid] != nil {
                throw AndroidAttestationError(
                    .keyDescriptionMissing, "certificate \(index), not the leaf, carries a Key Description")
            }
        }
        guard let value = chain[0].extensions[oid: KeyDescription.oid]?.value else {
            throw AndroidAttestationError(.keyDescriptionMissing, "the leaf carries no Key Description")
        }
        let description = try KeyDescription(derEncoded: value)
        guard description.challenge.count == challenge.count,
            zip(description.challenge, challenge).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0
        else {
            throw AndroidAttestationError(.challengeMismatch, "the attestation challenge is not the one issued")
        }
        return AndroidKeyAttestation(chain: chain, keyDescription: description, root: root)
    }

    /// The root the chain ends at: its last certificate has a root's key, or is signed by one and
    /// names it as issuer.
    static func anchor(_ chain: [Certificate], roots: [GoogleAttestationRoots.Root]) throws
        -> GoogleAttestationRoots.Root
    {
        let last = chain[chain.count - 1]
        if let root = roots.first(where: { isSameKey(last, $0.certificate) }) {
            guard chain.count > 1 else {
                throw AndroidAttestationError(.certificateChain, "the chain is a root alone")
            }
            // A root's certificate signs itself: a changed byte in the copy a chain carries is refused too.
            guard last.publicKey.isValidSignature(last.signature, for: last) else {
                throw AndroidAttestationError(.certificateChain, "the chain's root certificate is not self-signed")
            }
            return root
        }
        if let root = roots.first(where: {
            $0.certificate.subject == last.issuer
                && $0.certificate.publicKey.isValidSignature(last.signature, for: last)
        }) {
            return root
        }
        throw AndroidAttestationError(
            .untrustedRoot, "the chain does not end at a Google hardware attestation root")
    }

    /// `certificate` is signed by `issuer`, names it, and `issuer` may sign certificates: a CA whose
    /// path length and key usage allow it, except that the leaf's issuer (`index` 0) may be no CA.
    static func link(_ certificate: Certificate, to issuer: Certificate, index: Int) throws {
        guard certificate.issuer == issuer.subject,
            issuer.publicKey.isValidSignature(certificate.signature, for: certificate)
        else {
            throw AndroidAttestationError(
                .certificateChain, "certificate \(index) is not signed by certificate \(index + 1)")
        }
        // RFC 5280 §4.2.1.9: an issuer is a CA, and no more CAs below it than its path length allows
        // (`index` certificates below it are CAs: all but the leaf).
        let constraints: BasicConstraints?
        let usage: KeyUsage?
        do {
            constraints = try issuer.extensions.basicConstraints
            usage = try issuer.extensions.keyUsage
        } catch {
            throw AndroidAttestationError(.certificateChain, "certificate \(index + 1)'s constraints do not parse")
        }
        guard case .isCertificateAuthority(let maxPathLength) = constraints else {
            // One tolerance, as Google's verifier (android/keyattestation) has: the attestation (batch)
            // certificate, the one that signs the leaf, may be no CA; some OEMs' factory chains are
            // made so. Its key must still be allowed to sign, it carries no Key Description (the
            // leaf alone does; checked by the caller), and every certificate above it is a CA.
            guard index == 0, issuer.extensions[oid: KeyDescription.oid] == nil,
                usage.map({ $0.keyCertSign || $0.digitalSignature }) ?? true
            else {
                throw AndroidAttestationError(.certificateChain, "certificate \(index + 1) is not a CA")
            }
            return
        }
        guard maxPathLength.map({ index <= $0 }) ?? true, usage.map({ $0.keyCertSign }) ?? true else {
            throw AndroidAttestationError(
                .certificateChain, "certificate \(index + 1) may not sign the certificates below it")
        }
    }

    static func isSameKey(_ certificate: Certificate, _ root: Certificate) -> Bool {
        certificate.publicKey.subjectPublicKeyInfoBytes == root.publicKey.subjectPublicKeyInfoBytes
    }
}
