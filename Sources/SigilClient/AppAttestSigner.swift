import Crypto
import Foundation
@_spi(Sigil) import SigilCore

/// What Sigil asks of App Attest. On Apple platforms ``SystemAppAttest`` is `DCAppAttestService`
/// itself; another provider stands in where App Attest does not run (a test's double, the
/// simulator's debug provider).
public protocol AppAttestProvider: Sendable {
    /// Whether App Attest works here (not on the simulator, nor on devices without a Secure Enclave).
    var isSupported: Bool { get }
    /// A new App Attest key; its key ID (SHA-256 of the public key), standard base64.
    func generateKey() async throws -> String
    /// The attestation of the key for `clientDataHash`.
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// An assertion by the key over `clientDataHash`.
    ///
    /// - Throws: ``AppAttestFailure`` where App Attest says what went wrong, so the signer knows
    ///   whether to try again with the same key or give the key up.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// What App Attest said went wrong, as a signer acts on it.
public enum AppAttestFailure: Error, Equatable, CustomStringConvertible {
    /// App Attest could not reach Apple (`DCError.serverUnavailable`): the same key works later.
    case transient
    /// App Attest refused the key itself (`DCError.invalidKey`, `.invalidInput`): it will never sign
    /// again (the app was reinstalled, restored to another device, the key revoked). Make a new key and
    /// enroll it: ``SigilDevice/replaceAppAttestKey(provider:token:)``.
    case keyInvalidated
    /// App Attest is not supported here (`DCError.featureUnsupported`).
    case unsupported

    public var description: String {
        switch self {
        case .transient: "App Attest could not reach Apple; the key works later"
        case .keyInvalidated: "App Attest refused its key: enroll a new one"
        case .unsupported: "App Attest is not supported on this device"
        }
    }
}

/// The app's App Attest key as a ``SignatureProvider`` (`apple-appattest`): each signature is an
/// assertion over SHA-256 of the message (Sigil: the request's signature base), which only the
/// genuine app on a genuine device can make.
///
/// It signs only asynchronously (``asyncSignature(for:)``), through ``SigilSession`` or
/// ``SigilDevice``, which send its requests one at a time so its assertions reach the server in
/// counter order. A transient failure is tried again with the same key; a key App Attest refuses is
/// ``AppAttestFailure/keyInvalidated``.
///
/// - Warning: Apple rate-limits assertions per device: sign the requests that need the app's proof
///   with it, and the rest with the device's HMAC secret.
public struct AppAttestSigner: SignatureProvider, CustomStringConvertible {
    /// The App Attest key ID, as the provider's `generateKey()` returned it (standard base64).
    public let appAttestKeyID: String
    /// App Attest, or what stands in for it.
    public let provider: any AppAttestProvider
    /// How long to wait before each try again after a transient failure.
    public var retryDelays: [Duration] = [.seconds(1), .seconds(2)]

    /// The signer of a key `provider` made earlier.
    public init(appAttestKeyID: String, provider: any AppAttestProvider) {
        self.appAttestKeyID = appAttestKeyID
        self.provider = provider
    }

    /// A new App Attest key.
    ///
    /// - Throws: ``AppAttestFailure/unsupported`` where App Attest is not supported (the simulator,
    ///   old devices): use a Secure Enclave key there, or the debug provider.
    public static func generate(provider: any AppAttestProvider) async throws -> AppAttestSigner {
        guard provider.isSupported else { throw AppAttestFailure.unsupported }
        return AppAttestSigner(appAttestKeyID: try await provider.generateKey(), provider: provider)
    }

    public var algorithm: SignatureAlgorithm { .appleAppAttest }

    /// `nil`: App Attest does not show the key; the server reads it from the attestation.
    public var publicKey: VerificationKey? { nil }

    /// The key ID bytes (SHA-256 of the key).
    public var keyIDBytes: [UInt8] { Array(Data(base64Encoded: appAttestKeyID) ?? Data()) }

    /// The Sigil key ID: the first 8 bytes of the App Attest key ID, hex.
    public var keyID: String { AppAttestAssertion.keyID(appAttestKeyID: keyIDBytes) }

    /// The attestation of the key for `challenge` (`clientDataHash` = SHA-256 of its UTF-8 bytes).
    public func attest(challenge: String) async throws -> [UInt8] {
        try await attest(clientDataHash: Registration.AttestedKey.clientDataHash(challenge: challenge))
    }

    /// The attestation of the key for `clientDataHash` (``Registration/AttestedKey``: a challenge, or a
    /// challenge and the key the attestation vouches for).
    public func attest(clientDataHash: [UInt8]) async throws -> [UInt8] {
        Array(try await provider.attestKey(appAttestKeyID, clientDataHash: Data(clientDataHash)))
    }

    /// Refuses: an assertion comes from App Attest asynchronously, and waiting for it here would hold
    /// a thread (the main one, at worst). Sessions sign with ``asyncSignature(for:)``.
    public func signature(for message: [UInt8]) throws -> [UInt8] {
        throw SigilInputError("App Attest signs asynchronously: send through SigilSession or SigilDevice")
    }

    /// An assertion over `message`. A transient failure is tried again with the same key, twice, one
    /// and then two seconds later; any other failure is thrown as it came.
    public func asyncSignature(for message: [UInt8]) async throws -> [UInt8] {
        let hash = Data(SHA256.hash(data: message))
        for delay in retryDelays + [nil] {
            do {
                return Array(try await provider.generateAssertion(appAttestKeyID, clientDataHash: hash))
            } catch AppAttestFailure.transient where delay != nil {
                try await Task.sleep(for: delay ?? .zero)
            }
        }
        throw AppAttestFailure.transient
    }

    /// `true`: App Attest's counter must reach the server in order.
    public var requiresOrderedRequests: Bool { true }

    /// Enrolls the key by attestation (``DeviceEnrollment/enroll(attested:appAttestKeyID:attest:with:store:)``).
    ///
    /// - Parameter token: the logged-in user's enrollment JWT, which binds the device to that user.
    public func enroll(
        with registration: DeviceRegistration, token: String? = nil, enrollment: DeviceEnrollment = DeviceEnrollment(),
        store: any DeviceStore
    ) async throws -> DeviceIdentity {
        try await enrollment.enroll(
            attested: self, appAttestKeyID: keyIDBytes, token: token, attest: { try await attest(challenge: $0) },
            with: registration, store: store)
    }

    public var description: String { "AppAttestSigner(\(keyID))" }
}
