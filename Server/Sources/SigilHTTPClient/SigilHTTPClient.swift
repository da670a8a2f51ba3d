import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilTLS
import X509

/// An AsyncHTTPClient set up the Sigil way for one server: its pins checked on every connection,
/// TLS 1.3 with the hybrid group first (or only), anchored at the pinned certificate for a
/// self-signed server, a client certificate when one is configured, and no redirects followed.
///
/// The pins are checked on a connection of this type's own first (which fixes the anchors and the
/// intermediates), then on every connection AsyncHTTPClient opens, after its handshake and before
/// any request is written to it: a connection whose certificate does not chain to a pinned key fails
/// with ``PinError`` and is closed, and the requests waiting for it fail with that error.
public struct SigilHTTPClient: Sendable {
    /// How to reach the server.
    public struct Options: Sendable {
        /// The server's SPKI pins; none means the system roots (or ``anchors``) alone decide.
        public var pins: [String] = []
        /// Accept a single pin with no backup.
        public var allowSinglePin = false
        /// On a pin mismatch, report and go on.
        public var reportOnly = false
        /// Called with what the pin check saw, always in report-only mode.
        public var report: (@Sendable (PinReport) -> Void)?
        /// Trust these instead of the system roots.
        public var anchors: [NIOSSLCertificate]?
        /// Offer X25519MLKEM768 only.
        public var pqOnly = false
        /// The client certificate and key to present.
        public var identity: TLSIdentity?

        /// The defaults: no pins, system roots, hybrid group first.
        public init() {}
    }

    /// The client.
    public let client: HTTPClient
    /// What the pin check saw, when pins were given.
    public let pinReport: PinReport?
    /// The server's host and port.
    let host: String
    let port: Int
    /// The client's TLS settings, for telling why a connection failed.
    let tls: TLSConfiguration

