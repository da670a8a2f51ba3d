import SwiftASN1

/// The Key Description extension (OID 1.3.6.1.4.1.11129.2.1.17) of an Android Keystore attestation
/// certificate: what the hardware says about the key it attests.
///
/// Every version of the schema reads (attestation versions 1, 2, 3, 4, 100, 200, 300, 400, KeyMint
/// included): fields a version added are optional here, and authorization tags this reader does not
/// know are skipped, as the schema's extensibility asks. Read strictly as DER (lengths, integers),
/// bounded (64 tags per list, 64 packages, 32 signing digests, 50 levels of nesting), and refusing a
/// tag given twice; one tolerance: `deviceLocked` as BER's `0x01` reads as true, as Google reads it.
public struct KeyDescription: Sendable, Hashable {
    /// The extension's OID.
    public static let oid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]

    /// Where the attestation or the key lives.
    public enum SecurityLevel: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Android's software keystore: proves nothing about hardware.
        case software = 0
        /// A trusted execution environment.
        case trustedEnvironment = 1
        /// A separate secure element (StrongBox).
        case strongBox = 2

        public var description: String {
            switch self {
            case .software: "Software"
            case .trustedEnvironment: "TrustedEnvironment"
            case .strongBox: "StrongBox"
            }
        }

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// `attestationVersion`.
    public let attestationVersion: Int
    /// `attestationSecurityLevel`.
    public let attestationSecurityLevel: SecurityLevel
    /// `keymasterVersion` / `keyMintVersion`.
    public let keyMintVersion: Int
    /// `keymasterSecurityLevel` / `keyMintSecurityLevel`.
    public let keyMintSecurityLevel: SecurityLevel
    /// `attestationChallenge`: the server's challenge the app passed to `setAttestationChallenge`.
    public let challenge: [UInt8]
    /// `uniqueId`.
    public let uniqueID: [UInt8]
    /// `softwareEnforced`: what Android's OS enforces.
    public let softwareEnforced: AuthorizationList
    /// `hardwareEnforced` (`teeEnforced`): what the secure hardware enforces.
    public let hardwareEnforced: AuthorizationList

    /// Reads the extension's value (the DER of `KeyDescription`).
    ///
    /// - Throws: ``AndroidAttestationError`` `key-description-invalid`, naming the field.
    public init(derEncoded bytes: ArraySlice<UInt8>) throws {
        let root: ASN1Node
        do { root = try DER.parse(bytes) } catch { throw Self.invalid("the Key Description is not DER") }
        guard root.identifier == .sequence, case .constructed(let nodes) = root.content else {
            throw Self.invalid("the Key Description is not a SEQUENCE")
        }
        let fields = Array(nodes)
        guard fields.count == 8 else { throw Self.invalid("the Key Description has \(fields.count) fields, not 8") }
        attestationVersion = try Self.integer(fields[0], "attestationVersion")
        guard attestationVersion >= 1 else { throw Self.invalid("attestationVersion \(attestationVersion)") }
        attestationSecurityLevel = try Self.securityLevel(fields[1], "attestationSecurityLevel")
        keyMintVersion = try Self.integer(fields[2], "keyMintVersion")
        keyMintSecurityLevel = try Self.securityLevel(fields[3], "keyMintSecurityLevel")
        challenge = try Self.octets(fields[4], "attestationChallenge")
        uniqueID = try Self.octets(fields[5], "uniqueId")
        softwareEnforced = try AuthorizationList(fields[6], name: "softwareEnforced")
        hardwareEnforced = try AuthorizationList(fields[7], name: "hardwareEnforced")
    }

    /// A fact read from `hardwareEnforced`, else from `softwareEnforced` (how the vectors and Google's
    /// tools report them; a policy asks `hardwareEnforced` alone where it matters).
    public func either<T>(_ fact: KeyPath<AuthorizationList, T?>) -> T? {
        hardwareEnforced[keyPath: fact] ?? softwareEnforced[keyPath: fact]
    }

    static func invalid(_ detail: String) -> AndroidAttestationError {
        AndroidAttestationError(.keyDescriptionInvalid, detail)
    }

    static func integer(_ node: ASN1Node, _ name: String, identifier: ASN1Identifier = .integer) throws -> Int {
        do { return try Int(derEncoded: node, withIdentifier: identifier) } catch {
            throw invalid("\(name) is not an INTEGER that fits")
        }
    }

    static func securityLevel(_ node: ASN1Node, _ name: String) throws -> SecurityLevel {
        guard let level = SecurityLevel(rawValue: try integer(node, name, identifier: .enumerated)) else {
            throw invalid("\(name) is no known security level")
        }
        return level
    }

    static func octets(_ node: ASN1Node, _ name: String) throws -> [UInt8] {
        do { return Array(try ASN1OctetString(derEncoded: node).bytes) } catch {
            throw invalid("\(name) is not an OCTET STRING")
        }
    }
}

