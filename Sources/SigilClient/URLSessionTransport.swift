import Foundation
import HTTPTypes
import HTTPTypesFoundation
@_spi(Sigil) import SigilCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``SigilTransport`` over Foundation's `URLSession`: what an app uses, with a
/// `PinningSessionDelegate` on Apple platforms for pins and the client identity.
public struct URLSessionTransport: SigilTransport, @unchecked Sendable {
    /// The session (unchecked `Sendable`: `URLSession` is thread-safe).
    public let session: URLSession

    /// Creates a transport over `session`.
    public init(session: URLSession) { self.session = session }

    public func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        guard var urlRequest = URLRequest(httpRequest: request) else {
            throw SigilInputError("the request needs a scheme, an authority and a path")
        }
        if !body.isEmpty { urlRequest.httpBody = Data(body) }
        let (data, response) = try await session.data(for: urlRequest)
        guard let head = (response as? HTTPURLResponse)?.httpResponse else {
            throw SigilInputError("not an HTTP response")
        }
        return (head, Array(data))
    }

    /// Uploads the body from the file (`URLSession.upload(for:fromFile:)`), never reading it whole.
    public func send(_ request: HTTPRequest, bodyFile: URL) async throws -> (HTTPResponse, [UInt8]) {
        guard let urlRequest = URLRequest(httpRequest: request) else {
            throw SigilInputError("the request needs a scheme, an authority and a path")
        }
        let (data, response) = try await session.upload(for: urlRequest, fromFile: bodyFile)
        guard let head = (response as? HTTPURLResponse)?.httpResponse else {
            throw SigilInputError("not an HTTP response")
        }
        return (head, Array(data))
    }
}
