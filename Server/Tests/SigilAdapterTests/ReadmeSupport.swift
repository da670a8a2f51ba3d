import Foundation
import OpenAPIRuntime

// What swift-openapi-generator would generate for the README's OpenAPI snippet (Readme/Readme07.swift):
// the tests' own generated-style client and handler protocol, under the generator's names.
typealias Client = Greeter.Client
typealias APIProtocol = Greeter.API

extension Greeter.API {
    /// The generated `registerHandlers(on:serverURL:middlewares:)`.
    func registerHandlers(on transport: any ServerTransport, serverURL: URL, middlewares: [any ServerMiddleware])
        throws
    {
        try Greeter.registerHandlers(self, on: transport, serverURL: serverURL, middlewares: middlewares)
    }
}