/// An `AuthorizationList`: the key's properties, each under its Keymaster tag number (explicitly
/// tagged, context class). The tags Sigil reads are fields; others are skipped after their form is
/// checked (one element inside each tag).
public struct AuthorizationList: Sendable, Hashable {
    /// The most tags one list may carry.
    public static let maximumTags = 64

    /// `purpose` [1]: ENCRYPT 0, DECRYPT 1, SIGN 2, VERIFY 3, WRAP_KEY 5, AGREE_KEY 6, ATTEST_KEY 7.
    public var purposes: [Int]?
    /// `algorithm` [2]: RSA 1, EC 3, AES 32, 3DES 33, HMAC 128.
    public var algorithm: Int?
    /// `keySize` [3], in bits.
    public var keySize: Int?
    /// `digest` [5]: NONE 0, MD5 1, SHA1 2, SHA-2 224 3, 256 4, 384 5, 512 6.
    public var digests: [Int]?
    /// `ecCurve` [10]: P-224 0, P-256 1, P-384 2, P-521 3, CURVE_25519 4 (absent in some Keymaster 4
    /// StrongBox attestations: the certificate's key then says the curve).
    public var ecCurve: Int?
    /// `noAuthRequired` [503].
    public var noAuthRequired: Bool?
    /// `creationDateTime` [701], milliseconds since 1970.
    public var creationDateTime: Int64?
    /// `origin` [702]: GENERATED 0, DERIVED 1, IMPORTED 2, RESERVED 3, SECURELY_IMPORTED 4.
    public var origin: Int?
    /// `rootOfTrust` [704].
    public var rootOfTrust: RootOfTrust?
    /// `osVersion` [705] (`130000` is 13.0.0).
    public var osVersion: Int?
    /// `osPatchLevel` [706], `YYYYMM`.
    public var osPatchLevel: Int?
    /// `attestationApplicationId` [709].
    public var attestationApplicationID: AttestationApplicationID?
    /// `vendorPatchLevel` [718], `YYYYMM` or `YYYYMMDD`.
    public var vendorPatchLevel: Int?
    /// `bootPatchLevel` [719], `YYYYMM` or `YYYYMMDD`.
    public var bootPatchLevel: Int?
    /// The tag numbers present, in their order.
    public var tags: [UInt] = []

    /// Keymaster's values.
    public enum Value {
        public static let purposeSign = 2
        public static let algorithmEC = 3
        public static let algorithmRSA = 1
        public static let curveP256 = 1
        public static let originGenerated = 0
    }

    init(_ node: ASN1Node, name: String) throws {
        guard node.identifier == .sequence, case .constructed(let nodes) = node.content else {
            throw KeyDescription.invalid("\(name) is not a SEQUENCE")
        }
        for tagged in nodes {
            guard tagged.identifier.tagClass == .contextSpecific, case .constructed(let inner) = tagged.content
            else { throw KeyDescription.invalid("\(name) holds an element that is no explicit tag") }
            let tag = tagged.identifier.tagNumber
            guard !tags.contains(tag) else { throw KeyDescription.invalid("\(name) gives tag [\(tag)] twice") }
            guard tags.count < Self.maximumTags else { throw KeyDescription.invalid("\(name) has too many tags") }
            tags.append(tag)
            var elements = inner.makeIterator()
            guard let value = elements.next(), elements.next() == nil else {
                throw KeyDescription.invalid("\(name) tag [\(tag)] does not hold one element")
            }
            let field = "\(name) [\(tag)]"
            switch tag {
            case 1: purposes = try Self.integers(value, field)
            case 2: algorithm = try KeyDescription.integer(value, field)
            case 3: keySize = try KeyDescription.integer(value, field)
            case 5: digests = try Self.integers(value, field)
            case 10: ecCurve = try KeyDescription.integer(value, field)
            case 503: noAuthRequired = try Self.null(value, field)
            case 701: creationDateTime = Int64(try KeyDescription.integer(value, field))
            case 702: origin = try KeyDescription.integer(value, field)
            case 704: rootOfTrust = try RootOfTrust(value)
            case 705: osVersion = try KeyDescription.integer(value, field)
            case 706: osPatchLevel = try KeyDescription.integer(value, field)
            case 709:
                attestationApplicationID = try AttestationApplicationID(
                    derEncoded: KeyDescription.octets(value, field)[...])
            case 718: vendorPatchLevel = try KeyDescription.integer(value, field)
            case 719: bootPatchLevel = try KeyDescription.integer(value, field)
            default: break
            }
        }
    }

    static func integers(_ node: ASN1Node, _ name: String) throws -> [Int] {
        guard node.identifier == .set, case .constructed(let members) = node.content else {
            throw KeyDescription.invalid("\(name) is not a SET OF INTEGER")
        }
        var values: [Int] = []
        for member in members {
            guard values.count < 16 else { throw KeyDescription.invalid("\(name) has too many values") }
            values.append(try KeyDescription.integer(member, name))
        }
        return values
    }

