import Dispatch

/// A first-in first-out queue whose consumer can wait, with a timeout, for
/// the next element. Producers never block.
public final class BlockingQueue<Element: Sendable>: Sendable {
    /// Taken elements leave nil behind at once: a slot that kept its
    /// element until the next compaction kept up to 64 finished jobs alive,
    /// with whatever they captured (a request, a PIN), as LeakSanitizer
    /// showed.
    private let elements = Protected<(items: [Element?], head: Int, closed: Bool)>(([], 0, false))
    private let available = DispatchSemaphore(value: 0)

    public init() {}

    /// Queues `element`; false when the queue is closed, and the element
    /// is not taken (its producer must answer for it).
    @discardableResult
    public func push(_ element: Element) -> Bool {
        let accepted = elements.withLock { state in
            guard !state.closed else { return false }
            state.items.append(element)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// The next element, waiting up to `timeoutMilliseconds` (negative:
    /// without limit); nil on timeout or once the queue is closed.
    public func pop(timeoutMilliseconds: Int) -> Element? {
        let deadline: DispatchTime = timeoutMilliseconds < 0 ? .distantFuture : .now() + .milliseconds(timeoutMilliseconds)
        guard available.wait(timeout: deadline) == .success else { return nil }
        return elements.withLock { state in
            guard !state.closed, state.head < state.items.count else { return nil }
            let element = state.items[state.head].take()
            state.head += 1
            // Compact now and then instead of shifting on every pop.
            if state.head > 64, state.head * 2 > state.items.count {
                state.items.removeFirst(state.head)
                state.head = 0
            }
            return element
        }
    }

    /// Closes the queue and hands back what was still in it, in order: a
    /// consumer that stops can answer for each, and no `push` succeeds
    /// after (none is lost between the two).
    public func closeAndTakeRemaining() -> [Element] {
        let remaining = elements.withLock { state -> [Element] in
            defer {
                state.closed = true
                state.items = []
                state.head = 0
            }
            return state.items[state.head...].compactMap { $0 }
        }
        available.signal()
        return remaining
    }

    /// Drops everything queued; waiting and later `pop`s return nil.
    public func close() {
        elements.withLock { state in
            state.closed = true
            state.items = []
            state.head = 0
        }
        available.signal()
    }

    /// Forgets queued elements without closing.
    public func removeAll() {
        elements.withLock { state in
            // Keep the semaphore in step: the dropped elements' signals
            // will wake `pop`s that then find nothing and return nil.
            state.items = []
            state.head = 0
        }
    }
}
