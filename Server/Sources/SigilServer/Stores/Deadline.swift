@_spi(Sigil) import SigilCore
import Synchronization

/// Runs an operation with a deadline, failing with `failure` when it passes: a store that does not
/// answer in time counts as down (`store-unavailable`), a gateway's upstream as `upstream-timeout`,
/// so a slow peer refuses requests instead of holding them.
///
/// The operation runs in its own task, cancelled when the deadline passes; the caller does not wait
/// for it to notice.
@usableFromInline
package func withDeadline<Result: Sendable>(
    _ timeout: Duration,
    _ failure: @autoclosure () -> SigilError,
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let race = DeadlineRace<Result>()
    let failure = failure()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation, timeout: timeout, failure: failure, operation: operation)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of the operation, the deadline and the caller's cancellation resumes the caller; the
/// others are cancelled.
private final class DeadlineRace<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var finished: Swift.Result<Result, any Error>?
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    func start(
        _ continuation: CheckedContinuation<Result, any Error>,
        timeout: Duration,
        failure: SigilError,
        operation: @escaping @Sendable () async throws -> Result
    ) {
        let early = state.withLock { state -> Swift.Result<Result, any Error>? in
            if let finished = state.finished { return finished }
            state.continuation = continuation
            return nil
        }
        if let early {
            continuation.resume(with: early)
            return
        }
        let work = Task {
            do {
                self.finish(.success(try await operation()))
            } catch {
                self.finish(.failure(error))
            }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.finish(.failure(failure))
        }
        let cancelNow = state.withLock { state -> Bool in
            state.tasks = [work, timer]
            return state.finished != nil
        }
        if cancelNow {
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Swift.Result<Result, any Error>) {
        let (continuation, tasks) = state.withLock { state in
            if state.finished == nil { state.finished = result }
            defer {
                state.continuation = nil
                state.tasks = []
            }
            return (state.continuation, state.tasks)
        }
        continuation?.resume(with: result)
        for task in tasks { task.cancel() }
    }
}
