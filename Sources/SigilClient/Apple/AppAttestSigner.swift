#if canImport(DeviceCheck) && canImport(CryptoKit)
    import CryptoKit
    import DeviceCheck
    import Foundation
    @_spi(Sigil) import SigilCore

    /// The app's App Attest key as a ``SignatureProvider`` (`apple-appattest`): each signature is an
    /// assertion from `DCAppAttestService` over SHA-256 of the message (Sigil: the request's
    /// signature base), which only the genuine app on a genuine device can make.
    ///
    /// ```swift
    /// let signer = try await AppAttestSigner.generate()
    /// let identity = try await signer.enroll(with: registration, store: KeychainDeviceStore())
    /// let session = SigilSession(transport: transport,
    ///                            signer: RequestSigner(key: signer, keyID: identity.keyID, clock: clock),
    ///                            clock: clock)
    /// ```
    ///
    /// - Warning: ``signature(for:)`` waits for App Attest, which may take a network round trip to
    ///   Apple the first time: sign off the main thread. Apple rate-limits assertions per device:
    ///   sign the requests that need the app's proof with it, and the rest with the device's HMAC
    ///   secret (fetched at enrollment).
    @available(iOS 14, macOS 11, tvOS 15, watchOS 9, *)
    public struct AppAttestSigner: SignatureProvider, CustomStringConvertible {
        /// The App Attest key ID, as `DCAppAttestService.generateKey()` returned it (standard base64).
        public let appAttestKeyID: String

        /// The signer of an App Attest key made earlier.
        public init(appAttestKeyID: String) { self.appAttestKeyID = appAttestKeyID }

        /// A new App Attest key.
        ///
        /// - Throws: ``SigilInputError`` where App Attest is not supported (the simulator, old devices).
        public static func generate() async throws -> AppAttestSigner {
            guard DCAppAttestService.shared.isSupported else {
                throw SigilInputError("App Attest is not supported on this device")
            }
            return AppAttestSigner(appAttestKeyID: try await DCAppAttestService.shared.generateKey())
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
            let hash = Data(SHA256.hash(data: Data(challenge.utf8)))
            return Array(try await DCAppAttestService.shared.attestKey(appAttestKeyID, clientDataHash: hash))
        }

        /// An assertion over `message`: waits for `DCAppAttestService.generateAssertion`.
        public func signature(for message: [UInt8]) throws -> [UInt8] {
            let answer = AssertionAnswer()
            DCAppAttestService.shared.generateAssertion(
                appAttestKeyID, clientDataHash: Data(SHA256.hash(data: message))
            ) { assertion, error in
                answer.finish(assertion, error)
            }
            return try answer.wait()
        }

        /// Enrolls the key by attestation (``DeviceEnrollment/enroll(attested:appAttestKeyID:attest:with:store:)``).
        public func enroll(
            with registration: DeviceRegistration, enrollment: DeviceEnrollment = DeviceEnrollment(),
            store: any DeviceStore
        ) async throws -> DeviceIdentity {
            try await enrollment.enroll(
                attested: self, appAttestKeyID: keyIDBytes, attest: { try await attest(challenge: $0) },
                with: registration, store: store)
        }

        public var description: String { "AppAttestSigner(\(keyID))" }
    }

    /// One assertion's answer, handed from App Attest's callback to the waiting caller.
    final class AssertionAnswer: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<Data, any Error> = .failure(SigilInputError("App Attest did not answer"))

        func finish(_ assertion: Data?, _ error: (any Error)?) {
            if let assertion {
                result = .success(assertion)
            } else {
                result = .failure(error ?? SigilInputError("App Attest made no assertion"))
            }
            done.signal()
        }

        func wait() throws -> [UInt8] {
            done.wait()
            return Array(try result.get())
        }
    }
#endif
