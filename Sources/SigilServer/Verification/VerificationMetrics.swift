import Metrics
import SigilCore

/// Counters of verifications by outcome: `sigil_verifications_total{outcome="valid"}` and one per
/// PROTOCOL.md error code.
///
/// The counters are made when the verifier is, so bootstrap `MetricsSystem` before creating it.
struct VerificationMetrics: Sendable {
    private let valid: Counter
    private let refused: [String: Counter]

    static let label = "sigil_verifications_total"

    init() {
        valid = Counter(label: Self.label, dimensions: [("outcome", "valid")])
        var refused: [String: Counter] = [:]
        for code in SigilError.Code.all {
            refused[code.rawValue] = Counter(label: Self.label, dimensions: [("outcome", code.rawValue)])
        }
        self.refused = refused
    }

    func recordValid() { valid.increment() }

    func recordRefusal(_ error: any Error) {
        let code = (error as? SigilError)?.code ?? .malformedSignature
        refused[code.rawValue]?.increment()
    }
}
