// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Sigil",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "SigilCore", targets: ["SigilCore"]),
        .library(name: "SigilClient", targets: ["SigilClient"]),
        .library(name: "SigilServer", targets: ["SigilServer"]),
        .executable(name: "sigil", targets: ["sigil"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "SigilCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
            ]
        ),
        .target(
            name: "SigilClient",
            dependencies: ["SigilCore"]
        ),
        .target(
            name: "SigilServer",
            dependencies: ["SigilCore"]
        ),
        .executableTarget(
            name: "sigil",
            dependencies: [
                "SigilCore",
                "SigilClient",
                "SigilServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
            ]
        ),
        .testTarget(
            name: "SigilTests",
            dependencies: ["SigilCore", "SigilClient", "SigilServer"],
            exclude: ["Vectors", "Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
