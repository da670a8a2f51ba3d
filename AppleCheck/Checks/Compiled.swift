// Compiled into SigilClient by AppleCheck/run only, never by the package. It names a declaration of
// each Apple-only file, so the check fails, rather than passing with nothing checked, should a file's
// `#if` stop holding against the stubs (a renamed stub, a new `canImport`).
import Foundation

enum AppleCheckCompiled {
    static let declarations: [Any.Type] = [
        SystemAppAttest.self,  // Apple/SystemAppAttest.swift
        KeychainDeviceStore.self,  // Apple/KeychainDeviceStore.swift
        PinningSessionDelegate.self,  // Apple/PinningSessionDelegate.swift
        SecureEnclaveSigningKey.self,  // Apple/SecureEnclaveKey.swift
    ]
}
