import HTTPTypes
@_spi(Sigil) import SigilCore

/// The server's response keys as an HTTP message signatures directory
/// (`GET /.well-known/http-message-signatures-directory`, as draft-meunier-http-message-signatures-directory
/// and Cloudflare's web-bot-auth serve it): a JWKS of the current and next response keys, each with
/// `kid` = its RFC 7638 thumbprint, `use: "sig"`, its JOSE `alg` where it has one, and `nbf`/`exp`
/// where the key has them; the answer signed once per listed key, RFC 9421, labels `sig1`, `sig2`…,
/// covering `("@authority";req)` with `created`, `expires` (five minutes later), `keyid` (the
/// thumbprint), `alg` and `tag="http-message-signatures-directory"`.
public enum KeyDirectoryDocument {
    /// The media type.
    public static let contentType = "application/http-message-signatures-directory+json"
    /// The signatures' `tag`.
    public static let tag = Registration.Path.keyDirectoryTag
    /// How long a signature of the directory is valid, in seconds.
    public static let lifetime: Int64 = 300

    /// The signed answer to `request` for the keys of `signer`.
    ///
    /// - Throws: when a key cannot sign.
    public static func answer(to request: HTTPRequest, signer: ResponseSigner, now: Int64) throws
        -> (head: HTTPResponse, body: [UInt8])
    {
        let keys = signer.directoryKeys
        var members: [String] = []
        for key in keys {
            let jwk = try JWK(key.key)
            var extra = ["use": "\"sig\""]
            if let alg = JWK.joseAlgorithm(key.key.algorithm) { extra["alg"] = "\"\(alg)\"" }
            if let nbf = key.notBefore { extra["nbf"] = String(nbf) }
            if let exp = key.expires { extra["exp"] = String(exp) }
            members.append(jwk.json(extra: extra))
        }
        let body = Array(("{\"keys\":[" + members.joined(separator: ",") + "]}").utf8)
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = contentType
        head.headerFields[.cacheControl] = "max-age=60"
        // Beyond the draft's `@authority`: the body too, so a key's signature endorses the list and a
        // client may learn the keys it names from a key it trusts (an `@authority` signature alone
        // would verify over any list a proxy put in its place).
        head.headerFields[MessageSignatures.contentDigestField] = ContentDigest.fieldValue(for: body)
        var inputs: [String] = []
        var signatures: [String] = []
        for (index, key) in keys.enumerated() {
            let input = SignatureInput(
                components: [ComponentIdentifier("@authority", parameters: [("req", .bool(true))]), .contentDigest],
                created: now, expires: now + lifetime, keyID: try JWK(key.key).thumbprint,
                algorithm: key.key.algorithm, tag: tag)
            let (inputMember, signatureMember) = try RFC9421.sign(
                RFC9421Message(response: head, answering: request), input: input, label: "sig\(index + 1)",
                signer: key.signer)
            inputs.append(inputMember)
            signatures.append(signatureMember)
        }
        if !inputs.isEmpty {
            head.headerFields[MessageSignatures.signatureInputField] = inputs.joined(separator: ", ")
            head.headerFields[MessageSignatures.signatureField] = signatures.joined(separator: ", ")
        }
        return (head, body)
    }
}

extension ResponseSigner {
    /// A response key as the key directory lists it.
    public struct DirectoryKey: Sendable {
        /// The public key.
        public let key: VerificationKey
        /// Signs with it.
        public let signer: any SignatureProvider
        /// When it starts signing answers (a next key), Unix seconds.
        public let notBefore: Int64?
        /// When it stops being accepted (a current key with a successor: the successor's activation
        /// plus the overlap), Unix seconds.
        public let expires: Int64?
    }

    /// The current and next response keys; HMAC keys are never listed.
    public var directoryKeys: [DirectoryKey] {
        guard let ring, let phase = ring.phase(.response) else {
            guard let key = publicKey, key.algorithm != .hmacSHA256 else { return [] }
            return [DirectoryKey(key: key, signer: fixedSigner, notBefore: nil, expires: nil)]
        }
        let successor = phase.next.first?.stored.activatesAt
        return ([phase.current] + phase.next).compactMap { entry in
            guard let signing = entry.signing, let key = try? signing.verificationKey else { return nil }
            let isCurrent = entry.stored.keyID == phase.current.stored.keyID
            return DirectoryKey(
                key: key, signer: signing, notBefore: isCurrent ? nil : entry.stored.activatesAt,
                expires: isCurrent ? successor.map { $0 + ring.overlap } : nil)
        }
    }
}
