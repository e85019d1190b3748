extension Broker {
    /// Takes the key if it is free now, without waiting: for a look that
    /// would rather skip a key than wait for it (a silent probe, the touch
    /// race). True when taken; `release` it after. An operation that waits
    /// for its key takes it with `Operation.acquire`.
    func tryAcquire(_ key: RegisteredKey) -> Bool { keys.take(key) }

    /// Hands the key to the next operation in line, or marks it free.
    func release(_ key: RegisteredKey) {
        if let next = keys.release(key) {
            next.resume(returning: true)
        } else {
            armIdleTimer()
        }
    }
}
