import Foundation
@_spi(Sigil) import SigilCore

/// Enrolls a device with any key over any transport: reads discovery, registers the key (which signs
/// its own registration), fetches the HMAC secret and a client certificate when asked, and stores
/// what the device keeps.
///
/// ```swift
/// let key = try SecureEnclaveSigningKey()
/// let registration = DeviceRegistration(transport: URLSessionTransport(session: session),
///                                       authority: "api.example.com", clock: clock)
/// let identity = try await DeviceEnrollment().enroll(key, token: token, with: registration,
///                                                    store: KeychainDeviceStore())
/// ```
public struct DeviceEnrollment: Sendable {
    /// Also fetch the per-device HMAC secret.
    public var fetchSecret = true
    /// Also request a client certificate for the key (a CSR the key signs itself).
    public var requestCertificate = false
    /// A client certificate the device holds already for the key it enrolls (PEM, leaf first), as a
    /// server requiring client certificates needs in the handshake: recorded in the identity when the
    /// server issues none (``requestCertificate`` off), so the device keeps presenting it.
    public var clientCertificate: String?
    /// The pins the transport checked, recorded in the identity; discovery's when empty.
    public var pins: [String] = []
    /// The key kinds beyond the built-in ones the server's response key may be of.
    public var keyFormats: KeyFormats = .builtIn
    /// The device's own X-Wing key, registered with its signing key: the HMAC secret then comes
    /// sealed to it (PROTOCOL.md section 6.4), so neither a TLS-intercepting proxy nor a recorded
    /// session reads it, and it can be pushed later (``receivePushedSecret(_:store:keyFormats:)``). The store
    /// keeps it.
    public var sealingKey: SealingPrivateKey?
    /// The user the device must be enrolled for; `nil` takes the `sub` of an enrollment JWT given as
    /// the token. An answer naming another user is refused, and nothing is stored: a server (or
    /// whoever answers in its place) must not tie the device to someone else's account.
    public var expectedUserID: String?

    /// Creates an enrollment: secret fetched, no certificate.
    public init(fetchSecret: Bool = true, requestCertificate: Bool = false, pins: [String] = []) {
        self.fetchSecret = fetchSecret
        self.requestCertificate = requestCertificate
        self.pins = pins
    }

    /// Enrolls `key` and saves the identity, key and secret in `store`.
    ///
    /// - Parameter token: the bootstrap token or enrollment JWT, if the server asks for one.
    /// - Returns: the identity stored.
    /// - Throws: ``SigilError`` for a refusal (its code is the server's), ``UnexpectedResponse``,
    ///   the transport's and the store's errors.
    public func enroll(
        _ key: any SignatureProvider,
        token: String?,
        with registration: DeviceRegistration,
        store: any DeviceStore
    ) async throws -> DeviceIdentity {
        let expected = expectedUserID ?? token.flatMap(Self.subject(ofJWT:))
        return try await enroll(key, with: registration, store: store) { server in
            let registered = try await registration.enroll(
                key, token: token, sealingKey: sealingKey?.publicKey, server: server)
            try Self.check(registered, expected: expected)
            return registered
        }
    }

    /// Enrolls an App Attest key (`apple-appattest`) by attestation: asks the server for a challenge,
    /// has the key attested for it, registers it with a request its own assertion signs, then gets
    /// the certificate asked for and saves the identity. No HMAC secret: an App Attest device signs
    /// with assertions only.
    ///
    /// - Parameters:
    ///   - signer: the App Attest key (``AppAttestSigner``).
    ///   - appAttestKeyID: its App Attest key ID.
    ///   - token: the logged-in user's enrollment JWT, which binds the device to that user (the answer
    ///     must name the token's `sub`); `nil` for a device of no user.
    ///   - attest: `DCAppAttestService.attestKey` for SHA-256 of the challenge's UTF-8 bytes.
    public func enroll(
        attested signer: any SignatureProvider,
        appAttestKeyID: [UInt8],
        token: String? = nil,
        attest: (String) async throws -> [UInt8],
        with registration: DeviceRegistration,
        store: any DeviceStore
    ) async throws -> DeviceIdentity {
        var enrollment = self
        enrollment.fetchSecret = false
        // With a token, the device is its user's; without, no user's, unless one is expected.
        let expected = expectedUserID ?? token.flatMap(Self.subject(ofJWT:))
        return try await enrollment.enroll(signer, with: registration, store: store) { server in
            let challenge = try await registration.attestationChallenge().challenge
            let registered = try await registration.enroll(
                attestedBy: signer, appAttestKeyID: appAttestKeyID, attestation: try await attest(challenge),
                challenge: challenge, token: token, server: server)
            try Self.check(registered, exactly: expected)
            return registered
        }
    }

