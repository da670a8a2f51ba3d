import Foundation
import NIOSSL
@_spi(Sigil) import SigilCore
import SwiftASN1
import Synchronization
@_spi(FixedExpiryValidationTime) import X509

/// What a pin check saw, for errors and for the report-only callback.
public struct PinReport: Sendable, Hashable, CustomStringConvertible {
    /// The host.
    public let host: String
    /// The pins the client accepts, sorted.
    public let expected: [String]
    /// The pins of the validated chain the server presented, leaf first.
    public let seen: [String]
    /// Whether one of them matched.
    public var matched: Bool { !Set(expected).isDisjoint(with: seen) }

    public var description: String {
        "\(host): expected one of \(expected.joined(separator: ", ")); the server presented "
            + seen.enumerated().map { $0.offset == 0 ? "\($0.element) (leaf)" : $0.element }.joined(separator: ", ")
    }
}

/// A pin check that failed: the chain did not validate, or no pinned key is in it.
public struct PinError: Error, Sendable, CustomStringConvertible {
    /// What the check saw, when the chain validated.
    public let report: PinReport?
    /// Why it failed.
    public let reason: String

    /// Creates the error.
    public init(report: PinReport?, reason: String) {
        self.report = report
        self.reason = reason
    }

    public var description: String {
        guard let report else { return reason }
        return "certificate pin mismatch for \(report)" + (reason.isEmpty ? "" : "; \(reason)")
    }
}

/// Checks a server against a pin set before a client trusts it.
///
/// The chain the server presents is validated with swift-certificates: against the given anchors,
/// else against a presented self-signed certificate whose key is pinned (how `sigil serve`'s own
/// certificate is trusted), else against the system roots; the host name or IP address is checked
/// against the leaf either way. Then at least one pinned key must be in the validated chain.
public enum PinnedServer {
    /// The outcome: the anchors a client should trust, and the check every later connection must pass.
    public struct Trust: Sendable {
        /// The certificates to trust instead of the system roots, or `nil` for the system roots.
        public let anchors: [NIOSSLCertificate]?
        /// What the pin check saw.
        public let report: PinReport
        /// Checks the certificate of each connection a client opens to the server afterwards.
        public let connections: ConnectionPinCheck
    }

    /// Fetches and checks `host:port`'s chain.
    ///
    /// - Parameters:
    ///   - anchors: trust these instead of the system roots (and instead of a pinned self-signed certificate).
    ///   - reportOnly: on a pin mismatch, call `report` and trust the validated chain anyway.
    ///   - validationTime: the time certificates must be valid at; `nil` is the time of each check.
    /// - Throws: ``PinError`` naming the expected and presented pins, or why the chain is not valid.
    public static func check(
        host: String,
        port: Int,
        pins: PinSet,
        anchors: [NIOSSLCertificate]? = nil,
        reportOnly: Bool = false,
        report: (@Sendable (PinReport) -> Void)? = nil,
        validationTime: Date? = nil
    ) async throws -> Trust {
        let presented = try await PeerCertificates.fetch(host: host, port: port)
        let certificates = try presented.map { try Certificate(derEncoded: $0) }
        guard let leaf = certificates.first else {
            throw PinError(report: nil, reason: "\(host) presented no certificate")
        }
        let presentedPins = try certificates.map { SPKIPin.pin(spkiDER: try Certificates.spkiDER($0.publicKey)) }
        let roots: ConnectionPinCheck.Roots
        let trustedAnchors: [NIOSSLCertificate]?
        if let anchors {
            roots = .anchors(try anchors.map { try Certificate(derEncoded: try $0.toDERBytes()) })
            trustedAnchors = anchors
        } else if let index = certificates.indices.first(where: {
            pins.pins.contains(presentedPins[$0]) && ConnectionPinCheck.isSelfSigned(certificates[$0])
        }) {
            roots = .pinnedSelfSigned(certificates[index])
            trustedAnchors = [try NIOSSLCertificate(bytes: presented[index], format: .der)]
        } else {
            roots = .system
            trustedAnchors = nil
        }
        let connections = ConnectionPinCheck(
            pins: pins, host: host, roots: roots, intermediates: Array(certificates.dropFirst()),
            reportOnly: reportOnly, report: report, validationTime: validationTime)
        let outcome = try await connections.validate(leaf: leaf, intermediates: Array(certificates.dropFirst()))
        return Trust(anchors: trustedAnchors, report: outcome, connections: connections)
    }
}

/// The pin check of one server, for every connection a client opens to it: the connection's leaf
/// certificate, with the intermediates the first check saw, must validate against the same roots and
/// the host name, and a pinned key must be in the validated chain.
///
/// A TLS client library validates each connection against its anchors; only this check holds it to
/// the pins, so a client must not send a request over a connection that has not passed it
/// (`SigilHTTPClient` runs it before AsyncHTTPClient may use a connection).
public final class ConnectionPinCheck: Sendable {
    /// What the chain is validated against.
    enum Roots: Sendable {
        case anchors([Certificate])
        case pinnedSelfSigned(Certificate)
        case system
    }

    let pins: PinSet
    let host: String
    let roots: Roots
    let intermediates: [Certificate]
    let reportOnly: Bool
    let report: (@Sendable (PinReport) -> Void)?
    let validationTime: Date?
    /// Leaf certificates already validated with a pinned key in their chain.
    private let validated = Mutex<Set<[UInt8]>>([])

