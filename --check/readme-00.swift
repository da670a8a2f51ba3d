// README.md line 195
import SigilClient
@MainActor
func readmeSnippet0(_ token: String, _ user: String) async throws {
    // token: the logged-in user's enrollment JWT, from your login; user: who logged in.
    let device = try SigilDevice(store: KeychainDeviceStore(accessGroup: "ABCDE12345.com.example.shared"))
    switch await device.enrollmentState {
    case .unknown: return                                         // the Keychain is locked (before first unlock): wait
    case .enrolled(let identity) where identity.userID != user:   // the Keychain outlives a logout: another user's
        try await device.reset()
    case .enrolled, .notEnrolled: break
    }
    if case .notEnrolled = await device.enrollmentState {
        let server = "https://api.example.com"
        do {                                                      // App Attest vouches once for the enclave key
            let appAttest = try await AppAttestSigner.generate()
            try await device.enroll(try SecureEnclaveSigningKey(), vouchedBy: appAttest, server: server, token: token)
        } catch AppAttestFailure.unsupported {                    // a simulator, a Mac: the enclave key alone
            try await device.enroll(try SecureEnclaveSigningKey(), server: server, token: token)
        }
    }
    var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/transfers")
    request.headerFields[.contentType] = "application/json"
    do {
        let answer = try await device.send(request, body: Array(#"{"to":"acct_2","amount":"25.00"}"#.utf8))
        print(answer.head.status)
    } catch let refusal as SigilError where refusal.code == .revokedKey || refusal.code == .unknownKey {
        try await device.reset(revoke: false)                     // the server said so, signed: enroll again
    }                                                             // a SigilClientError: retry later, keep the identity
    try await device.reset()                                      // on sign-out: revoked, every Keychain item deleted
}
