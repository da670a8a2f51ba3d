import Metrics
@_spi(Sigil) import SigilCore

/// Counters of verifications by outcome: `sigil_verifications_total{outcome="valid"}` and one per
/// PROTOCOL.md error code.
///
/// The counters are made when the verifier is, from the factory it is given (by default the one
/// `MetricsSystem` was bootstrapped with, so bootstrap it before creating verifiers).
@usableFromInline
struct VerificationMetrics: Sendable {
    private let valid: Counter
    private let refused: [String: Counter]

    static let label = "sigil_verifications_total"

    init(factory: any MetricsFactory) {
        valid = Counter(label: Self.label, dimensions: [("outcome", "valid")], factory: factory)
        var refused: [String: Counter] = [:]
        for code in SigilError.Code.all {
            refused[code.rawValue] = Counter(
                label: Self.label, dimensions: [("outcome", code.rawValue)], factory: factory)
        }
        self.refused = refused
    }

    func recordValid() { valid.increment() }

    @usableFromInline
    func recordRefusal(_ error: any Error) {
        let code = (error as? SigilError)?.code ?? .malformedSignature
        refused[code.rawValue]?.increment()
    }
}
