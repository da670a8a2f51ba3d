import Crypto
import Foundation

/// The registration API's wire messages (README, "Registration API"), declared once for both ends: the
/// device encodes what the server decodes and the reverse. Field names are the JSON keys.
public enum Registration {
    /// `message` as JSON, the way both ends send it: keys sorted, `/` not escaped.
    public static func json(_ message: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(message))
    }

    /// The routes, relative to the server's root.
    public enum Path {
        /// `GET`: the ``Discovery`` document.
        public static let discovery = "/.well-known/sigil"
        /// `POST` a ``KeySubmission``: registers a device.
        public static let devices = "/v1/devices"
        /// `POST` a ``Rotation``: registers the device's next key.
        public static let rotate = "/v1/keys/rotate"
        /// `POST` a ``CertificateRequest``: issues a client certificate.
        public static let certificates = "/v1/certificates"
        /// `POST`, unsigned: an ``AttestationChallenge`` for App Attest enrollment.
        public static let attestChallenge = "/v1/attest/challenge"
        /// `GET`: the server's response keys as a signed JWKS (the HTTP message signatures directory).
        public static let keyDirectory = "/.well-known/http-message-signatures-directory"
        /// The `tag` of the directory's signatures.
        public static let keyDirectoryTag = "http-message-signatures-directory"

        /// `POST`: a fresh HMAC secret for the device of `keyID`.
        public static func secret(keyID: String) -> String { "/v1/devices/\(keyID)/secret" }
        /// `DELETE`: revokes the device of `keyID`.
        public static func device(keyID: String) -> String { "/v1/devices/\(keyID)" }
    }

    /// What `GET /.well-known/sigil` says.
    public struct Discovery: Codable, Sendable, Hashable {
        /// A response-signing key.
        public struct Key: Codable, Sendable, Hashable {
            /// Its key ID.
            public var keyId: String
            /// Its algorithm's wire name.
            public var alg: String
            /// SubjectPublicKeyInfo PEM.
            public var publicKey: String
            /// `current` (signs answers now) or `next` (published ahead of a promotion); absent from
            /// servers whose key never rotates, which means current.
            public var state: String?
            /// Its RFC 7638 JWK thumbprint, the `kid` of the signed key directory.
            public var jwkThumbprint: String?

            /// Creates a key entry.
            public init(
                keyId: String, alg: String, publicKey: String, state: String? = nil, jwkThumbprint: String? = nil
            ) {
                self.keyId = keyId
                self.alg = alg
                self.publicKey = publicKey
                self.state = state
                self.jwkThumbprint = jwkThumbprint
            }
        }
        /// A key request bodies may be sealed to (PROTOCOL.md section 6.1).
        public struct SealingKey: Codable, Sendable, Hashable {
            /// Its key ID.
            public var keyId: String
            /// `x-wing`.
            public var kem: String
            /// The 1216-byte public key, standard base64.
            public var publicKey: String

            /// Creates a key entry.
            public init(keyId: String, kem: String, publicKey: String) {
                self.keyId = keyId
                self.kem = kem
                self.publicKey = publicKey
            }

            /// The entry of `key`.
            public init(_ key: SealingPublicKey) {
                self.init(keyId: key.keyID, kem: Sealing.kemName, publicKey: Base64.encode(key.rawRepresentation))
            }

            /// The key, checked against its ID.
            public func key() throws -> SealingPublicKey {
                guard kem == Sealing.kemName, let raw = Base64.decode(publicKey) else {
                    throw SigilInputError("sealing key \(keyId) is not an X-Wing key in base64")
                }
                let key = try SealingPublicKey(rawRepresentation: raw)
                guard key.keyID == keyId else { throw SigilInputError("sealing key \(keyId) has another key's ID") }
                return key
            }
        }
        /// The keys the server signs responses with.
        public var responseKeys: [Key]
        /// The keys request bodies may be sealed to, the current one first; absent when the server
        /// opens no sealed bodies.
        public var sealingKeys: [SealingKey]?
        /// `true` when the server seals a device's secrets to the key it registers (`sealingKey`,
        /// PROTOCOL.md section 6.4); a device never sends one to a server that does not say so, which
        /// would ignore it and answer with the secret in the clear.
        public var sealedSecrets: Bool?
        /// The accepted profiles.
        public var profiles: [String]
        /// The algorithms the server verifies.
        public var algorithms: [String]
        /// The accepted window, in seconds.
        public var maxSkew: Int64
        /// The server's time when it answered (unsigned: it never sets a clock).
        public var serverTime: Int64
        /// The SPKI pins of the server's TLS certificate chain.
        public var pins: [String]
        /// Pins of keys the server may move to.
        public var backupPins: [String]
        /// Path prefixes whose routes take only requests signed by an App Attest assertion
        /// (`sigil serve --require-assertion`); an App Attest device signs those with its App Attest
        /// key, one at a time, and the rest with its attested key. Absent: none.
        public var assertionPaths: [String]?
        /// The tag of the keys this document lists (``Registration/keysTagField``), signed with it: a
        /// client keeps it as the tag it learnt at, so an answer tagged otherwise (a newer rotation, or
        /// a replica ahead of the one that answered this) has it read discovery again.
        public var keysTag: String?

        /// Creates a discovery document.
        public init(
            responseKeys: [Key],
            profiles: [String],
            algorithms: [String],
            maxSkew: Int64,
            serverTime: Int64,
            pins: [String],
            backupPins: [String]
        ) {
            self.responseKeys = responseKeys
            self.profiles = profiles
            self.algorithms = algorithms
            self.maxSkew = maxSkew
            self.serverTime = serverTime
            self.pins = pins
            self.backupPins = backupPins
        }
    }

    /// A one-time challenge for App Attest enrollment (`POST /v1/attest/challenge`).
    public struct AttestationChallenge: Codable, Sendable, Hashable {
        /// The challenge; the app attests its key with `clientDataHash` = SHA-256 of its UTF-8 bytes.
        public var challenge: String
        /// Until when it may be used (Unix seconds).
        public var expiresAt: Int64

        /// Creates a challenge.
        public init(challenge: String, expiresAt: Int64) {
            self.challenge = challenge
            self.expiresAt = expiresAt
        }
    }

    /// An App Attest attestation, which registers its key instead of a bootstrap token or JWT.
    public struct Attestation: Codable, Sendable, Hashable {
        /// The App Attest key ID (`DCAppAttestService.generateKey`), standard base64.
        public var keyId: String
        /// The attestation object, standard base64.
        public var attestation: String
        /// The challenge it was made for (``AttestationChallenge``).
        public var challenge: String

        /// Creates the evidence.
        public init(keyId: String, attestation: String, challenge: String) {
            self.keyId = keyId
            self.attestation = attestation
            self.challenge = challenge
        }
    }

    /// The field every signed answer of a server whose keys rotate carries: a short tag of the keys it
    /// holds (response, sealing, TLS), which each rotation and promotion changes. A client that sees a
    /// tag other than the one it last learnt from re-reads the signed discovery (PROTOCOL.md section
    /// 8.1); the tag itself is never trusted for anything else.
    public static let keysTagField = "Sigil-Keys"

    /// What an App Attest attestation is made for (`DCAppAttestService.attestKey`'s `clientDataHash`),
    /// the one rule both ends compute it by (PROTOCOL.md section 7).
    public enum AttestedKey {
        /// The string an attestation that vouches for a key beside it commits to.
        public static let label = "sigil-appattest-key-v1"

        /// SHA-256 of the challenge's UTF-8 bytes when the attestation registers the App Attest key
        /// itself (`apple-appattest`); SHA-256 of `sigil-appattest-key-v1\n<challenge>\n<key ID>` when
        /// it vouches for the key (its section 1 key ID) the registration's `publicKey` names, so that
        /// the attestation admits exactly that key.
        public static func clientDataHash(challenge: String, vouchingFor keyID: String? = nil) -> [UInt8] {
            let message = keyID.map { "\(label)\n\(challenge)\n\($0)" } ?? challenge
            return Array(SHA256.hash(data: Array(message.utf8)))
        }
    }

    /// A public key offered for registration (`POST /v1/devices`), signed by the key itself.
    public struct KeySubmission: Codable, Sendable, Hashable {
        /// The algorithm's wire name.
        public var alg: String
        /// SubjectPublicKeyInfo, PEM or standard base64 of the DER; empty for `apple-appattest`, whose
        /// key ``attestation`` carries.
        public var publicKey: String
        /// For `apple-appattest`: the attestation of the key, which admits the device in place of a
        /// bootstrap token or JWT.
        public var attestation: Attestation?
        /// For an Android Keystore key (`ecdsa-p256-sha256`): its attestation certificate chain, leaf
        /// first, each standard base64 of the DER, made with the server's challenge
        /// (`setAttestationChallenge` with the challenge's UTF-8); it admits the device in place of a
        /// bootstrap token or JWT.
        public var androidKeyAttestation: [String]?
        /// The device's own X-Wing key, in the shape of a discovery entry: the device's HMAC secrets
        /// then come back sealed to it (PROTOCOL.md section 6.4), never in the clear.
        public var sealingKey: Discovery.SealingKey?
        /// Lowercase hex of SHA-256 over the request's `Authorization` value as sent: the body is
        /// signed and that field is not (sigil-v1 cannot cover it), so this binds the credential to
        /// the registration. A proxy that puts its own enrollment JWT in place of the device's (to tie
        /// the device to its account) no longer matches.
        public var credential: String?

        /// The `credential` of an `Authorization` value.
        public static func credentialHash(of authorization: String) -> String {
            Hex.encode(Array(SHA256.hash(data: Array(authorization.utf8))))
        }

        /// Creates a submission.
        public init(alg: String, publicKey: String, sealingKey: Discovery.SealingKey? = nil) {
            self.alg = alg
            self.publicKey = publicKey
            self.sealingKey = sealingKey
        }

        /// The submission of `key`, with the device's sealing key if it has one.
        ///
        /// - Throws: ``SigilInputError`` for an HMAC secret, which is issued, never registered.
        public init(_ key: VerificationKey, sealingKey: SealingPublicKey? = nil) throws {
            guard let pem = KeyFile.publicKeyFile(for: key) else {
                throw SigilInputError("only a public key can be registered")
            }
            self.init(
                alg: key.algorithm.rawValue, publicKey: pem, sealingKey: sealingKey.map(Discovery.SealingKey.init))
        }
    }

    /// The answer to a registration or a rotation.
    public struct Registered: Codable, Sendable, Hashable {
        /// The key ID the server registered.
        public var keyId: String
        /// The device it belongs to.
        public var deviceId: String
        /// The key's algorithm.
        public var alg: String
        /// The user, when enrollment named one (a JWT's `sub`).
        public var userId: String?

        /// Creates the answer.
        public init(keyId: String, deviceId: String, alg: String, userId: String?) {
            self.keyId = keyId
            self.deviceId = deviceId
            self.alg = alg
            self.userId = userId
        }
    }

    /// A per-device HMAC secret (`POST /v1/devices/{keyId}/secret`): in the clear, or sealed to the
    /// device's X-Wing key when the device registered one (PROTOCOL.md section 6.4).
    ///
    /// - Warning: ``secret`` authenticates as the device; never log it.
    public struct IssuedSecret: Codable, Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// The secret's key ID.
        public var keyId: String
        /// `hmac-sha256`.
        public var alg: String
        /// The standard base64 of the 32-byte secret, when it is sent in the clear.
        public var secret: String?
        /// The standard base64 of `enc || ciphertext`, the secret sealed to the device's X-Wing key.
        public var sealedSecret: String?
        /// When the server issued it (Unix seconds), so a device can refuse an older one pushed later.
        public var issuedAt: Int64?
        /// Until when the device's earlier secrets stay valid, if it had any.
        public var previousKeysValidUntil: Int64?

        /// Creates the answer: exactly one of `secret` and `sealedSecret`.
        public init(
            keyId: String, alg: String, secret: String?, sealedSecret: String? = nil, issuedAt: Int64? = nil,
            previousKeysValidUntil: Int64?
        ) {
            self.keyId = keyId
            self.alg = alg
            self.secret = secret
            self.sealedSecret = sealedSecret
            self.issuedAt = issuedAt
            self.previousKeysValidUntil = previousKeysValidUntil
        }

        /// The secret's bytes, opened with `sealingKey` when it is sealed.
        ///
        /// - Parameter sealingKey: the device's X-Wing key, when it registered one. A device that did
        ///   refuses a secret sent in the clear: it may have been read on the way.
        /// - Throws: ``SigilInputError`` when it is not base64 of at least 32 bytes, is sealed and no
        ///   key is given, or is in the clear and a key is; `sealed-body-invalid` when it does not open
        ///   with that key for this key ID.
        public func secretBytes(openingWith sealingKey: SealingPrivateKey?) throws -> [UInt8] {
            let bytes: [UInt8]?
            switch (secret, sealedSecret, sealingKey) {
            case (let secret?, nil, nil):
                bytes = Base64.decode(secret)
            case (nil, let sealed?, let key?):
                guard let sealed = Base64.decode(sealed) else {
                    throw SigilInputError("the sealed secret is not base64")
                }
                bytes = try Sealing.openSecret(sealed, keyID: keyId, with: key)
            case (nil, _?, nil):
                throw SigilInputError("the secret is sealed: open it with the device's sealing key")
            case (_?, nil, _?):
                throw SigilInputError("the secret came in the clear although this device registered a sealing key")
            default:
                throw SigilInputError("the answer must hold exactly one of secret and sealedSecret")
            }
            guard let bytes, bytes.count >= 32 else {
                throw SigilInputError("the issued secret is not base64 of 32 bytes or more")
            }
            return bytes
        }

        /// The bytes of a secret sent in the clear.
        ///
        /// - Throws: ``SigilInputError`` when it is sealed or not base64 of at least 32 bytes.
        public var secretBytes: [UInt8] { get throws { try secretBytes(openingWith: nil) } }

        /// A secret sent in the clear as a signing key.
        public var signingKey: SigningKey { get throws { try SigningKey(hmacSecret: try secretBytes) } }

        /// Names the key ID only.
        public var description: String { "IssuedSecret(\(keyId))" }

        /// Shows the key ID only, so `dump` and debuggers never print the secret.
        public var customMirror: Mirror { Mirror(self, children: ["keyId": keyId]) }
    }

    /// The next key of a device (`POST /v1/keys/rotate`, signed by the current key).
    public struct Rotation: Codable, Sendable, Hashable {
        /// The next key's algorithm.
        public var alg: String
        /// The next key, as in ``KeySubmission``.
        public var publicKey: String
        /// base64url of the next key's sigil-v1 signature over ``RotationProof/message(currentKeyID:newKeyID:nonce:)``.
        public var proof: String
        /// A new X-Wing key for the device's sealed secrets, replacing the one it has; absent keeps it.
        public var sealingKey: Discovery.SealingKey?

        /// Creates a rotation.
        public init(alg: String, publicKey: String, proof: String, sealingKey: Discovery.SealingKey? = nil) {
            self.alg = alg
            self.publicKey = publicKey
            self.proof = proof
            self.sealingKey = sealingKey
        }

        /// The rotation from `currentKeyID` to `next` on the server whose response key is
        /// `serverKeyID`, its proof signed by `next` for the request nonce `nonce`, and the device's new
        /// sealing key if it moves to one.
        public init(
            from currentKeyID: String, to next: any SignatureProvider, serverKeyID: String, nonce: String,
            sealingKey: SealingPublicKey? = nil
        ) throws {
            guard let key = next.publicKey, let nextID = key.derivedKeyID else {
                throw SigilInputError("only a key pair can be rotated to")
            }
            let submission = try KeySubmission(key, sealingKey: sealingKey)
            let message = RotationProof.message(
                serverKeyID: serverKeyID, currentKeyID: currentKeyID, newKeyID: nextID, nonce: nonce)
            self.init(
                alg: submission.alg,
                publicKey: submission.publicKey,
                proof: Base64URL.encode(try next.signature(for: message, profile: .sigilV1)),
                sealingKey: submission.sealingKey
            )
        }

        /// The submitted key.
        public var submission: KeySubmission { KeySubmission(alg: alg, publicKey: publicKey, sealingKey: sealingKey) }
    }

    /// A certificate signing request (`POST /v1/certificates`).
    public struct CertificateRequest: Codable, Sendable, Hashable {
        /// The PKCS#10 CSR, PEM, signed by the key that signs the request.
        public var csr: String

        /// Creates the request.
        public init(csr: String) { self.csr = csr }
    }

    /// A client certificate issued for the device's key.
    public struct IssuedCertificate: Codable, Sendable, Hashable {
        /// The client certificate, PEM.
        public var certificate: String
        /// The issuing CA's certificate, PEM.
        public var caCertificate: String

        /// Creates the answer.
        public init(certificate: String, caCertificate: String) {
            self.certificate = certificate
            self.caCertificate = caCertificate
        }
    }
}

extension Registration.Discovery.Key {
    /// `key` as discovery lists it, under `keyID`; `nil` for a key with no public form (a secret).
    @_spi(Sigil) public init?(keyID: String, key: VerificationKey, state: String?) {
        guard let pem = KeyFile.publicKeyFile(for: key) else { return nil }
        self.init(
            keyId: keyID, alg: key.algorithm.rawValue, publicKey: pem, state: state, jwkThumbprint: key.jwkThumbprint)
    }
}
