import Dispatch
import FIDO2
import Synchronization
import SystemKit

/// The thread that owns one key, and the key's handle while it is open:
/// every libfido2 call on the key runs here, one at a time, in the order
/// it came.
///
/// - **Open only while in use.** The key is opened for the first call that
///   needs it and closed once no call has come for `linger`, so that
///   between uses other programs can open it (libfido2 locks a hidraw node
///   while it has it open; see authkeyd(8), "SHARING KEYS WITH OTHER
///   PROGRAMS").
/// - **Another program's key is waited for.** A call that finds the node
///   locked, or the key busy with another host's transaction, is tried
///   again every `busyRetry` until the call's deadline; `whileBusy` hears
///   who holds it, once per holder.
/// - **Cancellable.** A call cancelled before its turn does not start; one
///   cancelled while it runs is cancelled on the key (`fido_dev_cancel`)
///   until it ends, and never the call after it.
final class DeviceWorker: Sendable {
    private enum Job: Sendable {
        case run(@Sendable () -> Void)
        case stop
    }

    let name: String
    private let linger: Duration
    private let opener: @Sendable () throws(FIDO2Error) -> Device
    /// Who holds the key's lock, when an open finds it locked.
    private let lockHolder: @Sendable () -> LockHolder?
    /// Runs on the thread after each open, before the call that needed it.
    private let opened: @Sendable (Device) -> Void
    private let jobs = BlockingQueue<Job>()
    /// The open handle, or nil while the key is closed. Set and cleared on
    /// the worker's thread; `cancel()` reads it from others.
    private let device = Protected<Device?>(nil)
    /// How often the key has been opened, for the tests of this lifecycle.
    private let opens = Atomic<Int>(0)
    /// Set by `stop`: calls that have not started fail, and do not open the key.
    private let stopped = Atomic<Bool>(false)
    /// The call running now, so that `stop` can end its wait for a busy key.
    private let running = Protected<KeyCallCancellation?>(nil)

    /// How long a busy key is left before the next try.
    static let busyRetry: Duration = .milliseconds(100)
    /// After this long busy, tries come further apart (a bring-up may wait
    /// for as long as another program keeps the key).
    static let longBusy: Duration = .seconds(5)
    static let longBusyRetry: Duration = .milliseconds(500)

    init(
        name: String, linger: Duration, lockHolder: @escaping @Sendable () -> LockHolder? = { nil },
        opened: @escaping @Sendable (Device) -> Void = { _ in }, open: @escaping @Sendable () throws(FIDO2Error) -> Device
    ) {
        self.name = name
        self.linger = linger
        self.lockHolder = lockHolder
        self.opened = opened
        opener = open
        startThread(name: "key-\(name)") { [self] in serve() }
    }

    /// Whether the key is open now, and how often it has been opened.
    var openState: (isOpen: Bool, opens: Int) {
        (device.withLock { $0 != nil }, opens.load(ordering: .relaxed))
    }

    private func serve() {
        while true {
            let lingering = device.withLock { $0 != nil }
            // nil: nothing came within the linger (the queue is only closed
            // by `stop`, which returns below).
            guard let job = jobs.pop(timeoutMilliseconds: lingering ? linger.wholeMilliseconds : -1) else {
                closeDevice()
                continue
            }
            switch job {
            case .run(let body): body()
            case .stop:
                closeDevice()
                // What is still queued runs, and fails (the worker is
                // stopped); what comes later is refused at once (`call`). Either way every caller is answered: a job left
                // in the queue would leave its caller waiting for good.
                for case .run(let body) in jobs.closeAndTakeRemaining() { body() }
                return
            }
        }
    }

    private func closeDevice() {
        let open = device.withLock { device -> Device? in
            defer { device = nil }
            return device
        }
        open?.close()
    }

    /// The open handle, opening the key if it is closed.
    private func openDevice() throws(FIDO2Error) -> Device {
        // A handle closed on the thread (a U2F key after the touch race)
        // counts as closed.
        if let open = device.withLock({ $0 }), open.isOpen { return open }
        let fresh = try opener()
        opens.add(1, ordering: .relaxed)
        device.withLock { $0 = fresh }
        opened(fresh)
        return fresh
    }

