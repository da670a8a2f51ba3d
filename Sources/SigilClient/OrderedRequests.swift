@_spi(Sigil) import SigilCore

/// One request at a time for each key whose signatures must reach the server in the order they were
/// made (``SignatureProvider/requiresOrderedRequests``: App Attest, whose assertion counter the
/// server refuses to see go backwards). Every session signing with such a key, the app's and
/// enrollment's own, waits its turn here, first come first served, from signing until the answer is
/// in; other keys never wait.
enum OrderedRequests {
    private static let locks = Locked<[String: Turns]>([:])

    /// Runs `exchange` in `key`'s turn when it needs one, else at once.
    static func run<Result: Sendable>(
        for key: any SignatureProvider, keyID: String, _ exchange: () async throws -> Result
    ) async throws -> Result {
        guard key.requiresOrderedRequests else { return try await exchange() }
        let turns = locks.withLock { locks in
            if let turns = locks[keyID] { return turns }
            let turns = Turns()
            locks[keyID] = turns
            return turns
        }
        await turns.take()
        do {
            let result = try await exchange()
            await turns.pass()
            return result
        } catch {
            await turns.pass()
            throw error
        }
    }

    /// A first-come-first-served turn, held across suspension points (which no lock may be).
    actor Turns {
        private var taken = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func take() async {
            guard taken else {
                taken = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func pass() {
            if waiting.isEmpty {
                taken = false
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}
