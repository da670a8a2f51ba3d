// swift-tools-version: 6.1
// The libFuzzer targets, a package of their own so the main build stays free of sanitizer flags.
// Build and run them with `Fuzz/run` (see README); `.ci/run` runs each for a bounded time.
import PackageDescription

let package = Package(
    name: "SigilFuzz",
    dependencies: [
        .package(name: "Sigil", path: ".."),
        .package(name: "SigilServer", path: "../Server"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
    ],
    targets: [
        .target(name: "CFuzzerDriver"),
        .executableTarget(
            name: "SigilFuzz",
            dependencies: [
                "CFuzzerDriver",
                .product(name: "SigilCore", package: "Sigil"),
                .product(name: "SigilTLS", package: "SigilServer"),
                .product(name: "SigilRSA", package: "SigilServer"),
                .product(name: "SigilAndroidAttestation", package: "SigilServer"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
