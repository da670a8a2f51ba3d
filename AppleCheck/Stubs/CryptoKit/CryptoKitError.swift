// CryptoKit's error.
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.

/// Mimics `CryptoKitError`, `enum CryptoKitError` (an `Error`; no further conformance is stated here,
/// the documentation searched not listing them):
/// https://developer.apple.com/documentation/cryptokit/cryptokiterror
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public enum CryptoKitError: Error {
    /// Mimics `case incorrectKeySize`: https://developer.apple.com/documentation/cryptokit/cryptokiterror/incorrectkeysize
    case incorrectKeySize
    /// Mimics `case incorrectParameterSize`:
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/incorrectparametersize
    case incorrectParameterSize
    /// Mimics `case authenticationFailure`:
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/authenticationfailure
    case authenticationFailure
    /// Mimics `case underlyingCoreCryptoError(error: Int32)`:
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/underlyingcorecryptoerror(error:)
    case underlyingCoreCryptoError(error: Int32)
    /// Mimics `case wrapFailure`: https://developer.apple.com/documentation/cryptokit/cryptokiterror/wrapfailure
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macCatalyst 15.0, *)
    case wrapFailure
    /// Mimics `case unwrapFailure`: https://developer.apple.com/documentation/cryptokit/cryptokiterror/unwrapfailure
    /// (its page is not in the documentation searched; its availability is `wrapFailure`'s, its pair's)
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macCatalyst 15.0, *)
    case unwrapFailure
    /// Mimics `case invalidParameter`: https://developer.apple.com/documentation/cryptokit/cryptokiterror/invalidparameter
    @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, macCatalyst 16.0, *)
    case invalidParameter
}