    init(
        pins: PinSet,
        host: String,
        roots: Roots,
        intermediates: [Certificate],
        reportOnly: Bool,
        report: (@Sendable (PinReport) -> Void)?,
        validationTime: Date?
    ) {
        self.pins = pins
        self.host = host
        self.roots = roots
        self.intermediates = intermediates
        self.reportOnly = reportOnly
        self.report = report
        self.validationTime = validationTime
    }

    /// Checks a connection whose server presented `leafDER` (and proved it holds its key, as TLS does).
    ///
    /// - Throws: ``PinError`` when the leaf does not validate or no pinned key is in its chain.
    public func check(leafDER: [UInt8]) async throws {
        if validated.withLock({ $0.contains(leafDER) }) { return }
        let leaf: Certificate
        do {
            leaf = try Certificate(derEncoded: leafDER)
        } catch {
            throw PinError(report: nil, reason: "\(host) presented a certificate that does not parse")
        }
        _ = try await validate(leaf: leaf, intermediates: intermediates)
    }

    /// Validates `leaf` with `intermediates`, then checks the pins; returns what it saw.
    func validate(leaf: Certificate, intermediates: [Certificate]) async throws -> PinReport {
        let time = validationTime ?? Date()
        let isAddress = Certificates.ipAddressBytes(host) != nil
        let identity = ServerIdentityPolicy(serverHostname: isAddress ? nil : host, serverIP: isAddress ? host : nil)
        let chainCandidates = CertificateStore(intermediates)
        let rootStore: CertificateStore
        // A pinned (or anchored) self-signed certificate is trusted for its key, not as a CA, so RFC 5280's
        // CA rules do not apply; its dates and the name still do.
        let anchoredAtPin: Bool
        switch roots {
        case .anchors(let anchors):
            rootStore = CertificateStore(anchors)
            anchoredAtPin = anchors.contains(leaf) && Self.isSelfSigned(leaf)
        case .pinnedSelfSigned(let certificate):
            rootStore = CertificateStore([certificate])
            anchoredAtPin = true
        case .system:
            rootStore = CertificateStore.systemTrustRoots
            anchoredAtPin = false
        }
        let result: CertificateValidationResult
        if anchoredAtPin {
            guard ([leaf] + intermediates).allSatisfy({ $0.notValidBefore <= time && time <= $0.notValidAfter })
            else { throw PinError(report: nil, reason: "a certificate of \(host) is expired or not yet valid") }
            var verifier = Verifier(rootCertificates: rootStore) {
                PinnedKeyPolicy()
                identity
            }
            result = await verifier.validate(leaf: leaf, intermediates: chainCandidates)
        } else {
            let rfc5280 = validationTime.map { RFC5280Policy(fixedExpiryValidationTime: $0) } ?? RFC5280Policy()
            var verifier = Verifier(rootCertificates: rootStore) {
                rfc5280
                identity
            }
            result = await verifier.validate(leaf: leaf, intermediates: chainCandidates)
        }
        let chain: [Certificate]
        switch result {
        case .validCertificate(let validated):
            chain = Array(validated)
        case .couldNotValidate(let failures):
            let trustBasis: String
            switch roots {
            case .anchors: trustBasis = "the given anchors"
            case .pinnedSelfSigned: trustBasis = "the pinned self-signed certificate"
            case .system: trustBasis = "the system roots"
            }
            let why = failures.first.map { "\($0.policyFailureReason)" } ?? "no chain to a trusted root"
            let presented = try ([leaf] + intermediates).map {
                SPKIPin.pin(spkiDER: try Certificates.spkiDER($0.publicKey))
            }
            let presentedReport = PinReport(host: pins.host, expected: pins.pins.sorted(), seen: presented)
            throw PinError(
                report: presentedReport.matched ? nil : presentedReport,
                reason: "the certificate chain of \(host) does not validate against \(trustBasis): \(why)")
        }
        let validatedPins = try chain.map { SPKIPin.pin(spkiDER: try Certificates.spkiDER($0.publicKey)) }
        let outcome = PinReport(host: pins.host, expected: pins.pins.sorted(), seen: validatedPins)
        // Past the pins' expiry (TrustKit's rule) the chain's validation alone decides.
        let enforced = pins.applies(to: pins.host, at: Int64(time.timeIntervalSince1970))
        guard outcome.matched || !enforced else {
            guard reportOnly else { throw PinError(report: outcome, reason: "") }
            report?(outcome)
            return outcome
        }
        let leafDER = try Certificates.der(leaf)
        validated.withLock { _ = $0.insert(leafDER) }
        return outcome
    }

    /// Whether `certificate` names itself as issuer and its own key verifies its signature.
    static func isSelfSigned(_ certificate: Certificate) -> Bool {
        certificate.issuer == certificate.subject
            && certificate.publicKey.isValidSignature(certificate.signature, for: certificate)
    }
}

/// For a certificate trusted because its key is pinned: its CA and usage extensions are read (so a
/// critical one does not make the chain fail) but not enforced, as the key, not a CA, is trusted.
struct PinnedKeyPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.keyUsage, .X509ExtensionID.extendedKeyUsage,
    ]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        .meetsPolicy
    }
}
