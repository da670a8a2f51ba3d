#if canImport(Security)
    import Foundation
    import Security
    @_spi(Sigil) import SigilCore

    /// A `URLSessionDelegate` that applies a Sigil pin set, presents a client identity, and never
    /// re-sends a signed request to another place.
    ///
    /// The server's chain is evaluated by the system (against the system roots, or only against
    /// `anchors` for a self-signed server), with the SSL policy for the host; then at least one pinned
    /// SPKI must be in the chain. URLSession asks for every new TLS session, so every connection is
    /// checked. In report-only mode a mismatch is reported and the connection goes on. Redirects of
    /// signed requests are not followed (the 3xx is returned), nor any redirect to another origin.
    public final class PinningSessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        /// The pin sets (``PinSet``: backup pins, subdomains, expiry).
        public let pinSets: [PinSet]
        /// The clock pins expire by (Unix seconds).
        let now: @Sendable () -> Int64
        /// Trust only these certificates, per host (a self-signed server's own certificate).
        public let anchors: [String: [SecCertificate]]
        /// Report mismatches instead of refusing.
        public let reportOnly: Bool
        /// Called with the host, the expected pins and the presented pins on every mismatch.
        public let report: (@Sendable (String, [String], [String]) -> Void)?
        /// The client identity to present when the server asks for one.
        public let clientIdentity: SecIdentity?

        /// Creates the delegate from pin sets, which hold the backup-pin rule (``PinSet``).
        public init(
            pinSets: [PinSet],
            anchors: [String: [SecCertificate]] = [:],
            reportOnly: Bool = false,
            report: (@Sendable (String, [String], [String]) -> Void)? = nil,
            clientIdentity: SecIdentity? = nil,
            now: @escaping @Sendable () -> Int64 = { SystemUnixClock().now() }
        ) {
            self.pinSets = pinSets
            self.now = now
            self.anchors = Dictionary(
                anchors.map { (PinSet.normalizedHost($0.key), $0.value) }, uniquingKeysWith: { $0 + $1 })
            self.reportOnly = reportOnly
            self.report = report
            self.clientIdentity = clientIdentity
        }

        /// The identity in a PKCS#12 bundle.
        public static func identity(pkcs12: Data, password: String) throws -> SecIdentity {
            var items: CFArray?
            let options = [kSecImportExportPassphrase as String: password] as CFDictionary
            let status = SecPKCS12Import(pkcs12 as CFData, options, &items)
            guard status == errSecSuccess, let first = (items as? [[String: Any]])?.first,
                let item = first[kSecImportItemIdentity as String],
                CFGetTypeID(item as CFTypeRef) == SecIdentityGetTypeID()
            else { throw SigilInputError("the PKCS#12 bundle does not open with the password (\(status))") }
            // A CoreFoundation type cannot be cast conditionally; its type ID was checked just above.
            return unsafeBitCast(item as CFTypeRef, to: SecIdentity.self)
        }

        public func urlSession(
            _ session: URLSession,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            switch challenge.protectionSpace.authenticationMethod {
            case NSURLAuthenticationMethodClientCertificate:
                guard let clientIdentity else { return completionHandler(.performDefaultHandling, nil) }
                completionHandler(
                    .useCredential, URLCredential(identity: clientIdentity, certificates: nil, persistence: .forSession)
                )
            case NSURLAuthenticationMethodServerTrust:
                guard let trust = challenge.protectionSpace.serverTrust else {
                    return completionHandler(.cancelAuthenticationChallenge, nil)
                }
                let host = challenge.protectionSpace.host
                if evaluate(trust, host: host) {
                    completionHandler(.useCredential, URLCredential(trust: trust))
                } else {
                    completionHandler(.cancelAuthenticationChallenge, nil)
                }
            default:
                completionHandler(.performDefaultHandling, nil)
            }
        }

        public func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest,
            completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            let original = task.originalRequest
            let signed = ["X-Signature", "Signature"].contains { original?.value(forHTTPHeaderField: $0) != nil }
            let sameOrigin =
                original?.url?.scheme == request.url?.scheme && original?.url?.host == request.url?.host
                && original?.url?.port == request.url?.port
            completionHandler(signed || !sameOrigin ? nil : request)
        }

        /// Evaluates the chain for `host`, then the pins.
        func evaluate(_ trust: SecTrust, host: String) -> Bool {
            SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
            let host = PinSet.normalizedHost(host)
            if let hostAnchors = anchors[host] {
                SecTrustSetAnchorCertificates(trust, hostAnchors as CFArray)
                SecTrustSetAnchorCertificatesOnly(trust, true)
            }
            guard SecTrustEvaluateWithError(trust, nil) else { return false }
            let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
            let presented = chain.compactMap { certificate in
                try? SPKIPin.pin(certificateDER: Array(SecCertificateCopyData(certificate) as Data))
            }
            switch PinSet.verdict(host: host, presented: presented, in: pinSets, at: now()) {
            case .matched, .unpinned:
                return true
            case .mismatch(let expected):
                report?(host, expected, presented)
                return reportOnly
            }
        }
    }
#endif
