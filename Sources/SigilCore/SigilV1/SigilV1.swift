import Crypto
import HTTPTypes

/// The sigil-v1 header profile (PROTOCOL.md section 2).
public enum SigilV1 {
    /// `X-Timestamp`.
    public static let timestampField = HTTPField.Name("X-Timestamp")!
    /// `X-Nonce`.
    public static let nonceField = HTTPField.Name("X-Nonce")!
    /// `X-Key-ID`.
    public static let keyIDField = HTTPField.Name("X-Key-ID")!
    /// `X-Signature`.
    public static let signatureField = HTTPField.Name("X-Signature")!

    /// The longest `X-Signature` accepted: the base64url of an ML-DSA-87 signature is 6,170 characters.
    static let maximumSignatureLength = 8192

    /// The four signature headers of a request, parsed and checked (section 2.6 step 1).
    public struct RequestHeaders: Sendable, Hashable {
        /// The `X-Timestamp` text, as signed.
        public let timestampText: String
        /// The timestamp in Unix seconds.
        public let timestamp: Int64
        /// The nonce.
        public let nonce: String
        /// The key ID.
        public let keyID: String
        /// The decoded signature bytes.
        public let signature: [UInt8]
        /// The `X-Signature` text as sent, which an answer's base names (section 2.7).
        public let signatureText: String

        /// The request these headers name, as an answer binds to it.
        public var answered: AnsweredRequest { AnsweredRequest(keyID: keyID, nonce: nonce, signature: signatureText) }
    }

    /// Parses and checks the four headers.
    ///
    /// - Throws: `missing-signature` when none is present; `malformed-signature` when some are
    ///   missing, repeated or ill-formed.
    public static func parseRequestHeaders(_ fields: HTTPFields) throws -> RequestHeaders {
        // One pass over the fields; each of the four must occur exactly once.
        var timestampText: String?
        var nonce: String?
        var keyID: String?
        var signatureText: String?
        var repeated: String?
        var seen = 0
        for field in fields where field.name.canonicalName.utf8.first == UInt8(ascii: "x") {
            switch field.name {
            case timestampField:
                if timestampText != nil { repeated = "X-Timestamp" }
                timestampText = field.value
            case nonceField:
                if nonce != nil { repeated = "X-Nonce" }
                nonce = field.value
            case keyIDField:
                if keyID != nil { repeated = "X-Key-ID" }
                keyID = field.value
            case signatureField:
                if signatureText != nil { repeated = "X-Signature" }
                signatureText = field.value
            default:
                continue
            }
            seen += 1
        }
        if seen == 0 {
            throw SigilError(.missingSignature, "the request carries no X-Timestamp, X-Nonce, X-Key-ID or X-Signature")
        }
        if let repeated { throw SigilError(.malformedSignature, "\(repeated) is repeated") }
        guard let timestampText, let nonce, let keyID, let signatureText else {
            let missing =
                [
                    ("X-Timestamp", timestampText), ("X-Nonce", nonce), ("X-Key-ID", keyID),
                    ("X-Signature", signatureText),
                ].first { $0.1 == nil }?.0 ?? "a signature header"
            throw SigilError(.malformedSignature, "\(missing) is missing")
        }
        guard let timestamp = parseTimestamp(timestampText) else {
            throw SigilError(.malformedSignature, "X-Timestamp must be 1 to 12 decimal digits")
        }
        guard isValidNonce(nonce) else {
            throw SigilError(.malformedSignature, "X-Nonce must match [A-Za-z0-9._~-]{16,128}")
        }
        guard KeyID.isValid(keyID) else {
            throw SigilError(.malformedSignature, "X-Key-ID must match [A-Za-z0-9._~-]{1,128}")
        }
        guard !signatureText.isEmpty, signatureText.utf8.count <= maximumSignatureLength,
            let signature = Base64URL.decode(signatureText), !signature.isEmpty
        else {
            throw SigilError(.malformedSignature, "X-Signature must be base64url without padding")
        }
        return RequestHeaders(
            timestampText: timestampText,
            timestamp: timestamp,
            nonce: nonce,
            keyID: keyID,
            signature: signature,
            signatureText: signatureText
        )
    }

