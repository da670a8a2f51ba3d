#if canImport(DeviceCheck)
    import DeviceCheck
    import Foundation

    /// App Attest itself: `DCAppAttestService.shared`, its errors read as ``AppAttestFailure``.
    ///
    /// ```swift
    /// let signer = try await AppAttestSigner.generate()
    /// let identity = try await signer.enroll(with: registration, store: KeychainDeviceStore())
    /// ```
    @available(iOS 14, macOS 11, tvOS 15, watchOS 9, *)
    public struct SystemAppAttest: AppAttestProvider {
        public init() {}

        public var isSupported: Bool { DCAppAttestService.shared.isSupported }

        public func generateKey() async throws -> String {
            try await Self.reading { try await DCAppAttestService.shared.generateKey() }
        }

        public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
            try await Self.reading {
                try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash)
            }
        }

        public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
            try await Self.reading {
                try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash)
            }
        }

        /// `DCError`s as ``AppAttestFailure``: `serverUnavailable` is transient, `invalidKey` and
        /// `invalidInput` give the key up, `featureUnsupported` is unsupported; others as they came.
        static func reading<Result>(_ call: () async throws -> Result) async throws -> Result {
            do {
                return try await call()
            } catch let error as DCError {
                switch error.code {
                case .serverUnavailable: throw AppAttestFailure.transient
                case .invalidKey, .invalidInput: throw AppAttestFailure.keyInvalidated
                case .featureUnsupported: throw AppAttestFailure.unsupported
                default: throw error
                }
            }
        }
    }

    @available(iOS 14, macOS 11, tvOS 15, watchOS 9, *)
    extension AppAttestSigner {
        /// The signer of an App Attest key made earlier by App Attest itself.
        public init(appAttestKeyID: String) { self.init(appAttestKeyID: appAttestKeyID, provider: SystemAppAttest()) }

        /// A new App Attest key from App Attest itself.
        ///
        /// - Throws: ``AppAttestFailure/unsupported`` on the simulator and devices without App Attest.
        public static func generate() async throws -> AppAttestSigner {
            try await generate(provider: SystemAppAttest())
        }
    }
#endif
