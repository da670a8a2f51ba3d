import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SwiftASN1
import X509

/// Verifies App Attest attestations and assertions on the server, every step of Apple's
/// "Validating apps that connect to your server", with no call to Apple.
///
/// ```swift
/// let verifier = AppAttestVerifier(appIDs: ["TEAMID1234.com.example.app"], environments: [.production])
/// let attested = try await verifier.verifyAttestation(object, keyID: keyID,
///                                                     clientDataHash: Array(SHA256.hash(data: challenge)))
/// // store attested.publicKey and attested.counter under keyID; later, per request:
/// let assertion = try verifier.verifyAssertion(object, clientData: clientData,
///                                              publicKey: attested.publicKey, previousCounter: stored)
/// ```
public struct AppAttestVerifier: Sendable {
    /// Where an attested key was made: the AAGUID says.
    public enum Environment: String, Sendable, Hashable, CaseIterable, Codable {
        /// `appattest` followed by seven zero bytes.
        case production
        /// `appattestdevelop`.
        case development

        /// The 16-byte AAGUID of the environment.
        public var aaguid: [UInt8] {
            switch self {
            case .production: return Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
            case .development: return Array("appattestdevelop".utf8)
            }
        }
    }

    /// The App IDs (team ID, `.`, bundle ID) whose keys are accepted.
    public var appIDs: [String]
    /// The environments whose keys are accepted.
    public var environments: Set<Environment>
    /// The root `x5c` must chain to: Apple's App Attestation Root CA unless a test names another.
    public var root: Certificate
    /// The root receipts chain to: Apple Root CA - G3.
    public var receiptRoot: Certificate = appleRootCAG3
    /// The time enrollment judges attestations at (``attestedKey(_:keyID:clientDataHash:)``).
    public var now: @Sendable () -> Date = { Date() }

    /// The largest attestation object accepted (Apple's are about 5.5 KB).
    public static let maximumAttestationSize = 64 << 10
    /// The largest assertion object accepted (Apple's are about 200 bytes).
    public static let maximumAssertionSize = AppAttestAssertion.maximumSize
    /// The nonce extension's OID.
    public static let nonceExtensionOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - appIDs: the accepted App IDs, `TEAMID.bundle.id`.
    ///   - environments: the accepted environments; `.development` only for development builds.
    ///   - root: the trusted root (a test CA in tests).
    public init(
        appIDs: [String], environments: Set<Environment> = [.production], root: Certificate = appleAppAttestationRootCA
    ) {
        self.appIDs = appIDs
        self.environments = environments
        self.root = root
    }

    // MARK: Attestation

