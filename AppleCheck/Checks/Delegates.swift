// Compiled into SigilClient by AppleCheck/run only, never by the package. Each URLSession delegate
// method a checked delegate implements, held to the signature Apple declares (the stubs'
// `URLSessionDelegateMethod`): on Apple platforms a drifted one would only draw a warning and never be
// called, leaving the connection to URLSession's default handling, without the pins. Add a
// conformance here with each delegate method added.
import Foundation

extension PinningSessionDelegate: URLSessionDelegateMethod.DidReceiveChallenge {}
extension PinningSessionDelegate: URLSessionDelegateMethod.WillPerformHTTPRedirection {}
