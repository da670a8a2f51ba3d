import ArgumentParser
import Crypto
import Foundation
import HTTPTypes
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilServer
import SigilStandalone

/// `sigil bench`: the core figures by default, `sigil bench http` for the server over loopback TLS.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmarks (build with -c release): the core by default, or the server over TLS (http).",
        subcommands: [
            CoreBench.self, RequestBench.self, HTTPBench.self, StoreBench.self, DirectoryBench.self, GatewayBench.self,
        ],
        defaultSubcommand: CoreBench.self
    )
}

struct CoreBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "core",
        abstract: "Measure verification, signing, the nonce store and canonicalization (build with -c release).",
        discussion: "Verification runs on one task, so one core; figures are ratios within one run."
    )

    @Option(name: .long, help: "Seconds per measurement.")
    var seconds: Double = 1

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    @Option(name: .long, help: "Only these algorithms (comma-separated).")
    var algorithms: String?

    @Flag(name: .long, help: "Print the cost of each stage of one HMAC verification instead.")
    var breakdown = false

    @Option(
        name: .long,
        help: "Run this many verifications of one --algorithms and --profile, print nothing (for callgrind).")
    var count: Int?

    @Option(name: .long, help: "With --count: the profile.")
    var profile: SignatureProfile = .sigilV1

    @Option(name: .long, help: "With --count: requests prepared beforehand, whatever --count is.")
    var pool = 1000

    @Flag(name: .long, help: "With --count: the raw signature check instead of full verification.")
    var raw = false

    @Option(
        name: .long,
        help: "With --count: DPoP requests instead, each with a token verified before (remembered) or its own (fresh).")
    var dpop: DPoPToken?

    enum DPoPToken: String, ExpressibleByArgument {
        case remembered, fresh
    }

    func validate() throws {
        guard let count else {
            guard dpop == nil else { throw ValidationError("--dpop goes with --count") }
            return
        }
        guard count >= 0, count <= pool, (dpop == nil) != (algorithms == nil), algorithms?.contains(",") != true
        else {
            throw ValidationError(
                "--count takes one algorithm (--algorithms) or --dpop, and 0 to --pool verifications")
        }
    }

    func run() async throws {
        #if DEBUG
            FileHandle.standardError.write(
                Data(
                    ("sigil: warning: a debug build; run "
                        + "`swift run -c release --package-path Server sigil bench`\n").utf8))
        #endif
        if let count, let dpop {
            try await DPoPBench.counted(freshTokens: dpop == .fresh, count: count, pool: pool)
            return
        }
        if let count, let algorithms {
            try await AlgorithmBench(algorithm: try SignatureAlgorithm.named(algorithms), seconds: seconds)
                .counted(profile: profile, count: count, pool: pool, raw: raw)
            return
        }
        if breakdown {
            for (stage, microseconds) in try await BreakdownBench.run(seconds: seconds) {
                print("\(stage): \(String(format: "%.2f", microseconds)) µs")
            }
            return
        }
        let selected =
            try algorithms.map { list in
                try list.split(separator: ",").map { try SignatureAlgorithm.named(String($0)) }
            } ?? SignatureAlgorithm.allCases
        // Each table is printed as soon as its figures are measured; with --json, a progress line on
        // standard error stands in for it, and the one document comes at the end.
        if !json {
            BenchOutput.line("| algorithm | profile | raw verify/s | full verify/s | full/raw | sign/s |")
            BenchOutput.line("|---|---|---:|---:|---:|---:|")
        }
        var rows: [AlgorithmFigures] = []
        for (index, algorithm) in selected.enumerated() {
            let row = try await AlgorithmBench(algorithm: algorithm, seconds: seconds).run()
            rows.append(row)
            guard !json else {
                BenchOutput.progress("\(algorithm) measured (\(index + 1) of \(selected.count) algorithms)")
                continue
            }
            for profile in SignatureProfile.allCases {
                BenchOutput.line(
                    "| \(row.algorithm) | \(profile) | \(Self.format(row.rawVerify[profile] ?? 0)) | "
                        + "\(Self.format(row.fullVerify[profile] ?? 0)) | \(String(format: "%.2f", row.ratio(profile))) | "
                        + "\(Self.format(row.sign)) |"
                )
            }
        }
        let nonces = NonceStoreBench.run(count: 1_000_000)
        let canonicalization = CanonicalizationBench.run(seconds: seconds)
        if json {
            BenchOutput.progress("nonce store and canonicalization measured")
        } else {
            BenchOutput.line(
                """

                | measure | value |
                |---|---:|
                | MemoryNonceStore inserts/s (1,000,000 nonces) | \(Self.format(nonces.insertsPerSecond)) |
                | MemoryNonceStore bytes per live nonce | \(String(format: "%.1f", nonces.bytesPerNonce)) |
                | JSON canonicalization, 1 MiB document | \(String(format: "%.0f", canonicalization)) MB/s |
                """)
        }
        let sealing = try await SealingBench.run(seconds: seconds)
        if json {
            BenchOutput.progress("sealing measured")
        } else {
            var table = """

                | sealing (HPKE X-Wing, AES-256-GCM) | Sigil /s | swift-crypto HPKE /s | Sigil / swift-crypto |
                |---|---:|---:|---:|
                """
            for row in sealing {
                table +=
                    "\n| \(row.name) | \(Self.format(row.sigil)) | \(Self.format(row.raw)) | \(String(format: "%.2f", row.sigil / row.raw)) |"
            }
            BenchOutput.line(table)
        }
        let dpop = try await DPoPBench.run(seconds: seconds)
        let refusals = try await KeyRefusalBench.run(seconds: seconds / 5)
        if json {
            BenchOutput.progress("DPoP measured")
            let object: [String: Any] = [
                "algorithms": rows.map(\.dictionary),
                "nonceStore": ["insertsPerSecond": nonces.insertsPerSecond, "bytesPerNonce": nonces.bytesPerNonce],
                "canonicalizationMBPerSecond": canonicalization,
                "sealing": sealing.map {
                    ["measure": $0.name, "sigilPerSecond": $0.sigil, "swiftCryptoPerSecond": $0.raw]
                },
                "dpop": [
                    "rawES256PerSecond": dpop.raw, "rememberedTokenPerSecond": dpop.remembered,
                    "freshTokenPerSecond": dpop.fresh, "rememberedTokenRatio": dpop.rememberedRatio,
                    "freshTokenRatio": dpop.freshRatio, "rawES256OwnProofPerSecond": dpop.rawOwn,
                    "rememberedTokenOwnProofRatio": dpop.rememberedOwnRatio,
                    "freshTokenOwnProofRatio": dpop.freshOwnRatio,
                ],
                "keyRefusals": [
                    "unsignedPerSecond": refusals.unsigned, "signedPerSecond": refusals.signed,
                    "forgedKnownKeyPerSecond": refusals.forgedKnownKey,
                ],
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            BenchOutput.line(String(decoding: data, as: UTF8.self))
            return
        }
        var table = """

            | DPoP (RFC 9449; ES256 proof, ES256 JWT access token) | verifies/s | vs raw ES256 | vs raw ES256 of its own proofs |
            |---|---:|---:|---:|
            | raw ES256 verification (64 signatures in turn) | \(Self.format(dpop.raw)) | 1.00 | |
            | raw ES256 verification of each request's own proof (taken out beforehand) | \(Self.format(dpop.rawOwn)) | | 1.00 |
            """
        for (name, value, ratio, own) in [
            ("DPoP request, token verified before", dpop.remembered, dpop.rememberedRatio, dpop.rememberedOwnRatio),
            ("DPoP request, fresh token", dpop.fresh, dpop.freshRatio, dpop.freshOwnRatio),
        ] {
            table +=
                "\n| \(name) | \(Self.format(value)) | \(String(format: "%.2f", ratio)) | \(String(format: "%.2f", own)) |"
        }
        BenchOutput.line(table)
        var refused = """

            | refusing a request (sigil-v1, one task) | refusals/s | vs unsigned unknown-key |
            |---|---:|---:|
            """
        for (name, value) in [
            ("unknown-key, unsigned", refusals.unsigned),
            ("unknown-key, signed (Ed25519 response key)", refusals.signed),
            ("forged request naming a known ecdsa-p256 key (invalid-signature, unsigned)", refusals.forgedKnownKey),
        ] {
            refused += "\n| \(name) | \(Self.format(value)) | \(String(format: "%.2f", value / refusals.unsigned)) |"
        }
        BenchOutput.line(refused)
    }

    static func format(_ value: Double) -> String {
        let rounded = Int(value.rounded())
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.groupingSeparator = ","
        return formatter.string(from: NSNumber(value: rounded)) ?? String(rounded)
    }
}

