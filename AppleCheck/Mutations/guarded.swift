// AppleCheck/run's self-test: the same uses as unguarded.swift, guarded: this must pass.
import Crypto
import Synchronization

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
func appleCheckGuardedMLDSA() throws -> Int {
    try MLDSA65.PrivateKey().publicKey.rawRepresentation.count
}

func appleCheckCheckedMLDSA() throws -> Int {
    if #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
        return try MLDSA65.PrivateKey().publicKey.rawRepresentation.count
    }
    return 0
}

@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
func appleCheckGuardedMutex() -> Int { Mutex<Int>(1).withLock { $0 } }