    /// What a verified attestation establishes.
    public struct Attestation: Sendable, Hashable {
        /// The attested P-256 key, which signs the app's assertions.
        public let publicKey: P256.Signing.PublicKey
        /// SHA-256 of the key's X9.63 form: its key ID.
        public let keyID: [UInt8]
        /// The App ID whose hash the authenticator data carries.
        public let appID: String
        /// The environment the key was made in.
        public let environment: Environment
        /// The counter (0).
        public let counter: UInt32
        /// The receipt, for fraud-metric requests later (``AppAttestReceipt``).
        public let receipt: [UInt8]
        /// The credential certificate (`x5c[0]`), DER, which the receipt names.
        public let credentialCertificate: [UInt8]
        /// The credential certificate's validity.
        public let notBefore: Date
        /// The end of the credential certificate's validity.
        public let notAfter: Date

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.keyID == rhs.keyID && lhs.receipt == rhs.receipt && lhs.appID == rhs.appID
        }
        public func hash(into hasher: inout Hasher) { hasher.combine(keyID) }
    }

    /// Verifies an attestation object made by `DCAppAttestService.attestKey(_:clientDataHash:)`.
    ///
    /// - Parameters:
    ///   - object: the attestation object (CBOR).
    ///   - keyID: the key ID the app sent (32 bytes, the base64 `keyId` decoded).
    ///   - clientDataHash: what the app passed to `attestKey`: SHA-256 of the server's one-time
    ///     challenge, normally.
    ///   - time: when to judge the certificates' validity.
    /// - Throws: ``AppAttestError``, its code naming the failed step.
    public func verifyAttestation(
        _ object: [UInt8], keyID: [UInt8], clientDataHash: [UInt8], at time: Date = Date()
    ) async throws -> Attestation {
        guard object.count <= Self.maximumAttestationSize else {
            throw AppAttestError(.malformed, "the attestation object is larger than 64 KiB")
        }
        let decoded = try Self.cbor(object, "attestation object")
        guard decoded["fmt"]?.textValue == "apple-appattest" else {
            throw AppAttestError(.malformed, "fmt is not apple-appattest")
        }
        guard let statement = decoded["attStmt"], let chain = statement["x5c"]?.arrayValue,
            let authenticatorBytes = decoded["authData"]?.bytesValue
        else {
            throw AppAttestError(.malformed, "attStmt.x5c or authData is missing")
        }
        let certificates = try chain.map { item -> Certificate in
            guard let der = item.bytesValue, let certificate = try? Certificate(derEncoded: der) else {
                throw AppAttestError(.malformed, "an x5c entry is not a DER certificate")
            }
            return certificate
        }
        guard let leaf = certificates.first, certificates.count <= 4 else {
            throw AppAttestError(.malformed, "x5c holds no certificate, or too many")
        }
        let receipt = statement["receipt"]?.bytesValue ?? []
        // 1. The chain, to the root, at `time`.
        try await Self.validate(leaf: leaf, intermediates: Array(certificates.dropFirst()), root: root, at: time)
        // 2–3. The nonce: SHA-256(authData ‖ clientDataHash) is the credential certificate's extension.
        let nonce = Array(SHA256.hash(data: authenticatorBytes + clientDataHash))
        guard nonce == (try Self.nonceExtension(of: leaf)) else {
            throw AppAttestError(.nonceMismatch, "the certificate's nonce is not over this authData and challenge")
        }
        // 4. The key ID is SHA-256 of the credential's public key.
        guard let publicKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AppAttestError(.malformed, "the credential certificate's key is not P-256")
        }
        let keyDigest = Array(SHA256.hash(data: publicKey.x963Representation))
        guard keyDigest == keyID else {
            throw AppAttestError(.keyIDMismatch, "the key ID is not SHA-256 of the attested key")
        }
        let authenticator = try AuthenticatorData(authenticatorBytes)
        // 5. rpIdHash is SHA-256 of an accepted App ID.
        let appID = try self.appID(forRPIDHash: authenticator.rpIDHash)
        // 6. The counter starts at 0.
        guard authenticator.counter == 0 else {
            throw AppAttestError(.counterInvalid, "an attestation's counter is \(authenticator.counter), not 0")
        }
        // 7. The AAGUID names an accepted environment.
        guard let aaguid = authenticator.aaguid else {
            throw AppAttestError(.malformed, "authData holds no attested credential")
        }
        guard let environment = Environment.allCases.first(where: { $0.aaguid == aaguid }) else {
            throw AppAttestError(.aaguidInvalid, "the AAGUID is not App Attest's")
        }
        guard environments.contains(environment) else {
            throw AppAttestError(.environmentMismatch, "keys made in \(environment.rawValue) are not accepted here")
        }
        // 8. The credential ID is the key ID.
        guard authenticator.credentialID == keyID else {
            throw AppAttestError(.credentialIDMismatch, "the credential ID is not the key ID")
        }
        return Attestation(
            publicKey: publicKey, keyID: keyID, appID: appID, environment: environment, counter: 0,
            receipt: receipt, credentialCertificate: chain.first?.bytesValue ?? [], notBefore: leaf.notValidBefore,
            notAfter: leaf.notValidAfter)
    }

    /// The receipt of a verified attestation, checked (Apple-signed at `time`) and bound to it: an
    /// `ATTEST` receipt for the same App ID naming the same credential certificate (the receipt is
    /// outside the nonce, so one from another attestation could be swapped in).
    ///
    /// - Throws: ``AppAttestError`` `receipt-invalid`.
    public func verifyReceipt(of attestation: Attestation, at time: Date = Date()) async throws -> AppAttestReceipt {
        let receipt = try await AppAttestReceipt.verify(attestation.receipt, at: time, root: receiptRoot)
        guard receipt.type == "ATTEST", receipt.appID == attestation.appID,
            receipt.attestedCertificate == attestation.credentialCertificate
        else {
            throw AppAttestError(.receiptInvalid, "the receipt is not this attestation's")
        }
        return receipt
    }

    // MARK: Assertion

    /// What a verified assertion establishes.
    public struct Assertion: Sendable, Hashable {
        /// The assertion's counter, to store as the key's new counter.
        public let counter: UInt32
        /// The App ID it was made for.
        public let appID: String
    }

    /// Verifies an assertion made by `DCAppAttestService.generateAssertion(_:clientDataHash:)` over
    /// SHA-256 of `clientData`.
    ///
    /// Record ``Assertion/counter`` atomically, only if it is still greater than the stored one
    /// (`AppAttestStore.advance(keyID:to:)` in SigilServer): two assertions checked at once against one stored
    /// counter both pass here.
    ///
    /// - Parameters:
    ///   - object: the assertion object (CBOR: `signature`, `authenticatorData`).
    ///   - clientData: the data the app asserted (Sigil: the request's signature base).
    ///   - publicKey: the attested key stored for the key ID.
    ///   - previousCounter: the counter stored for the key.
    public func verifyAssertion(
        _ object: [UInt8], clientData: [UInt8], publicKey: P256.Signing.PublicKey, previousCounter: UInt32
    ) throws -> Assertion {
        try verifyAssertion(
            object, clientDataHash: Array(SHA256.hash(data: clientData)), publicKey: publicKey,
            previousCounter: previousCounter)
    }

    /// Verifies an assertion over a client data hash the caller computed.
    public func verifyAssertion(
        _ object: [UInt8], clientDataHash: [UInt8], publicKey: P256.Signing.PublicKey, previousCounter: UInt32
    ) throws -> Assertion {
        guard let assertion = AppAttestAssertion(object) else {
            throw AppAttestError(.malformed, "the assertion is not a CBOR map of signature and authenticatorData")
        }
        // The signature is ECDSA P-256 with SHA-256 over nonce = SHA-256(authenticatorData ‖ clientDataHash).
        guard assertion.isValid(clientDataHash: clientDataHash, key: publicKey) else {
            throw AppAttestError(.invalidSignature, "the assertion's signature does not verify with the attested key")
        }
        let appID = try self.appID(forRPIDHash: assertion.rpIDHash)
        guard assertion.counter > previousCounter else {
            throw AppAttestError(
                .counterReplayed, "the counter \(assertion.counter) is not above the stored \(previousCounter)")
        }
        return Assertion(counter: assertion.counter, appID: appID)
    }

    // MARK: Steps

    /// The accepted App ID whose SHA-256 is `rpIDHash`.
    public func appID(forRPIDHash rpIDHash: [UInt8]) throws -> String {
        guard let appID = appIDs.first(where: { Array(SHA256.hash(data: Array($0.utf8))) == rpIDHash }) else {
            throw AppAttestError(.appIDMismatch, "rpIdHash is not the hash of an accepted App ID")
        }
        return appID
    }

    static func cbor(_ bytes: [UInt8], _ what: String) throws -> CBOR {
        do {
            return try CBOR.decode(bytes)
        } catch let error as CBOR.DecodingError {
            throw AppAttestError(.malformed, "the \(what) is not CBOR: \(error)")
        }
    }

    /// Validates `leaf` through `intermediates` to `root` at `time` (RFC 5280): a certificate out of
    /// its validity is `certificate-expired`, any other failure `certificate-chain`.
    static func validate(leaf: Certificate, intermediates: [Certificate], root: Certificate, at time: Date)
        async throws
    {
        for certificate in [leaf] + intermediates
        where time < certificate.notValidBefore
            || time > certificate.notValidAfter
        {
            throw AppAttestError(
                .certificateExpired, "\(certificate.subject) is not valid at \(time.formatted(.iso8601))")
        }
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(validationTime: time)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
        guard case .validCertificate = result else {
            throw AppAttestError(.certificateChain, "x5c does not chain to the trusted root")
        }
    }

    /// The nonce in the credential certificate: `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    static func nonceExtension(of certificate: Certificate) throws -> [UInt8] {
        guard let value = certificate.extensions[oid: nonceExtensionOID]?.value,
            let node = try? DER.parse(value),
            case .constructed(let outer) = node.content,
            let tagged = outer.first(where: {
                $0.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)
            }),
            case .constructed(let inner) = tagged.content,
            let octets = Array(inner).first, octets.identifier == .octetString,
            case .primitive(let nonce) = octets.content, nonce.count == 32
        else {
            throw AppAttestError(.nonceExtensionInvalid, "the credential certificate has no readable nonce extension")
        }
        return Array(nonce)
    }
}
