import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore

/// What an app calls on its device, as a protocol: ``SigilDevice`` conforms, and an app's unit tests
/// put a double of their own in its place (or a real ``SigilDevice`` against SigilTesting's
/// in-process server).
public protocol SigilDeviceProtocol: Actor {
    /// Whether the device is enrolled: enrolled, not enrolled, or unknown (the store not readable yet).
    var enrollmentState: SigilDevice.EnrollmentState { get async }
    /// Signs and sends `request`, and checks the signed answer.
    func send(_ request: HTTPRequest, body: [UInt8], sealed: Bool?) async throws -> SigilResponse
    /// ``send(_:body:sealed:)`` for a Foundation `URLRequest`.
    func data(for urlRequest: URLRequest, sealed: Bool?) async throws -> (Data, HTTPURLResponse)
    /// Enrolls `key` with `server`.
    @discardableResult
    func enroll(_ key: any SignatureProvider, server: String, token: String?, enrollment: DeviceEnrollment)
        async throws -> DeviceIdentity
    /// Rotates the device to `next`.
    @discardableResult
    func rotate(to next: any SignatureProvider) async throws -> DeviceIdentity
    /// Deletes the identity, and asks the server to revoke it when `revoke`.
    func reset(revoke: Bool) async throws
}

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
