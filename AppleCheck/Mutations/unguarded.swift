// AppleCheck/run's self-test: type-checked with the client, this must fail, as Xcode would at iOS 17:
// ML-DSA is iOS 26, Mutex iOS 18, and neither is guarded.
import Crypto
import Synchronization

func appleCheckUnguardedMLDSA() throws -> Int {
    try MLDSA65.PrivateKey().publicKey.rawRepresentation.count
}

let appleCheckUnguardedMutex = Mutex<Int>(0)
