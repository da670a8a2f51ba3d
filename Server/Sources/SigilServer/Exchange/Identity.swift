@_spi(Sigil) import SigilCore

/// Who sent an admitted request: every credential it carried that verified (a Sigil signature, a
/// DPoP proof and its access token, a TLS client certificate), each resolved through the key directory
/// to one device and one user (PROTOCOL.md section 13.2). The one identity every adapter hands its
/// routes and the gateway its backends.
public struct SigilIdentity: Sendable, Hashable {
    /// The verified Sigil signature: key ID, algorithm, profile, timestamp, nonce, device and user;
    /// `nil` when a DPoP proof stood in for it.
    public let request: VerifiedRequest?
    /// The verified DPoP proof and access token, when the request carried them.
    public let dpop: DPoPIdentity?
    /// The client certificate of the TLS connection, if the client presented one and the adapter reads them.
    public let clientCertificate: ClientCertificateIdentity?
    /// The server sealing key the request's body was sealed to, when it was sealed.
    public let sealedTo: String?
    /// The registered key that proved the request: the signature's, else the DPoP proof key when it is
    /// a device's registered key; `nil` for a DPoP key of an OAuth client that is no device's (named by
    /// ``DPoPIdentity/thumbprint``).
    public let keyID: String?
    /// The device every credential that names one named, if any did.
    public let deviceID: String?
    /// The user every credential named: the device's, or the access token's `sub`.
    public let userID: String?
    /// The registered key the DPoP proof key is, when it is a device's.
    public let dpopKeyID: String?
    /// The registered key the client certificate names (`urn:sigil:key:`), when it names one.
    public let certificateKeyID: String?

    /// The identity of a request its signature alone proved (a registration's own key).
    public init(request: VerifiedRequest, sealedTo: String? = nil) {
        self.init(
            request: request, dpop: nil, clientCertificate: nil, sealedTo: sealedTo,
            resolved: ResolvedCredentials(
                keyID: request.keyID, deviceID: request.deviceID, userID: request.userID, dpopKeyID: nil,
                certificateKeyID: nil))
    }

    init(
        request: VerifiedRequest?, dpop: DPoPIdentity?, clientCertificate: ClientCertificateIdentity?,
        sealedTo: String?, resolved: ResolvedCredentials
    ) {
        self.request = request
        self.dpop = dpop
        self.clientCertificate = clientCertificate
        self.sealedTo = sealedTo
        self.keyID = resolved.keyID
        self.deviceID = resolved.deviceID
        self.userID = resolved.userID
        self.dpopKeyID = resolved.dpopKeyID
        self.certificateKeyID = resolved.certificateKeyID
    }

    /// The profile that proved the request: `sigil-v1`, `rfc9421`, or `dpop` (alone).
    public var profile: String { request?.profile.rawValue ?? "dpop" }
    /// The algorithm of the signature by its Sigil name (`ecdsa-p256-sha256`), or of a DPoP proof alone
    /// by its JOSE name (`ES256`).
    public var algorithm: String { request?.algorithm.rawValue ?? dpop?.algorithm ?? "" }
    /// Whether a signature covers the body (a Sigil signature does; a DPoP proof signs none).
    public var coversBody: Bool { request != nil }
    /// Whether a signature covers the request's authority (rfc9421 `@authority`). A DPoP proof's `htu`
    /// is compared with the origin the server is configured with, when it is: nothing should be
    /// decided on the `Host` of a request proved by DPoP alone.
    public var coversAuthority: Bool { request?.coversAuthority ?? false }
    /// The user the request's device was enrolled for, for a route that serves users only.
    ///
    /// - Throws: `forbidden` for a device enrolled for no user (a bootstrap token's, an attestation's
    ///   without a login): such a route has nobody to act for.
    public func requireUser() throws -> String {
        guard let userID else { throw SigilError(.forbidden, "this route acts for a user; the device has none") }
        return userID
    }

    /// The attestation the signing key's device enrolled with (`app-attest`: App Attest vouched for the
    /// key; `android-key,…`), `nil` for a device enrolled otherwise or a request proved without a
    /// Sigil signature.
    public var attestation: String? {
        request?.algorithm == .appleAppAttest ? request?.deviceAttestation ?? "app-attest" : request?.deviceAttestation
    }
}

/// What the directory says a request's credentials name, agreed.
struct ResolvedCredentials: Sendable, Hashable {
    var keyID: String?
    var deviceID: String?
    var userID: String?
    var dpopKeyID: String?
    var certificateKeyID: String?
}

/// The one place a request's credentials are resolved and reconciled (PROTOCOL.md section 13.2):
///
/// - a Sigil signature names its key's device and user (the verifier found the key usable);
/// - a DPoP proof key that is a registered key names that key's device and user, must be usable
///   (`revoked-key`), and its token's `sub` must be that key's user when it has one
///   (`credential-mismatch`); any other proof key (an OAuth client's) names the token's `sub` alone;
/// - an access token of a user revoked at or after its `iat` less the clock skew allowed (or with no
///   `iat`) is refused (`revoked-key`);
/// - a client certificate naming a Sigil key names that key's device and user, and must be usable
///   (`revoked-key`; an unknown key is `certificate-mismatch`);
/// - a device registered without a user goes with an access token only when the token is bound to
///   that device's own key (`credential-mismatch`);
/// - every credential naming a device names the same one, and every credential naming a user names
///   the same one, else `credential-mismatch` (`certificate-mismatch` when the certificate is the odd one).
struct IdentityResolver: Sendable {
    let keys: any KeyDirectory
    let now: Int64
    /// How far an access token issuer's clock may differ from this server's, in seconds.
    let tokenSkew: Int64
    /// Whether keys of devices an App Attest debug token let in prove requests here.
    var acceptsDebugKeys = false

