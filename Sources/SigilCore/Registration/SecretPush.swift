import Foundation

extension Registration {
    /// A sealed secret delivered by push (APNs) instead of in the answer to a request:
    ///
    /// ```json
    /// {"aps":{"content-available":1},"sigil-secret":"…","sigil-key-id":"hmac-…","sigil-device-id":"dev-…",
    ///  "sigil-issued-at":1708300800,"sigil-signature":"…"}
    /// ```
    ///
    /// `sigil-secret` is the sealed secret of PROTOCOL.md section 6.4 (standard base64), which only the
    /// device's X-Wing key opens. Sealing proves nothing about the sender (anyone may seal to a public
    /// key), so the server's response key signs ``signedMessage(deviceID:keyID:issuedAt:sealedSecret:)``,
    /// and the device accepts only a push for itself whose signature verifies with the response key it
    /// learnt at enrollment and that is newer than the secret it holds.
    public struct SecretPush: Sendable, Hashable {
        /// The most an APNs payload may hold, in bytes.
        public static let apnsPayloadLimit = 4096

        /// The secret's key ID.
        public var keyId: String
        /// The device it is for.
        public var deviceId: String
        /// The sealed secret, standard base64.
        public var sealedSecret: String
        /// When the server issued it (Unix seconds).
        public var issuedAt: Int64
        /// base64url of the response key's sigil-v1 signature over ``signedMessage``.
        public var signature: String

        /// Creates a push.
        public init(keyId: String, deviceId: String, sealedSecret: String, issuedAt: Int64, signature: String) {
            self.keyId = keyId
            self.deviceId = deviceId
            self.sealedSecret = sealedSecret
            self.issuedAt = issuedAt
            self.signature = signature
        }

        /// The push of a sealed `issued` secret to the device `deviceID`, signed by `signer` (the
        /// server's response key).
        ///
        /// - Throws: ``SigilInputError`` for a secret in the clear or a payload over APNs' limit.
        public init(_ issued: IssuedSecret, deviceID: String, issuedAt: Int64, signer: any SignatureProvider) throws {
            guard let sealed = issued.sealedSecret, issued.secret == nil else {
                throw SigilInputError("only a sealed secret may be pushed: the device must register a sealing key")
            }
            let message = Self.signedMessage(
                deviceID: deviceID, keyID: issued.keyId, issuedAt: issuedAt, sealedSecret: sealed)
            let signature = Base64URL.encode(try signer.signature(for: message, profile: .sigilV1))
            self.init(
                keyId: issued.keyId, deviceId: deviceID, sealedSecret: sealed, issuedAt: issuedAt, signature: signature)
            guard try payload().count <= Self.apnsPayloadLimit else {
                throw SigilInputError(
                    "the push payload is over APNs' \(Self.apnsPayloadLimit) bytes (the response key's signature is too large)"
                )
            }
        }

        /// `"sigil pushed secret v1" 0x00 deviceId 0x00 keyId 0x00 issuedAt 0x00 sealedSecret`, the
        /// base64 as sent.
        public static func signedMessage(deviceID: String, keyID: String, issuedAt: Int64, sealedSecret: String)
            -> [UInt8]
        {
            var message = Array("sigil pushed secret v1".utf8)
            for field in [deviceID, keyID, String(issuedAt), sealedSecret] { message += [0] + Array(field.utf8) }
            return message
        }

        /// The APNs payload: a background notification carrying the push.
        public func payload() throws -> [UInt8] {
            try Registration.json(
                Payload(
                    aps: .init(contentAvailable: 1), secret: sealedSecret, keyId: keyId, deviceId: deviceId,
                    issuedAt: issuedAt, signature: signature))
        }

        /// The push in an APNs payload (the notification's JSON).
        ///
        /// - Throws: ``SigilInputError`` when the payload is larger than APNs allows or holds no push.
        public init(payload: [UInt8]) throws {
            guard payload.count <= Self.apnsPayloadLimit else {
                throw SigilInputError("the push payload is over \(Self.apnsPayloadLimit) bytes")
            }
            let decoded: Payload
            do {
                decoded = try JSONDecoder().decode(Payload.self, from: Data(payload))
            } catch {
                throw SigilInputError("the notification holds no Sigil secret")
            }
            self.init(
                keyId: decoded.keyId, deviceId: decoded.deviceId, sealedSecret: decoded.secret,
                issuedAt: decoded.issuedAt, signature: decoded.signature)
        }

        /// The sealed secret, once the push's signature verified with `responseKey`; open it with
        /// ``IssuedSecret/secretBytes(openingWith:)``.
        ///
        /// - Throws: `invalid-signature` when it was not signed by `responseKey`.
        public func issuedSecret(verifiedWith responseKey: VerificationKey) throws -> IssuedSecret {
            let message = Self.signedMessage(
                deviceID: deviceId, keyID: keyId, issuedAt: issuedAt, sealedSecret: sealedSecret)
            guard let signature = Base64URL.decode(signature),
                responseKey.isValidSignature(signature, for: message, profile: .sigilV1)
            else {
                throw SigilError(.invalidSignature, "the pushed secret is not signed by the server's response key")
            }
            return IssuedSecret(
                keyId: keyId, alg: SignatureAlgorithm.hmacSHA256.rawValue, secret: nil, sealedSecret: sealedSecret,
                issuedAt: issuedAt, previousKeysValidUntil: nil)
        }

        struct Payload: Codable {
            struct APS: Codable {
                var contentAvailable: Int
                enum CodingKeys: String, CodingKey { case contentAvailable = "content-available" }
            }
            var aps: APS
            var secret: String
            var keyId: String
            var deviceId: String
            var issuedAt: Int64
            var signature: String

            enum CodingKeys: String, CodingKey {
                case aps
                case secret = "sigil-secret"
                case keyId = "sigil-key-id"
                case deviceId = "sigil-device-id"
                case issuedAt = "sigil-issued-at"
                case signature = "sigil-signature"
            }
        }
    }
}
