import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles

/// App Attest for the simulator and development devices, as Firebase App Check's debug provider: a
/// software P-256 key stands in for App Attest's, and its "attestation" is a MAC with a debug token
/// the server was started with (`sigil serve --app-attest-debug-token FILE`). A server without that
/// flag refuses it (`enrollment-refused`), so a build that ships it by mistake enrolls nothing in
/// production; the server logs every debug enrollment.
///
/// ```swift
/// #if targetEnvironment(simulator)
///     let provider: any AppAttestProvider = AppAttestDebugProvider(token: debugToken, appID: "ABCDE12345.com.example.app")
/// #else
///     let provider: any AppAttestProvider = SystemAppAttest()
/// #endif
/// let signer = try await AppAttestSigner.generate(provider: provider)
/// ```
///
/// Assertions are App Attest's own format (the App ID's hash, a counter, an ECDSA signature), so the
/// server checks requests exactly as it checks a device's. The keys' seeds are kept, 0600, in
/// `directory` (the app's Application Support by default), so a key signs again after a relaunch.
///
/// - Warning: the debug token lets anyone holding it enroll as the app. Keep it out of release builds
///   and out of the repository; give each developer their own.
public struct AppAttestDebugProvider: AppAttestProvider {
    let token: [UInt8]
    let appID: String
    let directory: String
    /// The next assertion's counter, shared by copies of this provider.
    let counter: Locked<UInt32>

    /// A provider for the app `appID` (team ID . bundle ID) with the server's debug token.
    ///
    /// - Parameter directory: where the keys' seeds are kept (made 0700).
    public init(token: String, appID: String, directory: String? = nil) {
        self.token = Array(token.utf8)
        self.appID = appID
        self.directory =
            directory
            ?? (FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first?.path
                ?? NSTemporaryDirectory()) + "/sigil-app-attest-debug"
        // Seconds since 2023-11-14: above every counter an earlier launch of this app used, unless it
        // made more than one assertion a second on average since it started.
        counter = Locked(UInt32(clamping: max(1, Int64(Date().timeIntervalSince1970) - 1_700_000_000)))
    }

    public var isSupported: Bool { true }

    public func generateKey() async throws -> String {
        var generator = SystemRandomNumberGenerator()
        var seed: [UInt8]
        var made: P256.Signing.PrivateKey?
        repeat {  // a derived scalar at or above the curve's order (one in 2^32) is drawn again
            seed = (0..<32).map { _ in generator.next() }
            made = try? Self.key(seed: seed)
        } while made == nil
        guard let key = made else { throw AppAttestFailure.unsupported }
        let keyID = Data(SHA256.hash(data: key.publicKey.x963Representation)).base64EncodedString()
        try SecureFile.createDirectory(directory)
        try SecureFile.write(seed, to: path(keyID))
        return keyID
    }

    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        let key = try self.key(keyID)
        let x963 = Array(key.publicKey.x963Representation)
        let keyIDBytes = Array(Data(base64Encoded: keyID) ?? Data())
        let mac = AppAttestDebug.mac(
            token: token, keyID: keyIDBytes, publicKey: x963, clientDataHash: Array(clientDataHash))
        let object: [String: String] = [
            "fmt": AppAttestDebug.format, "publicKey": Base64.encode(x963), "mac": Base64.encode(mac),
        ]
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        let key = try self.key(keyID)
        let count = counter.withLock { value in
            value &+= 1
            return value
        }
        var authenticatorData = Array(SHA256.hash(data: Array(appID.utf8)))
        authenticatorData.append(0)
        authenticatorData += withUnsafeBytes(of: count.bigEndian, Array.init)
        // App Attest signs the nonce with ECDSA over SHA-256, so the nonce is hashed once more.
        let nonce = Array(SHA256.hash(data: authenticatorData + Array(clientDataHash)))
        let signature = Array(try key.signature(for: nonce).derRepresentation)
        return Data(AppAttestAssertion(signature: signature, authenticatorData: authenticatorData).encoded)
    }

    func path(_ keyID: String) -> String {
        directory + "/" + Hex.encode(Array(SHA256.hash(data: Array(keyID.utf8)).prefix(16)))
    }

    func key(_ keyID: String) throws -> P256.Signing.PrivateKey {
        guard let seed = try SecureFile.read(path(keyID), secret: true) else { throw AppAttestFailure.keyInvalidated }
        return try Self.key(seed: seed)
    }

    static func key(seed: [UInt8]) throws -> P256.Signing.PrivateKey {
        let scalar = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: seed), info: Array("sigil app attest debug key".utf8),
            outputByteCount: 32)
        return try scalar.withUnsafeBytes { try P256.Signing.PrivateKey(rawRepresentation: $0) }
    }
}
