// swift-tools-version: 6.1
// The libFuzzer targets, a package of their own so the main build stays free of sanitizer flags.
// Build and run them with `Fuzz/run` (see README); `.ci/run` runs each for a bounded time.
import Foundation
import PackageDescription

// A path dependency is known by its folder's name, whatever the clone is called.
let sigil = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "SigilFuzz",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
    ],
    targets: [
        .target(name: "CFuzzerDriver"),
        .executableTarget(
            name: "SigilFuzz",
            dependencies: [
                "CFuzzerDriver",
                .product(name: "SigilCore", package: sigil),
                .product(name: "SigilTLS", package: sigil),
                .product(name: "SigilRSA", package: sigil),
                .product(name: "SigilAndroidAttestation", package: sigil),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
