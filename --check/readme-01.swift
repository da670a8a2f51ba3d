// README.md line 784
import Foundation
import SigilClient
@MainActor
func readmeSnippet1(_ transport: URLSessionTransport, _ signer: RequestSigner, _ clock: ServerClock, _ serverKey: ResponseVerifier, _ identity: DeviceIdentity, _ request: HTTPRequest, _ body: [UInt8]) async throws {
    var session = SigilSession(transport: transport, signer: signer, clock: clock,
                               responses: serverKey, requireSignedResponses: true)
    session.sealingKey = try identity.sealingKey?.key()   // stored by DeviceEnrollment
    let answer = try await session.send(request, body: body, sealed: true)  // answer.body is the opened plaintext
}