    /// Checks the pins of `host:port` (when given) and makes the client.
    ///
    /// - Throws: ``PinError`` naming the expected and presented pins; ``ConnectionError`` when the
    ///   server cannot be reached (refused, no answer, no common TLS parameters); ``SigilInputError``
    ///   for bad options.
    public static func connect(host: String, port: Int, options: Options) async throws -> SigilHTTPClient {
        var anchors = options.anchors
        var trust: PinnedServer.Trust?
        if !options.pins.isEmpty {
            let pins = try PinSet(host: host, pins: options.pins, allowSinglePin: options.allowSinglePin)
            do {
                trust = try await PinnedServer.check(
                    host: host, port: port, pins: pins, anchors: options.anchors, reportOnly: options.reportOnly,
                    report: options.report)
            } catch let error as PinError {
                throw error
            } catch {
                // The chain could not be read: a handshake of its own, trusting anything, tells why.
                var probe = ClientTLS.configuration(pqOnly: options.pqOnly, identity: options.identity)
                probe.certificateVerification = .none
                throw await ClientTLS.diagnose(host: host, port: port, configuration: probe) ?? error
            }
            anchors = trust?.anchors
        }
        let tls = ClientTLS.configuration(pqOnly: options.pqOnly, anchors: anchors, identity: options.identity)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // A signed request is never re-sent elsewhere: a redirect is returned to the caller as it is.
        configuration.redirectConfiguration = .disallow
        // A connection that fails fails its request at once, with its cause (refused, a pin failure),
        // instead of being retried until the request's deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        if let connections = trust?.connections {
            let check: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
                Self.checkPins(of: channel, with: connections)
            }
            configuration.http1_1ConnectionDebugInitializer = check
            configuration.http2ConnectionDebugInitializer = check
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        return SigilHTTPClient(client: client, pinReport: trust?.report, host: host, port: port, tls: tls)
    }

    /// The error to report for a request that failed with `error`: a ``ConnectionError`` when the
    /// failure is one (AsyncHTTPClient reports a connection the server closed after the handshake,
    /// as a TLS 1.3 server does to a client without the certificate it requires, without the alert
    /// that says why, so a handshake of its own finds it), else `error`.
    static func explain(_ error: any Error, host: String, port: Int, tls: TLSConfiguration) async -> any Error {
        if error is PinError || error is ConnectionError || error is CancellationError { return error }
        if let error = error as? HTTPClientError,
            [.deadlineExceeded, .readTimeout, .cancelled, .bodyLengthMismatch].contains(error)
        {
            return error
        }
        let presented = !tls.certificateChain.isEmpty
        if let known = ClientTLS.classify(error, host: host, port: port, presentedCertificate: presented) {
            return known
        }
        return await ClientTLS.diagnose(host: host, port: port, configuration: tls) ?? error
    }

    /// Checks the certificate of a new connection against the pins; on failure closes it and fails.
    static func checkPins(of channel: any Channel, with connections: ConnectionPinCheck) -> EventLoopFuture<Void> {
        let checked = channel.eventLoop.makePromise(of: Void.self)
        channel.nioSSL_peerCertificate().whenComplete { result in
            checked.completeWithTask {
                guard case .success(let certificate?) = result else {
                    throw PinError(report: nil, reason: "the connection presented no certificate")
                }
                try await connections.check(leafDER: try certificate.toDERBytes())
            }
        }
        return checked.futureResult.flatMapError { error in
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    /// A transport over the client.
    public var transport: AsyncHTTPClientTransport {
        var transport = AsyncHTTPClientTransport(client: client)
        let (host, port, tls) = (self.host, self.port, self.tls)
        transport.explain = { error in await Self.explain(error, host: host, port: port, tls: tls) }
        return transport
    }

    /// Shuts the client down.
    public func shutdown() async throws { try await client.shutdown() }
}

/// Enrolling a device from the command line or a test: pins checked on every connection, then
/// ``DeviceEnrollment`` over AsyncHTTPClient.
public enum Enrollment {
    /// Enrolls `key` (a new software key of `algorithm` when `nil`) with `server` (`https://host:port`)
    /// and stores the identity.
    ///
    /// - Returns: the stored identity.
    public static func enroll(
        server: String,
        token: String?,
        options: SigilHTTPClient.Options,
        key: (any SignatureProvider)? = nil,
        algorithm: SigilCore.SignatureAlgorithm = .ecdsaP256SHA256,
        enrollment: DeviceEnrollment = DeviceEnrollment(),
        keyFormats: KeyFormats = .builtIn,
        store: any DeviceStore
    ) async throws -> DeviceIdentity {
        let (host, port) = try endpoint(server)
        let connection = try await SigilHTTPClient.connect(host: host, port: port, options: options)
        do {
            let registration = DeviceRegistration(
                transport: connection.transport, authority: authority(host, port), clock: ServerClock())
            var enrollment = enrollment
            enrollment.keyFormats = keyFormats
            if enrollment.pins.isEmpty { enrollment.pins = options.pins }
            let identity = try await enrollment.enroll(
                try key ?? SigningKey.generate(algorithm, formats: keyFormats), token: token, with: registration,
                store: store)
            try await connection.shutdown()
            return identity
        } catch {
            try? await connection.shutdown()
            throw error
        }
    }

    /// The host and port of `https://host[:port][/…]`; an `http://` URL is refused as such (the URL
    /// itself is not repeated: it may hold a password).
    public static func endpoint(_ url: String) throws -> (host: String, port: Int) {
        let components = URLComponents(string: url)
        if components?.scheme?.lowercased() == "http" {
            throw SigilInputError("https is required: Sigil talks to servers over TLS only; give https://host[:port]")
        }
        guard let components, components.scheme == "https",
            let host = components.host, !host.isEmpty
        else { throw SigilInputError("expected an https:// URL") }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return (bare, components.port ?? 443)
    }

    static func authority(_ host: String, _ port: Int) -> String {
        (host.contains(":") ? "[\(host)]" : host) + (port == 443 ? "" : ":\(port)")
    }
}