struct AlgorithmFigures {
    let algorithm: SignatureAlgorithm
    /// swift-crypto's verify of one signature in the profile's encoding, over a base of the same size.
    let rawVerify: [SignatureProfile: Double]
    /// Full verifications through `RequestVerifier`, each a different request with a fresh nonce.
    let fullVerify: [SignatureProfile: Double]
    let sign: Double

    func ratio(_ profile: SignatureProfile) -> Double { (fullVerify[profile] ?? 0) / (rawVerify[profile] ?? 1) }

    var dictionary: [String: Any] {
        var result: [String: Any] = ["algorithm": algorithm.rawValue, "signPerSecond": sign]
        for profile in SignatureProfile.allCases {
            result[profile.rawValue] = [
                "rawVerifyPerSecond": rawVerify[profile] ?? 0, "fullVerifyPerSecond": fullVerify[profile] ?? 0,
                "ratio": ratio(profile),
            ]
        }
        return result
    }
}

/// What the benches print: tables on standard output as each is measured (flushed, so a pipe or a
/// file shows them too), progress on standard error.
enum BenchOutput {
    /// `text` and a newline on standard output, at once.
    static func line(_ text: String) {
        print(text)
        fflush(nil)
    }

    /// A progress line on standard error, for output that comes only at the end (JSON, ratios).
    static func progress(_ text: String) {
        FileHandle.standardError.write(Data("sigil bench: \(text)\n".utf8))
    }
}

