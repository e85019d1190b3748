import SystemKit
import Testing

@Suite struct BlockingQueueTests {
    final class Job: Sendable {}

    /// Found by LeakSanitizer: a taken element stayed in the queue until
    /// its next compaction, so a key's worker kept up to 64 finished jobs
    /// alive with whatever they captured (requests, PINs).
    @Test func aTakenElementIsNotKeptAlive() {
        let queue = BlockingQueue<Job>()
        weak var taken: Job?
        do {
            let job = Job()
            taken = job
            queue.push(job)
        }
        #expect(queue.pop(timeoutMilliseconds: 0) != nil)
        #expect(taken == nil, "the queue still holds the job it handed out")
    }

    @Test func elementsComeOutInOrderAcrossCompactions() {
        let queue = BlockingQueue<Int>()
        var out: [Int] = []
        for round in 0..<5 {
            for i in 0..<100 { queue.push(round * 100 + i) }
            for _ in 0..<100 { out.append(queue.pop(timeoutMilliseconds: 0) ?? -1) }
        }
        #expect(out == Array(0..<500))
        #expect(queue.pop(timeoutMilliseconds: 10) == nil, "empty: the wait times out")
    }

    @Test func closingWakesTheWaiterAndDropsWhatWasQueued() {
        let queue = BlockingQueue<Int>()
        queue.push(1)
        queue.close()
        #expect(queue.pop(timeoutMilliseconds: 1000) == nil)
        queue.push(2)
        #expect(queue.pop(timeoutMilliseconds: 0) == nil, "a closed queue takes nothing")
    }

    @Test func closingAndTakingTheRestHandsBackEachQueuedElementAndRefusesLaterOnes() {
        let queue = BlockingQueue<Int>()
        for i in 1...3 { #expect(queue.push(i)) }
        #expect(queue.pop(timeoutMilliseconds: 0) == 1)
        #expect(queue.closeAndTakeRemaining() == [2, 3])
        #expect(!queue.push(4), "a closed queue refuses, so its producer can answer for the element")
        #expect(queue.pop(timeoutMilliseconds: 0) == nil)
    }
}