    static func null(_ node: ASN1Node, _ name: String) throws -> Bool {
        guard node.identifier == .null, case .primitive(let bytes) = node.content, bytes.isEmpty else {
            throw KeyDescription.invalid("\(name) is not NULL")
        }
        return true
    }
}

/// `RootOfTrust`: the boot chain the device started with.
public struct RootOfTrust: Sendable, Hashable {
    /// `VerifiedBootState`.
    public enum BootState: Int, Sendable, Hashable, CustomStringConvertible, CaseIterable {
        /// The boot chain is verified by a key in the hardware (a locked, stock device).
        case verified = 0
        /// Verified by a key the user installed (a custom ROM on a relocked bootloader).
        case selfSigned = 1
        /// Not verified (an unlocked bootloader).
        case unverified = 2
        /// Verification failed.
        case failed = 3

        public var description: String {
            switch self {
            case .verified: "Verified"
            case .selfSigned: "SelfSigned"
            case .unverified: "Unverified"
            case .failed: "Failed"
            }
        }

        /// The state named as `description` does, case-insensitively.
        public init?(named name: String) {
            guard let state = Self.allCases.first(where: { $0.description.lowercased() == name.lowercased() }) else {
                return nil
            }
            self = state
        }
    }

    /// `verifiedBootKey`: the hash of the key that verified the boot chain.
    public let verifiedBootKey: [UInt8]
    /// `deviceLocked`: the bootloader is locked.
    public let deviceLocked: Bool
    /// `verifiedBootState`.
    public let verifiedBootState: BootState
    /// `verifiedBootHash` (attestation version 3 and later).
    public let verifiedBootHash: [UInt8]?

    init(_ node: ASN1Node) throws {
        guard node.identifier == .sequence, case .constructed(let nodes) = node.content else {
            throw KeyDescription.invalid("rootOfTrust is not a SEQUENCE")
        }
        let fields = Array(nodes)
        guard fields.count == 3 || fields.count == 4 else {
            throw KeyDescription.invalid("rootOfTrust has \(fields.count) fields")
        }
        verifiedBootKey = try KeyDescription.octets(fields[0], "verifiedBootKey")
        // DER says 0xFF for true; some devices write BER's 0x01, which Google reads as true.
        guard fields[1].identifier == .boolean, case .primitive(let flag) = fields[1].content, flag.count == 1 else {
            throw KeyDescription.invalid("deviceLocked is not a BOOLEAN")
        }
        deviceLocked = flag.first != 0
        guard
            let state = BootState(
                rawValue: try KeyDescription.integer(fields[2], "verifiedBootState", identifier: .enumerated))
        else { throw KeyDescription.invalid("verifiedBootState is no known state") }
        verifiedBootState = state
        verifiedBootHash = fields.count == 4 ? try KeyDescription.octets(fields[3], "verifiedBootHash") : nil
    }
}

/// `AttestationApplicationId`: the packages that share the app's UID and their signing certificates.
public struct AttestationApplicationID: Sendable, Hashable {
    /// One package: its name and version code.
    public struct Package: Sendable, Hashable {
        /// The package name (`com.example.app`).
        public let name: String
        /// The version code.
        public let version: Int
    }

    /// `package_infos`.
    public let packages: [Package]
    /// `signature_digests`: SHA-256 of each signing certificate.
    public let signatureDigests: [[UInt8]]

    init(derEncoded bytes: ArraySlice<UInt8>) throws {
        let root: ASN1Node
        do { root = try DER.parse(bytes) } catch {
            throw KeyDescription.invalid("attestationApplicationId is not DER")
        }
        guard root.identifier == .sequence, case .constructed(let nodes) = root.content else {
            throw KeyDescription.invalid("attestationApplicationId is not a SEQUENCE")
        }
        let fields = Array(nodes)
        guard fields.count == 2, fields[0].identifier == .set, case .constructed(let infos) = fields[0].content,
            fields[1].identifier == .set, case .constructed(let digests) = fields[1].content
        else { throw KeyDescription.invalid("attestationApplicationId is not two SETs") }
        var packages: [Package] = []
        for info in infos {
            guard packages.count < 64 else { throw KeyDescription.invalid("too many packages") }
            guard info.identifier == .sequence, case .constructed(let members) = info.content else {
                throw KeyDescription.invalid("a package is not a SEQUENCE")
            }
            let pair = Array(members)
            guard pair.count == 2 else { throw KeyDescription.invalid("a package is not a name and a version") }
            let name = try KeyDescription.octets(pair[0], "package_name")
            guard let text = String(validating: name, as: UTF8.self), !text.isEmpty, name.count <= 256 else {
                throw KeyDescription.invalid("a package name is not UTF-8")
            }
            packages.append(Package(name: text, version: try KeyDescription.integer(pair[1], "version")))
        }
        var signatureDigests: [[UInt8]] = []
        for digest in digests {
            guard signatureDigests.count < 32 else { throw KeyDescription.invalid("too many signature digests") }
            signatureDigests.append(try KeyDescription.octets(digest, "signature_digest"))
        }
        self.packages = packages
        self.signatureDigests = signatureDigests
    }
}
