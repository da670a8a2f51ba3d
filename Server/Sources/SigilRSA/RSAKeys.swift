import Crypto
@_spi(Sigil) import SigilCore
import _CryptoExtras

/// RSA keys for `rsa-pss-sha512` and `rsa-v1_5-sha256`, in their own module so that only the programs
/// that need RSA (servers, the `sigil` command) compile `_CryptoExtras` and BoringSSL.
///
/// ```swift
/// import SigilRSA
/// let loaded = try KeyFile.load(pem, formats: .withRSA)
/// let key = try SigningKey.generate(.rsaPSSSHA512, formats: .withRSA)
/// ```
public struct RSAKeyFormat: KeyFormat {
    /// Generated keys' size in bits.
    public var generatedKeySize: Int

    /// Creates the format; generated keys are 3072 bits unless said otherwise.
    public init(generatedKeySize: Int = 3072) { self.generatedKeySize = generatedKeySize }

    public var algorithms: [SignatureAlgorithm] { [.rsaPSSSHA512, .rsaV15SHA256] }

    /// rsaEncryption and id-RSASSA-PSS.
    public var algorithmIdentifiers: [String] { ["1.2.840.113549.1.1.1", "1.2.840.113549.1.1.10"] }

    public var pemLabels: [String] { ["RSA PRIVATE KEY", "RSA PUBLIC KEY"] }

    public func privateKey(der: [UInt8], label: String) throws -> any ExternalPrivateKey {
        do {
            return RSAPrivateKey(key: try _RSA.Signing.PrivateKey(derRepresentation: der))
        } catch {
            throw SigilInputError(
                label == "PRIVATE KEY"
                    ? "RSA private key does not parse (RSASSA-PSS-restricted keys are not supported; use rsaEncryption)"
                    : "RSA private key does not parse")
        }
    }

    public func publicKey(der: [UInt8], label: String) throws -> any ExternalPublicKey {
        do {
            return RSAPublicKey(key: try _RSA.Signing.PublicKey(derRepresentation: der))
        } catch {
            throw SigilInputError("RSA public key does not parse")
        }
    }

    public func generate(_ algorithm: SignatureAlgorithm) throws -> any ExternalPrivateKey {
        guard algorithms.contains(algorithm) else {
            throw SigilError(.algorithmMismatch, "an RSA key cannot sign \(algorithm)")
        }
        return RSAPrivateKey(key: try _RSA.Signing.PrivateKey(keySize: .init(bitCount: generatedKeySize)))
    }
}

extension KeyFormats {
    /// The built-in kinds and RSA.
    public static let withRSA = KeyFormats([RSAKeyFormat()])
}

/// An RSA public key.
public struct RSAPublicKey: ExternalPublicKey, CustomStringConvertible {
    let key: _RSA.Signing.PublicKey

    /// Uses `key`.
    public init(key: _RSA.Signing.PublicKey) { self.key = key }

    public var kindName: String { "RSA" }
    public var algorithms: [SignatureAlgorithm] { [.rsaPSSSHA512, .rsaV15SHA256] }
    /// PKCS#1 `RSAPublicKey` DER (PROTOCOL.md section 1).
    public var rawRepresentation: [UInt8] { Array(key.pkcs1DERRepresentation) }
    public var subjectPublicKeyInfo: [UInt8] { Array(key.derRepresentation) }
    public var description: String { "RSAPublicKey(\(key.keySizeInBits) bits)" }

    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
        switch algorithm {
        case .rsaV15SHA256:
            return key.isValidSignature(parsed, for: SHA256.hash(data: message), padding: .insecurePKCS1v1_5)
        case .rsaPSSSHA512:
            return key.isValidSignature(parsed, for: SHA512.hash(data: message), padding: .PSS)
        default:
            return false
        }
    }

    /// `PS256` (RSASSA-PSS with SHA-256, salt of 32 bytes), which DPoP proofs may use.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], jose: String) -> Bool {
        guard jose == "PS256" else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: message), padding: .PSS)
    }
}

/// An RSA private key.
///
/// - Warning: holds secret material; `description` names only its size.
public struct RSAPrivateKey: ExternalPrivateKey, CustomStringConvertible, CustomReflectable {
    let key: _RSA.Signing.PrivateKey

    /// Uses `key`.
    public init(key: _RSA.Signing.PrivateKey) { self.key = key }

    public var publicKey: any ExternalPublicKey { RSAPublicKey(key: key.publicKey) }
    public var pkcs8: [UInt8] { Array(key.pkcs8DERRepresentation) }
    public var description: String { "RSAPrivateKey(\(key.keySizeInBits) bits)" }
    public var customMirror: Mirror { Mirror(self, children: []) }

    public func signature(for message: [UInt8], algorithm: SignatureAlgorithm) throws -> [UInt8] {
        switch algorithm {
        case .rsaV15SHA256:
            return Array(
                try key.signature(for: SHA256.hash(data: message), padding: .insecurePKCS1v1_5).rawRepresentation)
        case .rsaPSSSHA512:
            return Array(try key.signature(for: SHA512.hash(data: message), padding: .PSS).rawRepresentation)
        default:
            throw SigilError(.algorithmMismatch, "an RSA key cannot sign \(algorithm)")
        }
    }
}
