import SigilCore

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
    /// The pins the transport checked, recorded in the identity; discovery's when empty.
    public var pins: [String] = []
    /// The key kinds beyond the built-in ones the server's response key may be of.
    public var keyFormats: KeyFormats = .builtIn

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
        let discovery = try await registration.discover()
        let server = try discovery.responseVerifier(clock: registration.clock, formats: keyFormats)
        let enrolled = try await registration.enroll(key, token: token, server: server)
        let secret =
            fetchSecret ? try await registration.fetchSecret(key: key, keyID: enrolled.keyId, server: server) : nil
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
            clientCertificate: certificate?.certificate
        )
        identity.sealingKey = discovery.sealingKeys?.first { (try? $0.key()) != nil }
        try store.save(identity, key: key, secret: try secret?.secretBytes)
        return identity
    }
}
