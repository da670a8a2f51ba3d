import NIOCore
import NIOPosix
import NIOSSL
@_spi(Sigil) import SigilCore

/// Reads the certificate chain a live TLS server presents, to print its pins.
///
/// The chain is read, not trusted: nothing is sent after the handshake, and the caller decides
/// what the pins are worth (`sigil pin HOST:PORT` prints them for a person to compare).
public enum PeerCertificates {
    /// The DER certificates `host:port` presents, leaf first.
    ///
    /// Offers TLS 1.2 and 1.3 and NIOSSL's default groups (X25519MLKEM768 first), so it reads
    /// post-quantum-only servers as well as classical ones.
    /// - Throws: ``SigilInputError`` when the server cannot be reached or the handshake fails.
    public static func fetch(host: String, port: Int, timeoutSeconds: Int64 = 10) async throws -> [[UInt8]] {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .noHostnameVerification
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let chain = group.next().makePromise(of: [NIOSSLCertificate].self)
        let serverName = Certificates.ipAddressBytes(host) == nil ? host : nil
        do {
            let channel = try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(timeoutSeconds))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(
                            context: context,
                            serverHostname: serverName,
                            customVerificationCallback: { certificates, verification in
                                chain.succeed(certificates)
                                verification.succeed(.certificateVerified)
                            }
                        )
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(host: host, port: port)
                .get()
            channel.closeFuture.whenComplete { _ in
                chain.fail(SigilInputError("\(host):\(port) closed the connection during the handshake"))
            }
            let scheduled = channel.eventLoop.scheduleTask(in: .seconds(timeoutSeconds)) {
                chain.fail(SigilInputError("\(host):\(port) did not finish the TLS handshake"))
            }
            defer {
                scheduled.cancel()
                channel.close(promise: nil)
            }
            return try await chain.futureResult.get().map { try $0.toDERBytes() }
        } catch {
            chain.fail(error)  // a promise is never left unfulfilled; a second completion is ignored
            if let error = error as? SigilInputError { throw error }
            throw SigilInputError("cannot read the certificates of \(host):\(port): \(error)")
        }
    }
}