    /// Enrolls `key` (a Secure Enclave P-256 key) vouched for by an App Attest attestation: asks the
    /// server for a challenge, has `appAttest` attest for that challenge and `key`'s ID, registers
    /// `key` with a request `key` signs, then saves the identity with the App Attest key's ID. The
    /// device then signs with `key`, any number of requests at once, and with `appAttest`'s assertions
    /// only where the server asks for one (its `assertionPaths`, a rotation). No HMAC secret: it would
    /// sign from anywhere.
    ///
    /// - Parameter token: the logged-in user's enrollment JWT, which binds the device to that user;
    ///   `nil` for a device of no user.
    public func enroll(
        _ key: any SignatureProvider,
        vouchedBy appAttest: AppAttestSigner,
        token: String? = nil,
        with registration: DeviceRegistration,
        store: any DeviceStore
    ) async throws -> DeviceIdentity {
        var enrollment = self
        enrollment.fetchSecret = false
        let expected = expectedUserID ?? token.flatMap(Self.subject(ofJWT:))
        return try await enrollment.enroll(key, with: registration, store: store, appAttest: appAttest) { server in
            let challenge = try await registration.attestationChallenge().challenge
            let hash = Registration.AttestedKey.clientDataHash(
                challenge: challenge, vouchingFor: key.publicKey?.derivedKeyID)
            let attestation: [UInt8]
            do {
                attestation = try await appAttest.attest(clientDataHash: hash)
            } catch let failure as AppAttestFailure {
                throw SigilClientError(.appAttestUnavailable, failure.description)
            }
            let registered = try await registration.enroll(
                key, vouchedBy: appAttest.keyIDBytes, attestation: attestation, challenge: challenge, token: token,
                server: server)
            try Self.check(registered, exactly: expected)
            return registered
        }
    }

    /// Refuses an answer naming another user than `expected`, or any user when none is expected: an
    /// attestation admits a device by itself, so a user the app did not log in is no one it knows.
    static func check(_ registered: Registration.Registered, exactly expected: String?) throws {
        if registered.userId != expected {
            // The client's verdict, not the server's code: the server did enroll the device.
            throw SigilClientError(
                .untrustedAnswer, "the server enrolled the device for a user it did not expect; nothing is kept")
        }
    }

    /// Refuses an answer naming another user than `expected`, when one is expected.
    static func check(_ registered: Registration.Registered, expected: String?) throws {
        if let expected, registered.userId != expected {
            throw SigilClientError(
                .untrustedAnswer, "the server enrolled the device for another user than the token's; nothing is kept")
        }
    }