    /// Runs `body` with the key open, after the calls queued before it,
    /// each libfido2 call bounded by the time left until `deadline`.
    ///
    /// On the caller's actor (the broker's): the job is queued before the
    /// caller's turn ends, and the call resumes there. Called nonisolated,
    /// it went to the task's executor and back, two more turns on the
    /// broker's queue per call, the first before the job was even queued.
    func call<T: Sendable>(
        until deadline: DispatchTime, cancellation: KeyCallCancellation? = nil,
        whileBusy: @escaping @Sendable (LockHolder?) -> Void = { _ in },
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T
    ) async throws(FIDO2Error) -> T {
        let cancellation = cancellation ?? KeyCallCancellation()
        let result: Result<T, FIDO2Error> = await withCheckedContinuation(isolation: isolation) { continuation in
            let queued = jobs.push(.run { [self] in
                let outcome = Result { () throws(FIDO2Error) -> T in
                    try run(body, until: deadline, cancellation: cancellation, whileBusy: whileBusy)
                }
                continuation.resume(returning: outcome)
            })
            if !queued { continuation.resume(returning: .failure(Self.stoppedError)) }
        }
        return try result.get()
    }

    /// On the worker's thread: opens the key if need be and runs `body`,
    /// again after a pause while another program has the key.
    private func run<T>(
        _ body: (Device) throws(FIDO2Error) -> T, until deadline: DispatchTime, cancellation: KeyCallCancellation,
        whileBusy: (LockHolder?) -> Void
    ) throws(FIDO2Error) -> T {
        guard !hasStopped else { throw Self.stoppedError }
        guard cancellation.begin(on: self) else { throw FIDO2Error.keepaliveCancel }
        running.withLock { $0 = cancellation }
        defer {
            running.withLock { $0 = nil }
            cancellation.end()
        }
        let started = DispatchTime.now()
        var reported: LockHolder?? = nil
        while true {
            do throws(FIDO2Error) {
                let open = try openDevice()
                // Rounded up to the next millisecond, so that libfido2's
                // timeout ends at or after the deadline, never just before
                // (the caller then reports the request's own timeout).
                open.timeout = max(.zero, deadline.durationFromNow) + .milliseconds(1)
                defer { open.timeout = Device.defaultTimeout }
                return try body(open)
            } catch {
                // A transaction that broke off (a reply lost, cut short,
                // garbled or late) may still be answered on this channel,
                // and libfido2 would take that for the answer to the next
                // request, which may be another client's. The next call
                // opens the key again: a new channel (for a USB key, a new
                // hidraw handle), and whatever comes on the old one is lost.
                if error.leavesTransactionOpen { closeDevice() }
                guard error.isKeyBusy else { throw error }
                let waited = .zero - started.durationFromNow
                let pause = waited > Self.longBusy ? Self.longBusyRetry : Self.busyRetry
                guard deadline.durationFromNow > pause else { throw error }
                let holder = error == .keyLocked ? lockHolder() : nil
                // Told once, and again when another program takes the key;
                // a holder gone by the time /proc/locks is read let go just
                // now, which is no news.
                if reported == nil || (holder != nil && reported != .some(holder)) {
                    reported = .some(holder)
                    whileBusy(holder)
                }
                guard cancellation.pause(pause) else { throw FIDO2Error.keepaliveCancel }
            }
        }
    }

    /// Whether `stop` has taken effect: every call fails from then on.
    var hasStopped: Bool { stopped.load(ordering: .acquiring) }

    /// What a call gets once the worker has stopped (as a closed key's
    /// calls do): FIDO_ERR_INVALID_ARGUMENT, as libfido2 answers a closed device.
    static let stoppedError = FIDO2Error(code: -7, function: "key closed")

