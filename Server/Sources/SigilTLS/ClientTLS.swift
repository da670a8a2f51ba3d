import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
@_spi(Sigil) import SigilCore
import SigilFiles

/// TLS settings of a Sigil client: TLS 1.3, the hybrid group X25519MLKEM768 offered first (or only,
/// with `pqOnly`), the server's certificate validated against the system roots or given anchors,
/// and a client certificate when one is configured.
public enum ClientTLS {
    /// A client configuration.
    ///
    /// - Parameters:
    ///   - pqOnly: offer X25519MLKEM768 only; a server without it fails the handshake.
    ///   - anchors: trust only these certificates (a self-signed server's own certificate, say)
    ///     instead of the system roots. The host name or IP address is checked either way.
    ///   - identity: the client certificate chain and key to present.
    public static func configuration(
        pqOnly: Bool = false,
        anchors: [NIOSSLCertificate]? = nil,
        identity: TLSIdentity? = nil
    ) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv13
        configuration.curves = pqOnly ? [.x25519_MLKEM768] : [.x25519_MLKEM768, .x25519]
        configuration.certificateVerification = .fullVerification
        if let anchors { configuration.trustRoots = .certificates(anchors) }
        if let identity {
            configuration.certificateChain = identity.chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(identity.privateKey)
        }
        return configuration
    }
}

extension TLSIdentity {
    /// Loads a PKCS#12 bundle (certificate chain and key) protected by `password`.
    ///
    /// - Throws: ``SigilInputError`` when the file does not open with the password, or when its group
    ///   or others may read or write it (``SecureFile/readSecret(_:)``); the password is never part
    ///   of the message.
    public init(pkcs12File path: String, password: String) throws {
        let bytes = try SecureFile.readSecret(path)
        do {
            let bundle = try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: Array(password.utf8))
            self.init(chain: bundle.certificateChain, privateKey: bundle.privateKey)
        } catch {
            throw SigilInputError("\(path) does not open as PKCS#12 with the given password")
        }
    }
}

/// Why a client could not use its connection to a server, in words a person can act on: nothing
/// listens there, the certificate is not trusted, the server wants a client certificate…
public struct ConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// Nothing accepts connections on the port (the server is not running, or listens elsewhere).
        case refused
        /// No answer to the connection attempt in time (a firewall, a wrong address).
        case timedOut
        /// The host name does not resolve.
        case unresolved
        /// No route to the host.
        case unreachable
        /// The server's certificate does not validate against the roots the client trusts.
        case untrustedCertificate
        /// The server requires a client certificate and none was presented.
        case clientCertificateRequired
        /// The server refused the client certificate presented (not from a CA it trusts).
        case clientCertificateRefused
        /// The server and the client share no TLS version or key exchange group.
        case noCommonParameters
    }

    /// What went wrong.
    public let reason: Reason
    /// The server's host.
    public let host: String
    /// The server's port.
    public let port: Int

    /// Creates the error.
    public init(_ reason: Reason, host: String, port: Int) {
        self.reason = reason
        self.host = host
        self.port = port
    }

    /// `host:port`, with an IPv6 address in brackets.
    public var endpoint: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    public var description: String {
        switch reason {
        case .refused:
            return "connection refused to \(endpoint): nothing listens there (is the server running, on that port?)"
        case .timedOut:
            return "no answer from \(endpoint) in time (a wrong address, or a firewall dropping the connection)"
        case .unresolved:
            return "\(host) does not resolve to an address"
        case .unreachable:
            return "no route to \(endpoint)"
        case .untrustedCertificate:
            return "the certificate of \(endpoint) does not validate against the roots this client trusts"
        case .clientCertificateRequired:
            return "\(endpoint) requires a client certificate (TLS), and none was presented"
        case .clientCertificateRefused:
            return "\(endpoint) refused the client certificate presented (not from a CA it trusts, or expired)"
        case .noCommonParameters:
            return "\(endpoint) and this client share no TLS version or key exchange group"
        }
    }
}