    /// The `sub` of a compact JWT, read without verifying it (the client's own token; the server
    /// verifies it), or `nil` for anything else.
    static func subject(ofJWT token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])),
            let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        else { return nil }
        return object["sub"] as? String
    }

    /// Discovery, `register`, then the secret and certificate asked for, saved in `store`.
    func enroll(
        _ key: any SignatureProvider,
        with registration: DeviceRegistration,
        store: any DeviceStore,
        appAttest: AppAttestSigner? = nil,
        register: (ResponseVerifier) async throws -> Registration.Registered
    ) async throws -> DeviceIdentity {
        let discovery = try await registration.discover()
        guard sealingKey == nil || discovery.sealedSecrets == true else {
            // A server that does not say it seals would ignore the key and send the secret in the clear.
            throw SigilInputError("this server does not seal secrets to a device's key (discovery: sealedSecrets)")
        }
        let server = try discovery.responseVerifier(clock: registration.clock, formats: keyFormats)
        let enrolled = try await register(server)
        let secret =
            fetchSecret ? try await registration.fetchSecret(key: key, keyID: enrolled.keyId, server: server) : nil
        let secretBytes = try secret?.secretBytes(openingWith: sealingKey)
        let certificate =
            requestCertificate
            ? try await registration.requestCertificate(key: key, keyID: enrolled.keyId, server: server) : nil
        var identity = DeviceIdentity(
            server: "\(registration.scheme)://\(registration.authority)",
            keyID: enrolled.keyId,
            deviceID: enrolled.deviceId,
            algorithm: key.algorithm.rawValue,
            pins: pins.isEmpty ? discovery.pins : pins,
            responseKeyID: server.keyID,
            responseKey: discovery.responseKeys.first?.publicKey ?? "",
            secretKeyID: secret?.keyId,
            clientCertificate: certificate?.certificate ?? clientCertificate
        )
        identity.userID = enrolled.userId
        if let appAttest {
            identity.appAttestKeyID = appAttest.appAttestKeyID
            identity.assertionPaths = discovery.assertionPaths
        }
        identity.sealingKey = discovery.sealingKeys?.first { (try? $0.key()) != nil }
        identity.deviceSealingKeyID = sealingKey?.keyID
        identity.secretIssuedAt = secret.map { $0.issuedAt ?? registration.clock.now() }
        if pins.isEmpty { identity.pinsTakenOnFirstUse = true }
        identity.appPins = pins
        if let sealingKey { try store.saveSealingKey(sealingKey) }
        try store.save(identity, key: key, secret: secretBytes)
        return identity
    }

    /// Takes a secret the server pushed (an APNs payload, ``Registration/SecretPush``) into `store`:
    /// its signature must verify with the response key stored at enrollment, it must name this
    /// device and be newer than the secret the device holds, and it must open with the device's
    /// sealing key (the one its identity registered).
    ///
    /// ```swift
    /// func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any])
    ///     async -> UIBackgroundFetchResult {
    ///     let payload = try JSONSerialization.data(withJSONObject: userInfo)
    ///     _ = try DeviceEnrollment.receivePushedSecret(Array(payload), store: KeychainDeviceStore())
    ///     return .newData
    /// }
    /// ```
    ///
    /// - Parameter keyFormats: the key kinds beyond the built-in ones the server's response key may be of.
    /// - Returns: the identity, now naming the new secret.
    /// - Throws: `invalid-signature` for a push the server did not sign; ``SigilInputError`` for an
    ///   older push, a device without an identity, key or sealing key; `sealed-body-invalid` when the
    ///   secret does not open.
    public static func receivePushedSecret(
        _ payload: [UInt8], store: any DeviceStore, keyFormats: KeyFormats = .builtIn
    ) throws -> DeviceIdentity {
        let push = try Registration.SecretPush(payload: payload)
        guard var identity = try store.identity(), let key = try store.deviceKey(),
            let sealingKey = try store.sealingKey(), identity.deviceSealingKeyID == sealingKey.keyID
        else {
            throw SigilInputError("this device is not enrolled with the sealing key its store holds")
        }
        guard push.deviceId == identity.deviceID else {
            throw SigilInputError("the pushed secret is for another device")
        }
        let responseKey = try KeyFile.load(Array(identity.responseKey.utf8), formats: keyFormats).verificationKey
        let issued = try push.issuedSecret(verifiedWith: responseKey)
        guard push.issuedAt > (identity.secretIssuedAt ?? .min), push.keyId != identity.secretKeyID else {
            throw SigilInputError("the pushed secret is not newer than the one this device holds")
        }
        let secret = try issued.secretBytes(openingWith: sealingKey)
        identity.secretKeyID = push.keyId
        identity.secretIssuedAt = push.issuedAt
        try store.save(identity, key: key, secret: secret)
        return identity
    }
}
