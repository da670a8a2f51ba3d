// swift-tools-version: 6.1
// Sigil's client: what an app links. The core (canonical forms, keys, both wire profiles, sealing,
// pinning), the files it keeps, the client and its OpenAPI middleware. Its whole closure is five
// packages (swift-crypto, swift-asn1, swift-http-types, swift-http-structured-headers,
// swift-openapi-runtime): the server side, the `sigil` command and the tests are the package in
// Server/, which depends on this one by path (`swift run --package-path Server sigil`).
import PackageDescription

let package = Package(
    name: "Sigil",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "SigilCore", targets: ["SigilCore"]),
        .library(name: "SigilClient", targets: ["SigilClient"]),
        .library(name: "SigilFiles", targets: ["SigilFiles"]),
        .library(name: "SigilOpenAPIClient", targets: ["SigilOpenAPIClient"]),
        // For an app's test target only: a Sigil backend in process.
        .library(name: "SigilTesting", targets: ["SigilTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "SigilCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
            ]
        ),
        .target(
            name: "SigilFiles",
            dependencies: ["SigilCore"]
        ),
        .target(
            name: "SigilClient",
            dependencies: [
                "SigilCore",
                "SigilFiles",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "SigilTesting",
            dependencies: [
                "SigilCore",
                "SigilClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "SigilOpenAPIClient",
            dependencies: [
                "SigilCore",
                "SigilClient",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
