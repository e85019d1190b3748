import AuthProtocol
import SystemKit

/// The prompts an agent is answering, by the daemon's name for their
/// request (`op-N`), so that `operation.cancelled` can cancel them: each
/// runs in a task of its own, and the front end honours its cancellation.
final class PromptTasks: Sendable {
    private struct State {
        var running: [JSONValue: [Int: Task<Result<JSONValue, RPCError>, Never>]] = [:]
        var nextNumber = 0
        /// Requests cancelled lately: a prompt of one that comes after the
        /// notice (the two race in from the socket) is not asked at all.
        var cancelled: [JSONValue] = []
    }

    private let state = Protected(State())

    /// Runs `answer` as a task filed under `request`, and returns its result.
    func run(
        for request: JSONValue, _ answer: @escaping @Sendable () async -> Result<JSONValue, RPCError>
    ) async -> Result<JSONValue, RPCError> {
        let task = Task { await answer() }
        let filed = state.withLock { state -> Int? in
            guard !state.cancelled.contains(request) else { return nil }
            state.nextNumber += 1
            state.running[request, default: [:]][state.nextNumber] = task
            return state.nextNumber
        }
        guard let number = filed else {
            task.cancel()
            return .failure(RPCError(.cancelled, "the request was cancelled"))
        }
        defer {
            state.withLock { state in
                state.running[request]?[number] = nil
                if state.running[request]?.isEmpty == true { state.running[request] = nil }
            }
        }
        return await task.value
    }

    /// Cancels every prompt of `request`, and any that comes later.
    func cancel(_ request: JSONValue) {
        let tasks = state.withLock { state in
            state.cancelled.append(request)
            if state.cancelled.count > 64 { state.cancelled.removeFirst() }
            return state.running.removeValue(forKey: request) ?? [:]
        }
        tasks.values.forEach { $0.cancel() }
    }
}
