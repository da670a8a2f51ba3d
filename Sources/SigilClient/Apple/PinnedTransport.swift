#if canImport(Security)
    import Foundation
    @_spi(Sigil) import SigilCore

    /// How an app's pins are applied, beyond the pins themselves (TrustKit's options).
    public struct PinningOptions: Sendable {
        /// The pins apply to the host's subdomains too.
        public var includesSubdomains = false
        /// When the pins stop being enforced (Unix seconds): an app nobody updated keeps working, on the
        /// system's trust alone, after the server's keys move on. `nil`: never.
        public var expires: Int64?
        /// Report a mismatch (``report``) and let the connection go on, to roll pinning out safely.
        public var reportOnly = false
        /// Called with the host, the expected pins and the presented ones on every mismatch.
        public var report: (@Sendable (String, [String], [String]) -> Void)?

        /// Pinning enforced, for the host alone, with no expiry.
        public init() {}
    }

    extension URLSessionTransport {
        /// A transport over an ephemeral `URLSession` that checks `pins` for `host` on every connection
        /// (``PinningSessionDelegate``: the system's evaluation, then a pinned key in the chain) and
        /// never follows a signed request's redirect. No pins: the system's trust alone.
        ///
        /// - Throws: ``SigilInputError`` for a malformed pin, or a single pin with no backup.
        public static func pinned(host: String, pins: [String], options: PinningOptions = PinningOptions()) throws
            -> URLSessionTransport
        {
            let sets =
                pins.isEmpty
                ? []
                : [
                    try PinSet(
                        host: host, pins: pins, includesSubdomains: options.includesSubdomains, expires: options.expires
                    )
                ]
            let delegate = PinningSessionDelegate(pinSets: sets, reportOnly: options.reportOnly, report: options.report)
            return URLSessionTransport(
                session: URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil))
        }
    }

    extension SigilDevice {
        /// The device as `store` keeps it, over `URLSession`, every connection checked against the
        /// identity's pins (those given at enrollment, else discovery's).
        ///
        /// ```swift
        /// let device = try SigilDevice(store: KeychainDeviceStore(accessGroup: "TEAMID.com.example.shared"))
        /// ```
        ///
        /// - Parameters:
        ///   - options: TrustKit's rules beside the identity's pins.
        ///   - log: where the device's events go (``SigilEvent``); the unified log by default.
        ///   - appAttestProvider: what makes App Attest assertions for an identity App Attest vouched
        ///     for; App Attest itself by default (the simulator's `AppAttestDebugProvider` where that
        ///     enrolled).
        public init(
            store: any DeviceStore, pinning options: PinningOptions = PinningOptions(),
            log: @escaping @Sendable (SigilEvent) -> Void = SigilEvent.systemLog,
            appAttestProvider: (any AppAttestProvider)? = nil
        ) throws {
            try self.init(store: store, log: log, appAttestProvider: appAttestProvider) { host, pins in
                try URLSessionTransport.pinned(host: host, pins: pins, options: options)
            }
        }
    }
#endif