    /// Abandons the libfido2 call in progress, if any (`fido_dev_cancel`),
    /// whoever made it: a request's own call is cancelled through its
    /// `KeyCallCancellation`.
    func cancel() {
        try? device.withLock { $0 }?.cancel()
    }

    /// Closes the key after the calls queued now; the next call opens it again.
    func closeWhenIdle() {
        jobs.push(.run { [self] in closeDevice() })
    }

    /// Closes the key after the calls queued now, and returns once it is
    /// closed (at once if the worker has stopped, which closed it).
    func close() async {
        await withCheckedContinuation { continuation in
            let queued = jobs.push(.run { [self] in
                closeDevice()
                continuation.resume()
            })
            if !queued { continuation.resume() }
        }
    }

    /// Cancels what runs (a wait for a busy key too), closes the key and
    /// ends the thread after the queued jobs (which then fail).
    func stop() {
        stopped.store(true, ordering: .releasing)
        running.withLock { $0 }?.cancel()
        cancel()
        jobs.push(.stop)
    }
}

/// How one call on a key is cancelled from outside, however the two cross.
///
/// - Cancelled before it starts, the call does not start.
/// - Cancelled while it waits for a busy key, the wait ends.
/// - Cancelled while it runs, `fido_dev_cancel` is sent now and again every
///   `repeat` until it ends: a CANCEL that reaches the key before the
///   request it is meant for is ignored by the key. Each repeat is sent
///   while the call is held running, so the cancel reaches this call only,
///   never the next one on the key (another client's).
final class KeyCallCancellation: Sendable {
    /// How often a cancelled call that still runs is cancelled again.
    static let `repeat`: Duration = .milliseconds(100)
    /// Where the repeats are timed (not a global queue: see `QueueExecutor`).
    private static let timers = DispatchQueue(label: "authkeyd.cancel-repeat")

    private struct State {
        var worker: DeviceWorker?
        var cancelled = false
    }
    private let state = Protected(State())
    /// Signalled by `cancel()`, to end a pause.
    private let wake = DispatchSemaphore(value: 0)

    init() {}

    /// Stops the call: it will not start, or, running, it is cancelled
    /// until it ends. Safe from any thread, any number of times.
    func cancel() {
        let running = state.withLock { state in
            state.cancelled = true
            return state.worker != nil
        }
        wake.signal()
        if running { keepCancelling() }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    fileprivate func begin(on worker: DeviceWorker) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.worker = worker
            return true
        }
    }

    fileprivate func end() { state.withLock { $0.worker = nil } }

    /// Waits `duration` unless cancelled meanwhile; false when cancelled.
    fileprivate func pause(_ duration: Duration) -> Bool {
        if isCancelled { return false }
        _ = wake.wait(timeout: .now() + .milliseconds(duration.wholeMilliseconds))
        return !isCancelled
    }

    /// `fido_dev_cancel` now, and again every `repeat` while the call
    /// runs. The lock is held while the cancel is sent, so `end()` waits
    /// for it and the CANCEL cannot reach a later call.
    private func keepCancelling() {
        let sent = state.withLock { state -> Bool in
            guard let worker = state.worker else { return false }
            worker.cancel()
            return true
        }
        guard sent else { return }
        Self.timers.asyncAfter(deadline: .now() + .milliseconds(Self.repeat.wholeMilliseconds)) { [self] in
            keepCancelling()
        }
    }
}

extension DispatchTime {
    /// The time from now until this instant (negative once it has passed).
    var durationFromNow: Duration {
        let now = DispatchTime.now().uptimeNanoseconds
        let then = uptimeNanoseconds
        return then >= now ? .nanoseconds(Int64(clamping: then - now)) : .zero - .nanoseconds(Int64(clamping: now - then))
    }
}

extension FIDO2Error {
    /// libfido2 gave up on the reply (nothing, part of it, or garbage came
    /// in time) rather than the key answering with an error: the key may
    /// still be sending.
    var leavesTransactionOpen: Bool {
        self == .tx || self == .rx || self == .rxNotCbor || self == .rxInvalidCbor
    }
}