extension ClientTLS {
    /// Connects to `host:port` with `configuration`, completes the TLS handshake and waits briefly for
    /// the server's first word, to tell why a connection failed: refused, untrusted, a client
    /// certificate wanted or refused. Nothing is sent beyond the handshake.
    ///
    /// - Parameters:
    ///   - configuration: the client's TLS settings (its anchors, groups and identity).
    ///   - timeout: the deadline of the connection, and of the handshake.
    ///   - linger: how long to wait after the handshake for a refusal of the client's certificate,
    ///     which a TLS 1.3 server sends only once the client's handshake has ended: 2 s, as this runs
    ///     only to explain a failure already seen, and a busy server's alert took longer than 500 ms.
    /// - Returns: what stopped the connection, or `nil` when it found nothing wrong.
    public static func diagnose(
        host: String,
        port: Int,
        configuration: TLSConfiguration,
        timeout: TimeAmount = .seconds(5),
        linger: TimeAmount = .seconds(2)
    ) async -> ConnectionError? {
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            return nil
        }
        let group = MultiThreadedEventLoopGroup.singleton
        let outcome = group.next().makePromise(of: (any Error)?.self)
        let serverName = Certificates.ipAddressBytes(host) == nil ? host : nil
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let tls = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                        try channel.pipeline.syncOperations.addHandlers(
                            tls, ProbeHandler(outcome: outcome, linger: linger))
                    }
                }
                .connect(host: host, port: port)
                .get()
        } catch {
            outcome.succeed(nil)
            return classify(
                error, host: host, port: port, presentedCertificate: !configuration.certificateChain.isEmpty)
        }
        let deadline = channel.eventLoop.scheduleTask(in: timeout) { outcome.succeed(nil) }
        let error = try? await outcome.futureResult.get()
        deadline.cancel()
        try? await channel.close()
        return error.flatMap {
            classify($0, host: host, port: port, presentedCertificate: !configuration.certificateChain.isEmpty)
        }
    }

    /// The ``ConnectionError`` an error of a connection attempt (NIO's, NIOSSL's, BoringSSL's) stands
    /// for, if it is one this type names.
    public static func classify(_ error: any Error, host: String, port: Int, presentedCertificate: Bool)
        -> ConnectionError?
    {
        reason(of: error, presentedCertificate: presentedCertificate).map {
            ConnectionError($0, host: host, port: port)
        }
    }

    static func reason(of error: any Error, presentedCertificate: Bool) -> ConnectionError.Reason? {
        switch error {
        case let error as ConnectionError:
            return error.reason
        case let error as NIOConnectionError:
            for failure in error.connectionErrors {
                if let reason = reason(of: failure.error, presentedCertificate: presentedCertificate) { return reason }
            }
            return error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil)
                ? .unresolved : nil
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return .refused
            case ENETUNREACH, EHOSTUNREACH: return .unreachable
            case ETIMEDOUT: return .timedOut
            default: return nil
            }
        case ChannelError.connectTimeout:
            return .timedOut
        case NIOSSLError.handshakeFailed(let boring):
            return reason(ofTLS: "\(boring)", presentedCertificate: presentedCertificate)
        case let error as BoringSSLError:
            return reason(ofTLS: "\(error)", presentedCertificate: presentedCertificate)
        default:
            return nil
        }
    }

    /// Reads BoringSSL's reason names (stable across its versions: they are OpenSSL's).
    static func reason(ofTLS text: String, presentedCertificate: Bool) -> ConnectionError.Reason? {
        if text.contains("CERTIFICATE_VERIFY_FAILED") { return .untrustedCertificate }
        if text.contains("CERTIFICATE_REQUIRED") { return .clientCertificateRequired }
        if text.contains("UNKNOWN_CA") || text.contains("BAD_CERTIFICATE") || text.contains("CERTIFICATE_UNKNOWN")
            || text.contains("CERTIFICATE_EXPIRED") || text.contains("UNSUPPORTED_CERTIFICATE")
        {
            return presentedCertificate ? .clientCertificateRefused : .clientCertificateRequired
        }
        if text.contains("HANDSHAKE_FAILURE") || text.contains("NO_SHARED_GROUP")
            || text.contains("PROTOCOL_VERSION") || text.contains("UNSUPPORTED_PROTOCOL")
            || text.contains("NO_SHARED_CIPHER")
        {
            return .noCommonParameters
        }
        return nil
    }
}

/// Completes the probe's promise with the first error the connection meets, or with none when it
/// stays open `linger` after the handshake (or closes without an error).
private final class ProbeHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    let outcome: EventLoopPromise<(any Error)?>
    let linger: TimeAmount

    init(outcome: EventLoopPromise<(any Error)?>, linger: TimeAmount) {
        self.outcome = outcome
        self.linger = linger
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            let outcome = self.outcome
            context.eventLoop.scheduleTask(in: linger) { outcome.succeed(nil) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        outcome.succeed(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        outcome.succeed(nil)
        context.fireChannelInactive()
    }
}
