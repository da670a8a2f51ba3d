import Foundation
import HTTPTypes
import SigilCore

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
        guard let scheme = request.scheme, let authority = request.authority,
            let url = URL(string: "\(scheme)://\(authority)\(request.path ?? "/")")
        else { throw SigilInputError("the request needs a scheme, an authority and a path") }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        if !body.isEmpty { urlRequest.httpBody = Data(body) }
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else { throw SigilInputError("not an HTTP response") }
        var head = HTTPResponse(status: .init(code: http.statusCode))
        for (name, value) in http.allHeaderFields {
            guard let text = name as? String, let name = HTTPField.Name(text), let value = value as? String else {
                continue
            }
            head.headerFields.append(HTTPField(name: name, value: value))
        }
        return (head, Array(data))
    }
}
