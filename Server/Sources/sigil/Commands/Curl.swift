import ArgumentParser
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilRSA
import SigilTLS

/// `sigil curl`: a signed, pinned, post-quantum HTTPS request, and why it failed when it did.
struct Curl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a signed request over pinned TLS; -v shows the base, the pins, the clock and the verdict.",
        discussion: "Exit 0: a response (with a valid signature when the server's key is known); 1: a refusal (any "
            + "4xx or 5xx answer, said on standard error with its status) or an answer not signed as it must be; "
            + "2: unusable arguments or no connection."
    )

    @Option(name: .customShort("X"), help: "The method (default GET, or POST with data).")
    var method: String?

    @Option(name: .customShort("H"), help: "A header, 'Name: value'.")
    var headers: [String] = []

    @Option(name: .customShort("d"), help: "The body.")
    var data: String?

    @Option(name: .customLong("data-binary"), help: "The body, or @FILE.")
    var dataBinary: String?

    @Option(name: .long, help: "A JSON body (sets Content-Type and Accept).")
    var json: String?

    @Option(name: .long, help: "The wire profile.")
    var profile: SignatureProfile = .sigilV1

    @Option(name: .long, help: "A private key or HMAC secret file to sign with.")
    var key: String?

    @Option(name: .customLong("key-id"), help: "The key ID for --key (default: derived).")
    var keyID: String?

    @Option(
        name: .long,
        help: """
            An identity from sigil enroll (default: 'default' when it exists, and only for the origin it \
            enrolled with; naming one signs for any origin).
            """)
    var identity: String?

    @Flag(name: .customLong("use-secret"), help: "Sign with the identity's HMAC secret.")
    var useSecret = false

    @Option(name: .long, help: "A pin of the server (sha256/…).")
    var pin: [String] = []

    @Flag(name: .customLong("allow-single-pin"), help: "Accept a single pin with no backup.")
    var allowSinglePin = false

    @Option(name: .long, help: "Trust the CA certificates in this PEM file instead of the system roots.")
    var cacert: String?

    @Option(name: .long, help: "A client certificate (PEM).")
    var cert: String?

    @Option(name: .customLong("cert-key"), help: "The client certificate's key (PEM).")
    var certKey: String?

    @Option(name: .long, help: "A PKCS#12 client bundle.")
    var p12: String?

    @Option(name: .customLong("p12-password-env"), help: "The environment variable with the PKCS#12 password.")
    var p12PasswordEnv = "SIGIL_P12_PASSWORD"

    @Flag(name: .customLong("pq-only"), help: "Offer X25519MLKEM768 only.")
    var pqOnly = false

    @Flag(name: .customShort("i"), help: "Print the status line and headers.")
    var include = false

    @Flag(name: .customShort("v"), help: "Explain: base sent, TLS, pins, clock, response signature.")
    var verbose = false

    @Flag(name: .long, help: "Seal the body to the server's X-Wing key (HPKE, PROTOCOL.md section 6); open the answer.")
    var seal = false

    @Option(
        name: .customLong("sealing-key"),
        help: "The server's X-Wing public key file for --seal (default: the one the identity was enrolled with).")
    var sealingKeyFile: String?

    @Flag(
        name: .long,
        help: "Add a DPoP proof (RFC 9449) made with the signing key, and --token as Authorization: DPoP.")
    var dpop = false

    @Option(name: .long, help: "The DPoP-bound access token, or @FILE (with --dpop).")
    var token: String?

    @Flag(
        name: .customLong("no-signature"),
        help: "With --dpop: send DPoP alone, without a Sigil signature (as an OAuth client does).")
    var noSignature = false

    @Argument(help: "https://host[:port]/path?query")
    var url: String

    func run() async throws {
        let (host, port) = try Enrollment.endpoint(url)
        guard let parsed = URL(string: url), let components = URLComponents(string: url),
            let path = HTTPRequest(url: parsed).path
        else { throw SigilInputError("expected an https:// URL") }
        if !pin.isEmpty { try Pins.check(pin, allowSinglePin: allowSinglePin) }
        let body = try readBody()
        let origin = Origin(scheme: "https", authority: HTTPRequest(url: parsed).authority)
        if let route = PublicRoute(path: path) {
            guard !seal, !dpop else {
                throw SigilInputError(
                    "\(route.path) is a public route, answered unsigned to anyone: --seal and --dpop do not apply")
            }
            // The default identity lends its pins and the server's key only to its own server.
            var stored = try storedIdentity(for: origin)
            if identity == nil, let held = stored, Origin(url: held.identity.server) != origin { stored = nil }
            let connection = try await connect(
                host: host, port: port, stored: stored, clientIdentity: try clientIdentity(stored))
            do {
                try await readPublic(
                    route, body: body, authority: components.port.map { "\(host):\($0)" } ?? host, path: path,
                    stored: stored, connection: connection)
                try await connection.shutdown()
            } catch {
                try? await connection.shutdown()
                throw error
            }
            return
        }
        // A key and a server both given by hand (`--key` with `--cacert` or `--pin`): the default
        // identity lends nothing, neither pins nor the server's key (its pins named another server on
        // the same origin in the README's DPoP walkthrough). With `--key` alone it lends both.
        let byHand = identity == nil && key != nil && (cacert != nil || !pin.isEmpty)
        let stored = byHand ? nil : try storedIdentity(for: origin)
        if identity == nil, key == nil, let stored {
            // An identity whose server does not read as an origin signs for none.
            guard let enrolled = Origin(url: stored.identity.server) else {
                throw SigilInputError("the default identity names no origin it enrolled with; enroll again")
            }
            guard Origin(scheme: "https", authority: HTTPRequest(url: parsed).authority) == enrolled else {
                throw SigilInputError(
                    "the default identity signs for \(enrolled) only, where it enrolled; name it with --identity to sign for another origin"
                )
            }
        }
        guard dpop == (token != nil), !noSignature || dpop else {
            throw SigilInputError("--dpop goes with --token (and --no-signature with --dpop)")
        }
        let (signingKey, signingKeyID) = try signingKey(stored)
        // `@FILE`: an access token is a secret (a bearer's, bound to the key only with DPoP), read
        // (and refused when others may read it) before anything is sent.
        let accessToken = try token.map { token in
            token.hasPrefix("@")
                ? String(decoding: try SecureFile.readSecret(String(token.dropFirst())), as: UTF8.self) : token
        }
        let connection = try await connect(
            host: host, port: port, stored: stored, clientIdentity: try clientIdentity(stored))
        let clock = ServerClock()
        do {
            try await send(
                body: body, host: host, port: components.port, path: path, stored: stored, accessToken: accessToken,
                signer: RequestSigner(key: signingKey, keyID: signingKeyID, profile: profile, clock: clock),
                clock: clock, connection: connection)
            try await connection.shutdown()
        } catch {
            try? await connection.shutdown()
            throw error
        }
    }

    /// A pinned (or, with no pin, `--cacert` or system-rooted) post-quantum TLS connection to the server.
    func connect(
        host: String, port: Int, stored: (identity: DeviceIdentity, store: FileDeviceStore)?,
        clientIdentity: TLSIdentity?
    ) async throws -> SigilHTTPClient {
        var options = SigilHTTPClient.Options()
        // Pins given by hand replace the identity's; `--cacert` adds anchors and keeps them (dropping
        // them would let any certificate of that CA read the identity's requests).
        options.pins = pin.isEmpty ? stored?.identity.pins ?? [] : pin
        options.allowSinglePin = allowSinglePin || (pin.isEmpty && stored != nil)
        options.pqOnly = pqOnly
        options.anchors = try cacert.map(Anchors.load)
        options.identity = clientIdentity
        return try await SigilHTTPClient.connect(host: host, port: port, options: options)
    }

    /// `-v`: the TLS groups offered and the pins.
    func noteConnection(_ connection: SigilHTTPClient) {
        guard verbose else { return }
        note("TLS 1.3, groups " + (pqOnly ? "X25519MLKEM768 only" : "X25519MLKEM768 first, X25519"))
        if let report = connection.pinReport {
            note("pins " + (report.matched ? "matched: " : "MISMATCH: ") + "\(report)")
        }
    }

    /// Reads one of the server's public routes, sent unsigned as anyone may (no key needed). Discovery
    /// and the key directory carry signatures of their own (PROTOCOL.md sections 8.1 and 12): when an
    /// identity holds the server's response key they are checked whatever the status, and nothing of
    /// an answer they do not sign is printed (exit 1); the attestation challenge is never signed.
    func readPublic(
        _ route: PublicRoute, body: [UInt8], authority: String, path: String,
        stored: (identity: DeviceIdentity, store: FileDeviceStore)?, connection: SigilHTTPClient
    ) async throws {
        noteConnection(connection)
        var request = HTTPRequest(
            method: try method.map { name in
                guard let method = HTTPRequest.Method(name) else { throw SigilInputError("no method '\(name)'") }
                return method
            } ?? (body.isEmpty ? route.method : .post),
            scheme: "https", authority: authority, path: path)
        if json != nil {
            request.headerFields[.contentType] = "application/json"
            request.headerFields[.accept] = "application/json"
        }
        try appendHeaders(to: &request)
        if verbose { note("\(route.path): a public route, sent unsigned") }
        let (head, answer) = try await connection.transport.send(request, body: body)
        let statusLine = "HTTP \(head.status.code) \(head.status.reasonPhrase)"
        // Whether the answer carries a signature by the key the identity holds; nil: none to check.
        var verified: Bool?
        if let stored, route != .attestChallenge {
            let key = try KeyFile.load(Array(stored.identity.responseKey.utf8), formats: .withRSA).verificationKey
            switch route {
            case .discovery:
                let field = HTTPField.Name(Registration.DiscoverySignature.field)
                verified =
                    !Registration.DiscoverySignature.verifiedSigners(
                        field.flatMap { head.headerFields[$0] }, body: answer,
                        trusted: [stored.identity.responseKeyID: key]
                    ).isEmpty
            default:
                // Taken only when a key the identity trusts signed the list (each listed key signing too).
                let trusted = TrustedResponseKeys([stored.identity.responseKeyID: key], keyFormats: .withRSA)
                trusted.learn(directory: answer, response: head, request: request, now: ServerClock().now())
                verified = trusted.current != nil
            }
        }
        if verbose {
            let said =
                switch verified {
                case true?: "signature verified (\(route == .discovery ? "Sigil-Discovery-Signature" : "RFC 9421"))"
                case false?: "NOT signed by the server's key"
                case nil:
                    route == .attestChallenge
                        ? "unsigned, as this route answers"
                        : "signature not checked (no server key: sigil enroll, or name an --identity)"
                }
            note("response: HTTP \(head.status.code), \(said)")
        }
        let hint = request.method == route.method ? "" : " (\(route.path) is \(route.method.rawValue))"
        if verified == false {
            // Not the enrolled server's word, whatever its status (an impostor holding the TLS key
            // answered `203` with another server's keys): nothing of it is printed.
            warn(
                "the answer is not signed by the server's key: \(statusLine)\(hint); "
                    + "this server signs its \(route == .discovery ? "discovery" : "key directory"): a proxy or another server answered?"
            )
            throw ExitStatus(code: 1)
        }
        if include {
            var lines = statusLine + "\r\n"
            for field in head.headerFields { lines += "\(field.name.rawName): \(field.value)\r\n" }
            FileHandle.standardOutput.write(Data((lines + "\r\n").utf8))
        }
        FileHandle.standardOutput.write(Data(answer))
        if head.status.code >= 400 {
            warn("\(statusLine), unsigned\(hint)")
            throw ExitStatus(code: 1)
        }
    }

    /// The `-H` headers, added to `request`.
    func appendHeaders(to request: inout HTTPRequest) throws {
        for header in headers {
            let parts = header.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let name = HTTPField.Name(String(parts[0])) else {
                throw SigilInputError("a header is 'Name: value'")
            }
            request.headerFields.append(HTTPField(name: name, value: parts[1].trimmingCharacters(in: .whitespaces)))
        }
    }

    /// Sends the request over `connection` and prints the outcome.
    func send(
        body: [UInt8],
        host: String,
        port: Int?,
        path: String,
        stored: (identity: DeviceIdentity, store: FileDeviceStore)?,
        accessToken: String?,
        signer: RequestSigner,
        clock: ServerClock,
        connection: SigilHTTPClient
    ) async throws {
        noteConnection(connection)

        // Whenever an identity holds the server's response key, answers are checked with it.
        var responses: ResponseVerifier?
        if let stored {
            // The key decides its algorithm (P-256 keys verify ecdsa-p256-sha256 by default).
            let key = try KeyFile.load(Array(stored.identity.responseKey.utf8), formats: .withRSA).verificationKey
            responses = ResponseVerifier(key: key, keyID: stored.identity.responseKeyID, clock: clock)
            // The server's next keys are learnt from its discovery, signed by the key the identity holds.
            responses?.trusted = TrustedResponseKeys([stored.identity.responseKeyID: key], keyFormats: .withRSA)
            responses?.trusted?.keysTag = stored.identity.keysTag
        }
        var request = HTTPRequest(
            method: .init(method ?? (body.isEmpty ? "GET" : "POST")) ?? .get, scheme: "https",
            authority: port.map { "\(host):\($0)" } ?? host, path: path)
        if json != nil {
            request.headerFields[.contentType] = "application/json"
            request.headerFields[.accept] = "application/json"
        }
        try appendHeaders(to: &request)
        let enrolledOrigin = stored.flatMap { Origin(url: $0.identity.server) }
        let answersFromEnrolled = enrolledOrigin != nil && enrolledOrigin == Origin(request)
        // The enrolled server's answers are signed with the key the identity holds: an unsigned one is
        // refused, whatever a proxy in between says.
        // (Checked below rather than by the session, so that the refusal names the status it refuses.)
        var session = SigilSession(
            transport: connection.transport, signer: signer, clock: clock, responses: responses,
            requireSignedResponses: false)
        // The default identity signs for its own server only; a named one where the user says.
        if identity == nil, key == nil { session.origin = enrolledOrigin }
        if let value = accessToken {
            let authorization = DPoPAuthorization(
                prover: try DPoPProver(signer: signer.key, clock: clock),
                accessToken: value.trimmingCharacters(in: .whitespacesAndNewlines))
            if verbose { note("DPoP proof with key thumbprint \(authorization.prover.thumbprint)") }
            if noSignature {
                try await sendDPoPAlone(request, body: body, authorization: authorization, connection: connection)
                return
            }
            session.dpop = authorization
        }
        if seal {
            session.sealingKey = try sealingKey(stored?.identity)
            session.sealsBodies = true
            if verbose, let key = session.sealingKey {
                note("body sealed to X-Wing key \(key.keyID) (HPKE, sigil-hpke)")
            }
        }
        let response: SigilResponse
        do {
            response = try await session.send(request, body: body)
        } catch let error as SigilClientError where error.kind != .transport {
            FileHandle.standardError.write(Data("sigil: response refused: \(error)\n".utf8))
            throw ExitStatus(code: 1)
        }
        // A server key rotation learnt on the way is kept, so the next call trusts the new key first.
        if let stored, let trusted = responses?.trusted, let updated = stored.identity.following(trusted) {
            try stored.store.saveIdentity(updated)
            if verbose {
                if updated.responseKeyID != stored.identity.responseKeyID {
                    note("the server's keys moved on: now response key \(updated.responseKeyID), kept")
                }
                if updated.pins != stored.identity.pins {
                    note("pins from the server's signed discovery, kept: \(updated.pins.joined(separator: " "))")
                }
            }
        }
        let status = response.head.status
        let statusLine = "HTTP \(status.code) \(status.reasonPhrase)"
        let code = response.problemCode.map { " (\($0))" } ?? ""
        if answersFromEnrolled && !response.signatureVerified {
            // Not the enrolled server's word: nothing of it is printed as if it were.
            report(response, body: body, clockOffset: clock.offsetSeconds, signatures: responses != nil)
            let why =
                response.problemCode != nil
                ? "the server signs every refusal of a request whose signature it verified or whose key it does not know or revoked"
                : status.code == 404
                    ? "the server answers a route it does not have unsigned: check the method and path"
                    : "this server signs its answers: a proxy or another server answered?"
            warn("the answer is not signed: \(statusLine)\(code); \(why)")
            throw ExitStatus(code: 1)
        }
        report(response, body: body, clockOffset: clock.offsetSeconds, signatures: responses != nil)
        if include {
            var lines = statusLine + "\r\n"
            for field in response.head.headerFields { lines += "\(field.name.rawName): \(field.value)\r\n" }
            FileHandle.standardOutput.write(Data((lines + "\r\n").utf8))
        }
        FileHandle.standardOutput.write(Data(response.body))
        if status.code >= 400 || response.problemCode != nil {
            warn("\(statusLine)\(code), " + (response.signatureVerified ? "signed" : "unsigned"))
            throw ExitStatus(code: 1)
        }
    }

    /// `--dpop --no-signature`: the request with its DPoP proof and token only, sent once more with
    /// the server's nonce when it asks for one; nothing of the answer is signed.
    func sendDPoPAlone(
        _ request: HTTPRequest, body: [UInt8], authorization: DPoPAuthorization, connection: SigilHTTPClient
    ) async throws {
        var attempt = 0
        while true {
            attempt += 1
            var sent = request
            try authorization.authorize(&sent)
            let (head, answer) = try await connection.transport.send(sent, body: body)
            if authorization.learn(from: head), attempt == 1 {
                if verbose { note("the server asked for its DPoP nonce: sent once more with it") }
                continue
            }
            if include {
                var lines = "HTTP \(head.status.code) \(head.status.reasonPhrase)\r\n"
                for field in head.headerFields { lines += "\(field.name.rawName): \(field.value)\r\n" }
                FileHandle.standardOutput.write(Data((lines + "\r\n").utf8))
            }
            FileHandle.standardOutput.write(Data(answer))
            guard head.status.code < 400 else {
                let challenge = head.headerFields[.wwwAuthenticate].map { " (\($0))" } ?? ""
                warn("HTTP \(head.status.code) \(head.status.reasonPhrase)\(challenge)")
                throw ExitStatus(code: 1)
            }
            return
        }
    }

    /// The key `--seal` seals to: `--sealing-key`, else the one stored at enrollment.
    func sealingKey(_ identity: DeviceIdentity?) throws -> SealingPublicKey {
        if let sealingKeyFile {
            return try Sealing.publicKey(pem: String(decoding: try IO.readFile(sealingKeyFile), as: UTF8.self))
        }
        guard let entry = identity?.sealingKey else {
            throw SigilInputError(
                "--seal needs --sealing-key FILE or an identity enrolled with a server that offers sealing")
        }
        return try entry.key()
    }

    /// The body from `--json`, `-d` or `--data-binary` (`@FILE` read once; an unreadable file is an error).
    func readBody() throws -> [UInt8] {
        if let json { return Array(json.utf8) }
        if let data { return Array(data.utf8) }
        if let dataBinary {
            if dataBinary.hasPrefix("@") { return try IO.readFile(String(dataBinary.dropFirst())) }
            return Array(dataBinary.utf8)
        }
        return []
    }

    /// The identity named, else the default one. With `--key` (and no `--identity`), the default
    /// identity lends its pins and the server's response key when it enrolled with `origin`, and
    /// nothing at all otherwise.
    func storedIdentity(for origin: Origin?) throws -> (identity: DeviceIdentity, store: FileDeviceStore)? {
        let store = try Identities.store(identity ?? "default")
        if key != nil && identity == nil {
            guard let stored = try? store.identity(), let origin, Origin(url: stored.server) == origin else {
                return nil
            }
            return (stored, store)
        }
        guard let stored = try store.identity() else {
            if identity != nil { throw SigilInputError("no identity '\(identity ?? "")'; run sigil enroll") }
            return nil
        }
        return (stored, store)
    }

    func signingKey(_ stored: (identity: DeviceIdentity, store: FileDeviceStore)?) throws -> (SigningKey, String) {
        if let key {
            let (loaded, id) = try KeyOptions.parse(["--key", key] + (keyID.map { ["--key-id", $0] } ?? [])).load()
            guard let signer = loaded.signingKey else {
                throw SigilInputError("signing needs a private key or a secret")
            }
            return (signer, id)
        }
        guard let stored else { throw SigilInputError("give --key FILE or --identity NAME (see sigil enroll)") }
        if useSecret {
            guard let secret = try stored.store.secret(), let id = stored.identity.secretKeyID else {
                throw SigilInputError("the identity has no HMAC secret")
            }
            return (secret, id)
        }
        guard let privateKey = try stored.store.privateKey() else { throw SigilInputError("the identity has no key") }
        return (privateKey, stored.identity.keyID)
    }

    func clientIdentity(_ stored: (identity: DeviceIdentity, store: FileDeviceStore)?) throws -> TLSIdentity? {
        if let p12 {
            guard let password = ProcessInfo.processInfo.environment[p12PasswordEnv] else {
                throw SigilInputError("set the PKCS#12 password in $\(p12PasswordEnv)")
            }
            return try TLSIdentity(pkcs12File: p12, password: password)
        }
        if let cert {
            guard let certKey else { throw SigilInputError("--cert needs --cert-key") }
            return try TLSIdentity(certificateFile: cert, keyFile: certKey)
        }
        // The identity's certificate names its own key: it goes with requests that key signs.
        if key == nil, let stored, let certificate = stored.identity.clientCertificate,
            let key = try stored.store.privateKey()
        {
            return try TLSIdentity(certificatePEM: certificate, keyPEM: try KeyFile.privateKeyFile(for: key))
        }
        return nil
    }

    /// `-v`: the base sent, the clock, the verdict, and on a refusal the server's code and base diff.
    func report(_ response: SigilResponse, body: [UInt8], clockOffset: Int64, signatures: Bool) {
        guard verbose || response.problemCode != nil else { return }
        let sent =
            (try? CoveredBase.base(of: response.sentRequest, body: response.sentSealedBody ?? body, profile: profile))
            .map { String(decoding: $0, as: UTF8.self) } ?? ""
        if verbose {
            note("signature base sent:")
            for line in sent.split(separator: "\n", omittingEmptySubsequences: false) { note("  > \(line)") }
            note("attempts: \(response.attempts), clock offset from the server: \(clockOffset) s")
            if let keyID = response.sealedTo {
                note(
                    "sealed to \(keyID); answer "
                        + (response.answerSealed ? "sealed, opened" : "in the clear (a refusal)"))
            }
            note(
                "response: HTTP \(response.head.status.code), "
                    + (response.signatureVerified
                        ? "signature verified"
                        : signatures
                            ? "not signed"
                            : "signature not checked (no server key: sigil enroll, or name an --identity)"))
        }
        guard let code = response.problemCode else { return }
        if verbose { note("refused: \(code)") }
        if let serverBase = response.problemSignatureBase {
            note("signature base diff (- client, + server):")
            let client = sent.split(separator: "\n", omittingEmptySubsequences: false)
            let server = serverBase.split(separator: "\n", omittingEmptySubsequences: false)
            for index in 0..<max(client.count, server.count) {
                let mine = index < client.count ? String(client[index]) : nil
                let theirs = index < server.count ? String(server[index]) : nil
                if mine == theirs {
                    note("    \(mine ?? "")")
                } else {
                    if let mine { note("  - \(mine)") }
                    if let theirs { note("  + \(theirs)") }
                }
            }
        }
    }

    func note(_ text: String) { FileHandle.standardError.write(Data("* \(text)\n".utf8)) }

    /// One line on standard error that is not a `-v` note: what the answer was when it is not a success.
    func warn(_ text: String) { FileHandle.standardError.write(Data("sigil: \(text)\n".utf8)) }
}

/// The server's own public routes, which it answers unsigned to anyone (PROTOCOL.md sections 8 and
/// 12): everything else a Sigil server answers is signed.
enum PublicRoute: Equatable {
    /// `GET /.well-known/sigil`, signed by its own `Sigil-Discovery-Signature`.
    case discovery
    /// `GET /.well-known/http-message-signatures-directory`, signed by its own RFC 9421 signatures.
    case keyDirectory
    /// `POST /v1/attest/challenge`, never signed.
    case attestChallenge

    /// The route `path` (with or without its query) names, if public.
    init?(path: String) {
        switch path.prefix { $0 != "?" } {
        case Registration.Path.discovery: self = .discovery
        case Registration.Path.keyDirectory: self = .keyDirectory
        case Registration.Path.attestChallenge: self = .attestChallenge
        default: return nil
        }
    }

    var path: String {
        switch self {
        case .discovery: Registration.Path.discovery
        case .keyDirectory: Registration.Path.keyDirectory
        case .attestChallenge: Registration.Path.attestChallenge
        }
    }

    /// The method the server answers it for.
    var method: HTTPRequest.Method { self == .attestChallenge ? .post : .get }
}