/// A clock for measurements.
enum Stopwatch {
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}

/// Where `scripts/instructions` starts counting (callgrind's `--zero-before`): called once in a
/// counted run (`--count`), after its set-up, so set-up whose cost varies from run to run (the
/// primes of an RSA key) does not swamp the difference between two counts.
@_optimize(none)
@inline(never)
func countFromHere() {}

/// A 1 KiB JSON body with members out of order, as a mobile app sends.
enum BenchBody {
    static let json: [UInt8] = {
        var text = "{\"to\":\"acct_2\",\"amount\":\"25.00\",\"currency\":\"EUR\",\"memo\":\"rent\",\"items\":["
        var index = 0
        while text.utf8.count < 960 {
            if index > 0 { text += "," }
            text += "{\"sku\":\"item-\(index)\",\"qty\":\(index + 1),\"price\":\(index).5}"
            index += 1
        }
        text += "]}"
        while text.utf8.count < 1024 { text.insert(" ", at: text.index(before: text.endIndex)) }
        return Array(text.utf8)
    }()
}

struct AlgorithmBench {
    let algorithm: SignatureAlgorithm
    let seconds: Double
    /// Raw and full measurements alternate in this many slices, so drift in the machine's speed
    /// affects both sides of the ratio alike.
    static let rounds = 5

    /// The device's key, its verification key and key ID, and the verifier's configuration for
    /// `algorithm`.
    struct Subject {
        let key: any SignatureProvider
        let verificationKey: VerificationKey
        let keyID: String
        let configuration: () -> VerifierConfiguration
    }

    func subject() throws -> Subject {
        if algorithm == .appleAppAttest {
            // A software stand-in for the device's App Attest key; the server's side is the real one.
            let key = SoftwareAppAttestKey()
            return Subject(key: key, verificationKey: try key.verificationKey, keyID: key.keyID) {
                var configuration = VerifierConfiguration()
                configuration.assertions = AppAttestAssertions(
                    verifier: AppAttestVerifier(appIDs: [SoftwareAppAttestKey.appID]), counters: Directory.inMemory())
                return configuration
            }
        }
        let key = try SigningKey.generate(algorithm, formats: .withRSA)
        let verificationKey = try key.verificationKey
        return Subject(
            key: key, verificationKey: verificationKey, keyID: verificationKey.derivedKeyID ?? "bench-hmac-key"
        ) { VerifierConfiguration() }
    }

    func run() async throws -> AlgorithmFigures {
        let subject = try subject()
        return try await run(
            key: subject.key, verificationKey: subject.verificationKey, keyID: subject.keyID,
            configuration: subject.configuration)
    }

