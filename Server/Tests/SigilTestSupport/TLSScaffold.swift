import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2
import NIOPosix
import NIOSSL
import PostgresNIO
import SQLiteNIO
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilHummingbird
import SigilJWT
import SigilPostgres
import SigilSQLite
import SigilServer
import SigilStandalone
import SigilTLS
import SigilTesting
import Synchronization
import Testing
import X509

/// Devices that ask for client certificates.
enum TLSScaffold {
    /// A P-256 device key with a CSR for it.
    struct CSRDevice {
        let privateKey = P256.Signing.PrivateKey()
        var device: TestDevice {
            get throws {
                let key = try #require(try KeyFile.load(Array(privateKey.pemRepresentation.utf8)).signingKey)
                return TestDevice(key: key, keyID: try key.derivedKeyID ?? "")
            }
        }
        var csrPEM: String {
            get throws {
                let csr = try CertificateSigningRequest(
                    version: .v1,
                    subject: try DistinguishedName { CommonName("device") },
                    privateKey: Certificate.PrivateKey(privateKey),
                    attributes: CertificateSigningRequest.Attributes(),
                    signatureAlgorithm: .ecdsaWithSHA256
                )
                return try csr.serializeAsPEM().pemString
            }
        }
    }
}
