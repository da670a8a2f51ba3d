import Crypto
import Foundation
import NIOSSL
@_spi(Sigil) import SigilCore
import SigilTLS
import SwiftASN1
import Testing
import X509

@testable import SigilTestSupport

@Suite("Client CA")
struct CertificateAuthorityTests {
    @Test("a CSR is issued a client certificate naming its key ID; a CSR for another key is refused")
    func issue() throws {
        let authority = try CertificateAuthority.create().authority
        let holder = TLSScaffold.CSRDevice()
        let csr = try CertificateAuthority.parseCSR(Array(try holder.csrPEM.utf8))
        let keyID = try holder.device.keyID
        #expect(try CertificateAuthority.keyID(of: csr) == keyID)
        let certificate = try authority.issue(csr, keyID: keyID)
        let identity = try ClientCertificateIdentity(der: try certificate.serializeAsDER())
        #expect(identity.sigilKeyID == keyID)
        #expect(identity.commonName == keyID)
        #expect(authority.certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(throws: SigilError(.invalidRegistration, "")) {
            try authority.issue(csr, keyID: try TestDevice().keyID)
        }
    }
}

@Suite("PKCS#12")
struct PKCS12Tests {
    @Test("a bundle opens with BoringSSL under its password, and not under another")
    func bundle() throws {
        let authority = try CertificateAuthority.create().authority
        let key = P256.Signing.PrivateKey()
        let (csr, keyDER) = try CertificateAuthority.csr(privateKeyPEM: key.pemRepresentation)
        let certificate = try authority.issue(csr, keyID: try CertificateAuthority.keyID(of: csr))
        let bundle = try PKCS12.bundle(
            privateKeyDER: keyDER,
            certificatesDER: [try Certificates.der(certificate), try Certificates.der(authority.certificate)],
            password: "correct horse",
            iterations: 2048
        )
        let opened = try NIOSSLPKCS12Bundle(buffer: bundle, passphrase: Array("correct horse".utf8))
        #expect(try opened.certificateChain.map { try $0.toDERBytes() }.first == Certificates.der(certificate))
        let openedKey = try P256.Signing.PrivateKey(derRepresentation: try opened.privateKey.derBytes)
        #expect(openedKey.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(throws: (any Error).self) {
            _ = try NIOSSLPKCS12Bundle(buffer: bundle, passphrase: Array("wrong horse".utf8))
        }
        #expect(throws: SigilInputError.self) {
            _ = try PKCS12.bundle(privateKeyDER: keyDER, certificatesDER: [], password: "")
        }
    }

    @Test("a peer certificate that cannot be read is a certificate-mismatch, never skipped")
    func unreadablePeer() {
        let error = #expect(throws: SigilError.self) { try ClientCertificateIdentity(readingPeer: [0x30, 0x03, 0x02]) }
        #expect(error?.code == .certificateMismatch)
    }
}