    /// The loop `scripts/instructions --core` counts under callgrind: 20 verifications to warm up,
    /// then `count` of `pool` prepared beforehand (whatever `count` is, so preparing cancels out
    /// between two counts). Full: requests through `RequestVerifier`, each with a fresh nonce. Raw:
    /// the signature check alone, over bases of the same size, 64 signatures in turn.
    func counted(profile: SignatureProfile, count: Int, pool: Int, raw: Bool) async throws {
        let subject = try subject()
        if raw {
            let checks = try RawChecks(signer: subject.key, key: subject.verificationKey, profile: profile)
            countFromHere()
            for index in 0..<(20 + count) {
                guard checks.check(index) else { throw SigilInputError("a raw signature did not verify") }
            }
            return
        }
        let clock = ManualUnixClock(1_763_769_600)
        let requests = try Self.signedRequests(
            20 + pool, key: subject.key, keyID: subject.keyID, profile: profile, clock: clock)
        let directory = MemoryKeyDirectory()
        try await directory.add(subject.verificationKey, keyID: subject.keyID)
        let verifier = RequestVerifier(
            keys: directory, nonces: MemoryNonceStore(clock: ManualUnixClock(0)), clock: clock,
            configuration: subject.configuration())
        countFromHere()
        for request in requests.prefix(20 + count) { _ = try await verifier.verify(request, body: BenchBody.json) }
    }

    /// The measurements for `key`; each verifier (a fresh one when a pool is replayed) is configured
    /// by `configuration`.
    func run(
        key: any SignatureProvider, verificationKey: VerificationKey, keyID: String,
        configuration: () -> VerifierConfiguration
    ) async throws -> AlgorithmFigures {
        let clock = ManualUnixClock(1_763_769_600)
        // Raw: swift-crypto verifying signatures in each profile's encoding (``RawChecks``).
        let base = RawChecks.bases[0]
        let sign = Self.measure(seconds: seconds) { _ = try? key.signature(for: base, profile: .sigilV1) }

        var raw: [SignatureProfile: Double] = [:]
        var full: [SignatureProfile: Double] = [:]
        for profile in SignatureProfile.allCases {
            let checks = try RawChecks(signer: key, key: verificationKey, profile: profile)
            var turn = 0
            let rawVerify = {
                turn &+= 1
                _ = checks.check(turn)
            }
            let estimate = Self.measure(seconds: 0.05, rawVerify)
            // Full verifications, each a different request with a fresh nonce, signed beforehand: enough
            // for `seconds` of verification, but no more than about 3 s of signing.
            let poolSize = max(200, min(Int(estimate * seconds * 1.2), Int(sign * 3), 300_000))
            let pool = try Self.signedRequests(poolSize, key: key, keyID: keyID, profile: profile, clock: clock)
            let directory = MemoryKeyDirectory()
            try await directory.add(verificationKey, keyID: keyID)
            func freshVerifier() -> RequestVerifier {
                RequestVerifier(
                    keys: directory, nonces: MemoryNonceStore(clock: ManualUnixClock(0)), clock: clock,
                    configuration: configuration())
            }
            var verifier = freshVerifier()
            _ = try await verifier.verify(pool[0], body: BenchBody.json)  // warm up
            var index = 1
            var rawOperations = 0.0
            var rawSeconds = 0.0
            var fullOperations = 0.0
            var fullSeconds = 0.0
            let slice = seconds / Double(Self.rounds)
            for _ in 0..<Self.rounds {
                let rawRate = Self.measure(seconds: slice, rawVerify)
                rawOperations += rawRate * slice
                rawSeconds += slice
                let start = Stopwatch.now()
                let deadline = start + UInt64(slice * 1e9)
                var operations = 0
                while Stopwatch.now() < deadline {
                    if index == pool.count {
                        // A slow signer's pool is used up: replay it against an empty store, so
                        // every nonce is still new to the store that records it.
                        verifier = freshVerifier()
                        index = 0
                    }
                    _ = try await verifier.verify(pool[index], body: BenchBody.json)
                    index += 1
                    operations += 1
                }
                fullOperations += Double(operations)
                fullSeconds += Double(Stopwatch.now() - start) / 1e9
            }
            raw[profile] = rawOperations / rawSeconds
            full[profile] = fullOperations / fullSeconds
        }
        return AlgorithmFigures(algorithm: algorithm, rawVerify: raw, fullVerify: full, sign: sign)
    }