    /// Parses `[0-9]{1,12}`.
    public static func parseTimestamp(_ text: String) -> Int64? {
        let utf8 = text.utf8
        guard (1...12).contains(utf8.count) else { return nil }
        var value: Int64 = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Whether `nonce` matches `[A-Za-z0-9._~-]{16,128}`.
    public static func isValidNonce(_ nonce: String) -> Bool {
        var nonce = nonce
        return nonce.withUTF8 { utf8 in
            guard (16...128).contains(utf8.count) else { return false }
            for byte in utf8 where !PercentEncoding.isUnreserved(byte) { return false }
            return true
        }
    }

    /// The request signature base of section 2.2.
    public static func requestBase(
        timestamp: String,
        nonce: String,
        method: String,
        canonicalTarget: [UInt8],
        bodyHash: [UInt8]
    ) -> [UInt8] {
        var base = [UInt8]()
        base.reserveCapacity(timestamp.utf8.count + nonce.utf8.count + method.utf8.count + canonicalTarget.count + 70)
        base += timestamp.utf8
        base.append(0x0A)
        base += nonce.utf8
        base.append(0x0A)
        base += method.utf8
        base.append(0x0A)
        base += canonicalTarget
        base.append(0x0A)
        base += bodyHash
        return base
    }

    /// The request signature base of a request and its body. A body with a `Content-Encoding` (a
    /// sealed body, section 6.2) is hashed raw behind its coding (section 2.5), so the coding is signed.
    public static func requestBase(
        for request: HTTPRequest,
        body: [UInt8],
        timestamp: String,
        nonce: String,
        canonicalJSON: Bool = true
    ) -> [UInt8] {
        requestBase(
            timestamp: timestamp,
            nonce: nonce,
            method: request.method.rawValue,
            canonicalTarget: CanonicalTarget.canonicalBytes(Array((request.path ?? "").utf8)),
            bodyHash: BodyHash.bytes(
                body, contentType: request.headerFields.value(.contentType),
                contentEncoding: request.headerFields[.contentEncoding], canonicalJSON: canonicalJSON)
        )
    }

    /// The response signature base of section 2.7: bound to one request by its key ID, nonce and
    /// signature (a nonce is unique per key only).
    public static func responseBase(
        timestamp: String,
        answering request: AnsweredRequest,
        status: Int,
        bodyHash: [UInt8]
    ) -> [UInt8] {
        var base = [UInt8]()
        base += timestamp.utf8
        base.append(0x0A)
        base += request.keyID.utf8
        base.append(0x0A)
        base += request.nonce.utf8
        base.append(0x0A)
        base += SHA256.hash(data: Array(request.signature.utf8)).withUnsafeBytes(Hex.bytes)
        base.append(0x0A)
        base += String(status).utf8
        base.append(0x0A)
        base += bodyHash
        return base
    }

    /// The response signature base of a response and its body.
    public static func responseBase(
        for response: HTTPResponse,
        body: [UInt8],
        timestamp: String,
        answering request: AnsweredRequest,
        canonicalJSON: Bool = true
    ) -> [UInt8] {
        responseBase(
            timestamp: timestamp,
            answering: request,
            status: response.status.code,
            bodyHash: BodyHash.bytes(
                body, contentType: response.headerFields.value(.contentType),
                contentEncoding: response.headerFields[.contentEncoding], canonicalJSON: canonicalJSON)
        )
    }

    /// What a sigil-v1 answer names of the request it answers (section 2.7).
    public struct AnsweredRequest: Sendable, Hashable {
        /// The request's `X-Key-ID`.
        public let keyID: String
        /// The request's `X-Nonce`.
        public let nonce: String
        /// The request's `X-Signature` value, exactly as sent.
        public let signature: String

        /// Names a request by its key ID, nonce and `X-Signature` text as sent.
        public init(keyID: String, nonce: String, signature: String) {
            self.keyID = keyID
            self.nonce = nonce
            self.signature = signature
        }

        /// The request a signed request's headers name (the four fields of ``sign(_:body:signer:keyID:timestamp:nonce:canonicalJSON:)``
        /// or a received request's), or `nil` when they do not each occur once.
        public init?(_ fields: HTTPFields) {
            let keyIDs = fields[values: SigilV1.keyIDField]
            let nonces = fields[values: SigilV1.nonceField]
            let signatures = fields[values: SigilV1.signatureField]
            guard keyIDs.count == 1, nonces.count == 1, signatures.count == 1 else { return nil }
            self.init(keyID: keyIDs[0], nonce: nonces[0], signature: signatures[0])
        }
    }

    /// Signs a request: returns the four headers to add.
    ///
    /// - Parameters:
    ///   - request: the request; its method, path and Content-Type are signed.
    ///   - body: the exact body bytes that will be sent.
    ///   - signer: the key.
    ///   - keyID: the key ID the server knows the key by.
    ///   - timestamp: Unix seconds, server-corrected.
    ///   - nonce: a fresh nonce matching `[A-Za-z0-9._~-]{16,128}`.
    public static func sign(
        _ request: HTTPRequest,
        body: [UInt8],
        signer: some SignatureProvider,
        keyID: String,
        timestamp: Int64,
        nonce: String,
        canonicalJSON: Bool = true
    ) throws -> HTTPFields {
        try sign(
            request,
            bodyHash: BodyHash.bytes(
                body, contentType: request.headerFields.value(.contentType),
                contentEncoding: request.headerFields[.contentEncoding], canonicalJSON: canonicalJSON),
            signer: signer, keyID: keyID, timestamp: timestamp, nonce: nonce)
    }

    /// ``sign(_:body:signer:keyID:timestamp:nonce:canonicalJSON:)`` with the body's body-hash computed
    /// already (a body streamed from a file: ``BodyDigest/bodyHash(contentType:contentEncoding:canonicalJSON:)``).
    public static func sign(
        _ request: HTTPRequest,
        bodyHash: [UInt8],
        signer: some SignatureProvider,
        keyID: String,
        timestamp: Int64,
        nonce: String
    ) throws -> HTTPFields {
        guard KeyID.isValid(keyID) else { throw SigilInputError("key ID must match [A-Za-z0-9._~-]{1,128}") }
        guard isValidNonce(nonce) else { throw SigilInputError("nonce must match [A-Za-z0-9._~-]{16,128}") }
        guard (0...999_999_999_999).contains(timestamp) else { throw SigilInputError("timestamp out of range") }
        let timestampText = String(timestamp)
        let base = requestBase(
            timestamp: timestampText,
            nonce: nonce,
            method: request.method.rawValue,
            canonicalTarget: CanonicalTarget.canonicalBytes(Array((request.path ?? "").utf8)),
            bodyHash: bodyHash
        )
        let signature = try signer.signature(for: base, profile: .sigilV1)
        return HTTPFields([
            HTTPField(name: timestampField, value: timestampText),
            HTTPField(name: nonceField, value: nonce),
            HTTPField(name: keyIDField, value: keyID),
            HTTPField(name: signatureField, value: Base64URL.encode(signature)),
        ])
    }
}
