import Crypto
import X509

/// The rules a server holds an attested Android key to before it enrolls it (`sigil serve
/// --android-app …`). Each failed rule is its own ``AndroidAttestationError`` code.
public struct AndroidAttestationPolicy: Sendable, Hashable {
    /// An app allowed to enroll: its package name and the SHA-256 of its signing certificate.
    public struct App: Sendable, Hashable {
        /// `com.example.app`.
        public let package: String
        /// SHA-256 of the signing certificate (32 bytes).
        public let signingCertificateDigest: [UInt8]

        /// The app `package` signed by the certificate of digest `signingCertificateDigest`.
        public init(package: String, signingCertificateDigest: [UInt8]) {
            self.package = package
            self.signingCertificateDigest = signingCertificateDigest
        }

        /// Reads `PACKAGE:SHA256` (64 hex digits; colons between bytes, as `apksigner` and Play Console
        /// print them, are accepted).
        public init?(_ text: String) {
            guard let split = text.firstIndex(of: ":") else { return nil }
            let package = String(text[..<split])
            let hex = text[text.index(after: split)...].filter { $0 != ":" }
            guard !package.isEmpty, hex.count == 64, hex.allSatisfy(\.isHexDigit) else { return nil }
            let nibbles = hex.compactMap(\.hexDigitValue).map(UInt8.init)
            let digest = stride(from: 0, to: 64, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] }
            self.init(package: package, signingCertificateDigest: digest)
        }
    }

    /// The apps allowed (at least one must match: a package of the attestation with one of its signing
    /// digests). Empty accepts no app.
    public var apps: [App]
    /// The lowest security level accepted for the attestation and the key (TEE unless StrongBox is
    /// demanded).
    public var minimumSecurityLevel: KeyDescription.SecurityLevel = .trustedEnvironment
    /// The verified boot states accepted (`Verified` unless the operator accepts `SelfSigned` for known
    /// custom ROMs).
    public var acceptedBootStates: Set<RootOfTrust.BootState> = [.verified]
    /// Whether the bootloader must be locked.
    public var requiresLockedDevice = true
    /// The oldest OS patch level accepted, `YYYYMM`, when set.
    public var minimumPatchLevel: Int?
    /// Whether the app must be one of ``apps`` (off only for checking a chain by hand).
    public var checksApp = true

    /// A policy for `apps`, with the defaults: TEE or StrongBox, `Verified` boot, a locked device.
    public init(apps: [App]) { self.apps = apps }

    /// Checks `attestation` (already verified: chain, root, challenge) against the rules, in this order:
    /// security level, key (EC P-256, SIGN, GENERATED, hardware-enforced), boot state, lock, patch
    /// level, app.
    ///
    /// - Throws: ``AndroidAttestationError``.
    public func check(_ attestation: AndroidKeyAttestation) throws {
        let description = attestation.keyDescription
        let hardware = description.hardwareEnforced
        for (name, level) in [
            ("attestation", description.attestationSecurityLevel), ("key", description.keyMintSecurityLevel),
        ] where level < minimumSecurityLevel {
            throw AndroidAttestationError(
                .securityLevel, "the \(name) security level is \(level), below \(minimumSecurityLevel)")
        }
        try Self.checkKey(attestation)
        guard let root = hardware.rootOfTrust else {
            throw AndroidAttestationError(.bootState, "the hardware states no root of trust")
        }
        guard acceptedBootStates.contains(root.verifiedBootState) else {
            throw AndroidAttestationError(.bootState, "the verified boot state is \(root.verifiedBootState)")
        }
        guard root.deviceLocked || !requiresLockedDevice else {
            throw AndroidAttestationError(.deviceUnlocked, "the device's bootloader is unlocked")
        }
        if let minimumPatchLevel {
            guard let level = hardware.osPatchLevel, level >= minimumPatchLevel else {
                throw AndroidAttestationError(
                    .patchLevel,
                    "the OS patch level is \(hardware.osPatchLevel.map(String.init) ?? "absent"), below \(minimumPatchLevel)"
                )
            }
        }
        guard checksApp else { return }
        guard
            let application = description.softwareEnforced.attestationApplicationID ?? hardware.attestationApplicationID
        else { throw AndroidAttestationError(.appNotAllowed, "the attestation names no application") }
        let allowed = apps.contains { app in
            application.packages.contains { $0.name == app.package }
                && application.signatureDigests.contains(app.signingCertificateDigest)
        }
        guard allowed else {
            throw AndroidAttestationError(
                .appNotAllowed,
                "no allowed app among \(application.packages.prefix(4).map(\.name).joined(separator: ", "))")
        }
    }

    /// The key is an EC P-256 signing key generated in the hardware, as the hardware itself states.
    static func checkKey(_ attestation: AndroidKeyAttestation) throws {
        let hardware = attestation.keyDescription.hardwareEnforced
        guard hardware.algorithm == AuthorizationList.Value.algorithmEC else {
            throw AndroidAttestationError(.keyProperties, "the hardware does not state an EC key")
        }
        // Some Keymaster 4 StrongBox attestations omit the curve: the certificate's key then says it.
        guard hardware.ecCurve.map({ $0 == AuthorizationList.Value.curveP256 }) ?? true,
            P256.Signing.PublicKey(attestation.publicKey) != nil
        else { throw AndroidAttestationError(.keyProperties, "the key is not P-256") }
        guard hardware.purposes?.contains(AuthorizationList.Value.purposeSign) == true else {
            throw AndroidAttestationError(.keyProperties, "the hardware does not state the key signs")
        }
        guard hardware.origin == AuthorizationList.Value.originGenerated else {
            throw AndroidAttestationError(.keyProperties, "the hardware does not state the key was generated in it")
        }
    }
}