    static func signedRequests(
        _ count: Int,
        key: any SignatureProvider,
        keyID: String,
        profile: SignatureProfile,
        clock: any UnixClock
    ) throws -> [HTTPRequest] {
        let signer = RequestSigner(key: key, keyID: keyID, profile: profile, clock: clock)
        return try (0..<count).map { _ in
            var request = HTTPRequest(
                method: .post, scheme: "https", authority: "api.example.com", path: "/v1/transfers")
            request.headerFields[.contentType] = "application/json"
            try signer.sign(&request, body: BenchBody.json)
            return request
        }
    }

    /// Operations per second of `body`, run in batches for `seconds`.
    static func measure(seconds: Double, _ body: () -> Void) -> Double {
        body()
        var count = 0
        let start = Stopwatch.now()
        let deadline = start + UInt64(seconds * 1e9)
        while Stopwatch.now() < deadline {
            for _ in 0..<16 { body() }
            count += 16
        }
        return Double(count) / (Double(Stopwatch.now() - start) / 1e9)
    }
}

enum NonceStoreBench {
    static func run(count: Int) -> (insertsPerSecond: Double, bytesPerNonce: Double) {
        let store = MemoryNonceStore(clock: ManualUnixClock(0))
        let nonces = (0..<count).map { String(format: "%08x-bench-nonce-%010d", $0 & 0xFFFF_FFFF, $0) }
        let now: Int64 = 1_763_769_600
        let elapsed = Stopwatch.seconds {
            for nonce in nonces {
                _ = store.insertSync(keyID: "bench-key", nonce: nonce, expiresAt: now + 660, now: now)
            }
        }
        return (Double(count) / elapsed, Double(store.allocatedBytes) / Double(count))
    }
}

enum CanonicalizationBench {
    /// A 1 MiB JSON document of user records, members out of order.
    static let document: [UInt8] = {
        var text = "["
        var index = 0
        while text.utf8.count < 1 << 20 {
            if index > 0 { text += "," }
            text +=
                "{\"name\":\"User \(index)\",\"id\":\(index),\"email\":\"user\(index)@example.com\","
                + "\"active\":\(index % 2 == 0),\"score\":\(Double(index) / 8),\"tags\":[\"a\",\"b\\n\",\"ü\"],"
                + "\"address\":{\"zip\":\"\(10000 + index)\",\"city\":\"Zürich\",\"street\":\"Main St \(index)\"}}"
            index += 1
        }
        return Array((text + "]").utf8)
    }()

    static func run(seconds: Double) -> Double {
        _ = JSONCanonicalizer.canonicalize(document)
        var bytes = 0
        let start = Stopwatch.now()
        let deadline = start + UInt64(seconds * 1e9)
        repeat {
            _ = JSONCanonicalizer.canonicalize(document)
            bytes += document.count
        } while Stopwatch.now() < deadline
        return Double(bytes) / (Double(Stopwatch.now() - start) / 1e9) / 1e6
    }
}

/// What a device's App Attest key does, in software: assertions over SHA-256 of the message, with a
/// growing counter, for ``appID`` (the bench's stand-in; a device makes them in its Secure Enclave).
final class SoftwareAppAttestKey: SignatureProvider, @unchecked Sendable {
    static let appID = "TEAM123456.dev.sigil.bench"
    let key = P256.Signing.PrivateKey()
    let lock = NSLock()
    var counter: UInt32 = 0

    var algorithm: SignatureAlgorithm { .appleAppAttest }
    var publicKey: VerificationKey? { nil }
    var verificationKey: VerificationKey {
        get throws { try VerificationKey(key.publicKey, algorithm: .appleAppAttest) }
    }
    var keyID: String {
        AppAttestAssertion.keyID(appAttestKeyID: Array(SHA256.hash(data: key.publicKey.x963Representation)))
    }

    func signature(for message: [UInt8]) throws -> [UInt8] {
        lock.lock()
        counter += 1
        let next = counter
        lock.unlock()
        let authenticatorData =
            Array(SHA256.hash(data: Array(Self.appID.utf8))) + [0x40]
            + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: next >> $0) }
        let nonce = Array(SHA256.hash(data: authenticatorData + Array(SHA256.hash(data: message))))
        let signature = Array(try key.signature(for: nonce).derRepresentation)
        // {"signature": bytes, "authenticatorData": bytes}, definite lengths below 256 bytes.
        return [0xA2, 0x69] + Array("signature".utf8) + [0x58, UInt8(signature.count)] + signature
            + [0x71] + Array("authenticatorData".utf8) + [0x58, UInt8(authenticatorData.count)] + authenticatorData
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