    /// One credential as resolved: its name in refusals, and what it names.
    struct Named {
        let credential: String
        let deviceID: String?
        let userID: String?
    }

    func resolve(
        signature: VerifiedRequest?, dpop: DPoPIdentity?, certificate: ClientCertificateIdentity?
    ) async throws -> ResolvedCredentials {
        var named: [Named] = []
        var resolved = ResolvedCredentials(keyID: signature?.keyID)
        if let signature {
            named.append(Named(credential: "signature", deviceID: signature.deviceID, userID: signature.userID))
        }
        if let dpop {
            if let key = try await lookUp({ try await keys.key(forThumbprint: dpop.thumbprint) }) {
                guard key.isUsable(at: now, acceptingDebugKeys: acceptsDebugKeys) else {
                    throw SigilError(.revokedKey, "the DPoP proof key is key \(key.keyID), which is revoked")
                }
                guard key.userID.map({ Identifiers.same($0, dpop.subject) }) ?? true else {
                    throw SigilError(
                        .credentialMismatch,
                        "the access token's sub is not the user of the device whose key \(key.keyID) made the DPoP proof"
                    )
                }
                resolved.dpopKeyID = key.keyID
                named.append(Named(credential: "DPoP proof", deviceID: key.deviceID, userID: dpop.subject))
            } else {
                named.append(Named(credential: "DPoP proof", deviceID: nil, userID: dpop.subject))
            }
            // Issued at or before the revocation, by the issuer's clock give or take the skew allowed.
            if let revokedAt = try await lookUp({ try await keys.revocationOfUser(dpop.subject) }),
                (dpop.tokenIssuedAt ?? .min) <= revokedAt + tokenSkew
            {
                throw SigilError(.revokedKey, "the access token's user was revoked after the token was issued")
            }
        }
        if let keyID = certificate?.sigilKeyID {
            guard let key = try await lookUp({ try await keys.key(for: keyID) }) else {
                throw SigilError(.certificateMismatch, "the client certificate names no registered key")
            }
            guard key.isUsable(at: now, acceptingDebugKeys: acceptsDebugKeys) else {
                throw SigilError(.revokedKey, "the client certificate names key \(key.keyID), which is revoked")
            }
            resolved.certificateKeyID = key.keyID
            named.append(Named(credential: "client certificate", deviceID: key.deviceID, userID: key.userID))
        }
        // A device registered without a user is no one's: beside an access token it speaks for the
        // token's user only when the token is bound to the device's own key (its issuer tied them);
        // beside another key's token it would lend its signature to whoever holds a token.
        if let proof = named.first(where: { $0.credential == "DPoP proof" }),
            let userless = named.first(where: { $0.deviceID != nil && $0.userID == nil }),
            !Identifiers.same(proof.deviceID, userless.deviceID)
        {
            throw SigilError(
                .credentialMismatch,
                "the \(userless.credential) names a device registered without a user: it goes with an access token only when the token is bound to the device's own key"
            )
        }
        // Compared by their bytes, as the stores compare them (``Identifiers``).
        let devices = Set(named.compactMap { $0.deviceID.map(Identifiers.Key.init) })
        let users = Set(named.compactMap { $0.userID.map(Identifiers.Key.init) })
        if devices.count > 1 || users.count > 1 {
            let certificateIsOdd =
                named.count == 2 && named.last?.credential == "client certificate" && devices.count > 1
            throw SigilError(
                certificateIsOdd ? .certificateMismatch : .credentialMismatch,
                devices.count > 1
                    ? "the request's credentials (\(named.map(\.credential).joined(separator: ", "))) name different devices"
                    : "the request's credentials (\(named.map(\.credential).joined(separator: ", "))) name different users"
            )
        }
        resolved.deviceID = named.lazy.compactMap(\.deviceID).first
        resolved.userID = named.lazy.compactMap(\.userID).first
        resolved.keyID = resolved.keyID ?? resolved.dpopKeyID
        return resolved
    }

    func lookUp<Found>(_ body: () async throws -> Found) async throws -> Found {
        do {
            return try await body()
        } catch {
            throw SigilError(.storeUnavailable, "the key directory did not answer")
        }
    }
}

/// How the server tells identifiers (user IDs, device IDs, key IDs) apart: byte for byte, as SQLite
/// and PostgreSQL compare them. Swift's `==` takes canonically equivalent strings for one (`K` and
/// U+212A, the Kelvin sign), which would let a token of one user pass for a device of another, or one
/// user's revocation be read for another. The identity resolver, the directory and its cache, the
/// operators' filters and the JWT claims checks (`aud`, `iss`: RFC 7519 §2 compares them as they are)
/// all ask here.
package enum Identifiers {
    /// Whether `left` and `right` are one identifier.
    package static func same(_ left: String, _ right: String) -> Bool {
        var (left, right) = (left, right)
        return left.withUTF8 { left in right.withUTF8 { left.elementsEqual($0) } }
    }

    /// ``same(_:_:)`` for identifiers that may be absent: two absent ones are one.
    package static func same(_ left: String?, _ right: String?) -> Bool {
        guard let left, let right else { return left == nil && right == nil }
        return same(left, right)
    }

    /// An identifier as a set's or a dictionary's key, told apart as ``same(_:_:)`` does: a `String`
    /// key takes canonically equivalent strings for one.
    package struct Key: Hashable, Sendable {
        package let value: String

        package init(_ value: String) { self.value = value }

        package static func == (left: Key, right: Key) -> Bool { same(left.value, right.value) }

        /// String's own hash: equal bytes are equivalent strings, whose hashes are equal.
        package func hash(into hasher: inout Hasher) { hasher.combine(value) }
    }
}
