// swift-tools-version: 6.1
// Sigil's server side, the `sigil` command and every test. The client (SigilCore, SigilFiles,
// SigilClient, SigilOpenAPIClient) is the package at the repository's root, which an app adds
// alone; this one depends on it by path.
//
//   swift run --package-path Server sigil --help
//   swift test --package-path Server
//
// macOS 26 because the server uses ML-DSA and X-Wing, which CryptoKit (what swift-crypto is on
// Apple platforms) has from macOS 26; on Linux there is no such floor.
import PackageDescription

/// What the tests link: every library here and the peers they are tested against.
let testDependencies: [Target.Dependency] = [
                .product(name: "SigilCore", package: "Sigil"), "SigilRSA",
                .product(name: "SigilFiles", package: "Sigil"), .product(name: "SigilClient", package: "Sigil"),
                "SigilServer", "SigilDirectoryContract", "SigilJWT", "SigilSQLite", "SigilPostgres", "SigilRedis",
                "SigilTLS", "SigilHummingbird",
                "SigilStandalone",
                "SigilHTTPClient", "SigilVapor", "SigilOpenAPI", .product(name: "SigilOpenAPIClient", package: "Sigil"),
                .product(name: "SigilTesting", package: "Sigil"), "SigilAppAttest",
                "SigilAndroidAttestation",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIVapor", package: "swift-openapi-vapor"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
]

let package = Package(
    name: "SigilServer",
    platforms: [.macOS("26.0")],
    products: [
        .library(name: "SigilRSA", targets: ["SigilRSA"]),
        .library(name: "SigilServer", targets: ["SigilServer"]),
        .library(name: "SigilDirectoryContract", targets: ["SigilDirectoryContract"]),
        .library(name: "SigilHummingbird", targets: ["SigilHummingbird"]),
        .library(name: "SigilSQLite", targets: ["SigilSQLite"]),
        .library(name: "SigilPostgres", targets: ["SigilPostgres"]),
        .library(name: "SigilRedis", targets: ["SigilRedis"]),
        .library(name: "SigilJWT", targets: ["SigilJWT"]),
        .library(name: "SigilTLS", targets: ["SigilTLS"]),
        .library(name: "SigilStandalone", targets: ["SigilStandalone"]),
        .library(name: "SigilHTTPClient", targets: ["SigilHTTPClient"]),
        .library(name: "SigilVapor", targets: ["SigilVapor"]),
        .library(name: "SigilOpenAPI", targets: ["SigilOpenAPI"]),
        .library(name: "SigilAppAttest", targets: ["SigilAppAttest"]),
        .library(name: "SigilAndroidAttestation", targets: ["SigilAndroidAttestation"]),
        .executable(name: "sigil", targets: ["sigil"]),
    ],
    dependencies: [
        .package(name: "Sigil", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.15.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.115.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/swift-openapi-vapor.git", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
    ],
    targets: [
        .target(
            name: "SigilRSA",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "SigilServer",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                .product(name: "SigilFiles", package: "Sigil"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "SigilDirectoryContract",
            dependencies: [
                "SigilServer",
                .product(name: "SigilCore", package: "Sigil"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "SigilAppAttest",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                "SigilServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "SigilAndroidAttestation",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                "SigilServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "SigilJWT",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                "SigilServer",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "SigilSQLite",
            dependencies: [
                "SigilServer",
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "SigilPostgres",
            dependencies: [
                "SigilServer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "SigilRedis",
            dependencies: [
                "SigilServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "SigilTLS",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                .product(name: "SigilFiles", package: "Sigil"),
                "SigilRSA",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "SigilHummingbird",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                "SigilServer",
                "SigilTLS",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "SigilHTTPClient",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                .product(name: "SigilClient", package: "Sigil"),
                "SigilTLS",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "SigilVapor",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                "SigilServer",
                "SigilTLS",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .target(
            name: "SigilOpenAPI",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                "SigilServer",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "SigilStandalone",
            dependencies: [
                "SigilServer",
                "SigilJWT",
                "SigilRSA",
                .product(name: "SigilFiles", package: "Sigil"),
                "SigilHummingbird",
                "SigilSQLite",
                "SigilPostgres",
                "SigilRedis",
                "SigilTLS",
                "SigilAppAttest",
                "SigilAndroidAttestation",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            // The operators' console, served by the admin port, compiled into the binary.
            resources: [
                .embedInCode("Console/console.html"), .embedInCode("Console/console.js"),
                .embedInCode("Console/console.css"),
            ]
        ),
        .executableTarget(
            name: "sigil",
            dependencies: [
                .product(name: "SigilCore", package: "Sigil"),
                "SigilRSA",
                .product(name: "SigilFiles", package: "Sigil"),
                .product(name: "SigilClient", package: "Sigil"),
                "SigilServer",
                "SigilStandalone",
                "SigilTLS",
                "SigilHTTPClient",
                "SigilHummingbird",
                "SigilSQLite",
                "SigilPostgres",
                "SigilRedis",
                "SigilAppAttest",
                "SigilAndroidAttestation",
                "SigilJWT",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        // The scaffolds every test target shares: servers, stores, devices, issuers, the echo route.
        .target(name: "SigilTestSupport", dependencies: testDependencies, path: "Tests/SigilTestSupport"),
        .testTarget(name: "SigilCoreTests", dependencies: ["SigilTestSupport"] + testDependencies),
        .testTarget(name: "SigilClientTests", dependencies: ["SigilTestSupport"] + testDependencies),
        .testTarget(name: "SigilServerTests", dependencies: ["SigilTestSupport"] + testDependencies),
        .testTarget(name: "SigilStoreTests", dependencies: ["SigilTestSupport"] + testDependencies),
        .testTarget(name: "SigilAdapterTests", dependencies: ["SigilTestSupport"] + testDependencies),
        .testTarget(name: "SigilCommandTests", dependencies: ["SigilTestSupport"] + testDependencies),
        .testTarget(name: "SigilBrowserTests", dependencies: ["SigilTestSupport"] + testDependencies),
    ],
    swiftLanguageModes: [.v6]
)
