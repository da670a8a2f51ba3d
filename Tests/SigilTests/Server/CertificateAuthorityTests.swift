import Crypto
import Foundation
import SigilCore
import SigilTLS
import SwiftASN1
import Testing
import X509

@Suite("Client CA")
struct CertificateAuthorityTests {
    @Test("a CSR is issued a client certificate naming its key ID; a CSR for another key is refused")
    func issue() throws {
        let authority = try CertificateAuthority.create().authority
        let holder = TLSTests.CSRDevice()
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

extension Certificate {
    func serializeAsDER() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(self)
        return serializer.serializedBytes
    }
}
