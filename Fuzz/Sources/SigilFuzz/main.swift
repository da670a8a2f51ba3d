import CFuzzerDriver
import Foundation
import HTTPTypes
import SigilAndroidAttestation
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilTLS

// One libFuzzer program for every parser; SIGIL_FUZZ_TARGET picks the one to fuzz. An input may make a
// parser throw (that is its job); a crash, a leak, a hang or a broken invariant is a finding.

/// Header lines `Name: value` of an input, the invalid ones skipped.
func fields(_ bytes: [UInt8]) -> HTTPFields {
    var fields = HTTPFields()
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let name = HTTPField.Name(String(parts[0])) else { continue }
        let value = parts[1].trimmingCharacters(in: .whitespaces)
        guard HTTPField.isValidValue(value) else { continue }
        fields.append(HTTPField(name: name, value: value))
    }
    return fields
}

/// A request carrying `fields`, for the signature bases.
func request(_ fields: HTTPFields) -> HTTPRequest {
    HTTPRequest(
        method: .post, scheme: "https", authority: "api.example.com", path: "/v1/transfers?b=2&a=1",
        headerFields: fields)
}

/// Stops the run: a broken invariant is a finding, as a crash is.
func finding(_ what: String) -> Never {
    FileHandle.standardError.write(Data("sigil-fuzz: \(what)\n".utf8))
    abort()
}

let target = ProcessInfo.processInfo.environment["SIGIL_FUZZ_TARGET"] ?? ""

func fuzz(_ bytes: [UInt8]) {
    switch target {
    case "http":
        guard let message = try? RawHTTPMessage(parsing: bytes) else { return }
        if let request = try? message.request() {
            if let headers = try? SigilV1.parseRequestHeaders(request.headerFields) {
                _ = SigilV1.requestBase(
                    for: request, body: message.body, timestamp: headers.timestampText, nonce: headers.nonce)
            }
            if let entry = (try? MessageSignatures(request.headerFields))?.entries.first {
                _ = try? RFC9421.signatureBase(for: entry.input, message: RFC9421Message(request: request))
            }
        }
        _ = try? message.response()
    case "sigil-v1":
        let fields = fields(bytes)
        guard let headers = try? SigilV1.parseRequestHeaders(fields) else { return }
        _ = SigilV1.requestBase(
            for: request(fields), body: bytes, timestamp: headers.timestampText, nonce: headers.nonce,
            canonicalJSON: true)
    case "rfc9421":
        let fields = fields(bytes)
        try? ContentDigest.verify(fields, body: bytes)
        guard let signatures = try? MessageSignatures(fields) else { return }
        for entry in signatures.entries {
            _ = try? RFC9421.signatureBase(for: entry.input, message: RFC9421Message(request: request(fields)))
            _ = try? entry.input.created
            _ = try? entry.input.keyID
            _ = try? entry.input.nonce
        }
    case "jcs":
        guard let canonical = JSONCanonicalizer.canonicalize(bytes) else { return }
        // A body and its canonical form sign alike. The canonical form is a fixed point of JCS, unless
        // it is no longer I-JSON (`9007199254740992.0` becomes an integer literal past 2^53 − 1), in
        // which case its raw bytes are hashed, and those are the same bytes.
        if let again = JSONCanonicalizer.canonicalize(canonical), again != canonical {
            finding("JCS is not idempotent")
        }
        let hash = BodyHash.compute(bytes, contentType: "application/json", canonicalJSON: true)
        guard hash == BodyHash.compute(canonical, contentType: "application/json", canonicalJSON: true) else {
            finding("a body and its canonical form sign differently")
        }
    case "keys":
        for algorithm in [nil] + SignatureAlgorithm.allCases.map(Optional.some) {
            _ = try? KeyFile.load(bytes, algorithm: algorithm, formats: .withRSA)
        }
    case "csr":
        guard let csr = try? CertificateAuthority.parseCSR(bytes) else { return }
        _ = try? CertificateAuthority.keyID(of: csr)
    case "dpop":
        // A proof that parses has a public key whose thumbprint is its own.
        guard let proof = try? DPoPProof.parse(String(decoding: bytes, as: UTF8.self), formats: .withRSA) else {
            return
        }
        guard proof.thumbprint == proof.key.jwkThumbprint else { finding("a DPoP proof's key thumbprint differs") }
        _ = try? proof.check(
            method: "POST", uri: "https://localhost/v1/echo", now: proof.issuedAt, maxSkew: 300, accessToken: "t")
    case "android":
        // A Key Description that reads keeps its bounds; as a certificate chain, the input is refused
        // with an AndroidAttestationError (never a crash), whatever it holds.
        if let description = try? KeyDescription(derEncoded: bytes[...]) {
            for list in [description.softwareEnforced, description.hardwareEnforced] {
                guard list.tags.count <= AuthorizationList.maximumTags, Set(list.tags).count == list.tags.count else {
                    finding("an authorization list kept too many or repeated tags")
                }
            }
        }
        do {
            _ = try AndroidKeyAttestation.verify(chain: [bytes, bytes], challenge: [], at: Date(), roots: [])
            finding("a chain with no root verified")
        } catch is AndroidAttestationError {
        } catch {
            finding("a chain was refused with \(type(of: error))")
        }
    default:
        finding("set SIGIL_FUZZ_TARGET to http, sigil-v1, rfc9421, jcs, keys, csr, dpop or android")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzz(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
