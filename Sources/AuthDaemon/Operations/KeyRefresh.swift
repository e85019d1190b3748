import FIDO2

extension Operation {
    /// Reads the key's getInfo and attempts left again, within the
    /// operation, which holds it (after anything that may have changed
    /// them). When getInfo changed, the key is closed once idle, so that
    /// the next open has libfido2 verify users the way the key now can (it
    /// decides at open: a token from the key's own sensor only if getInfo
    /// then said `uv: true`; see `Device.reopen()`), and the watchers hear.
    func refresh(_ key: RegisteredKey, in broker: isolated Broker) async {
        let snapshot: KeySnapshot
        do throws(FIDOFailure) {
            snapshot = try await perform(key, in: broker) { device throws(FIDO2Error) in try device.snapshot() }
        } catch {
            if case .device(let error) = error {
                broker.logger.warning("key \(key.id): cannot read its getInfo after \(request.method): \(error); authenticators.list may show it as it was")
            }
            return
        }
        guard key.update(to: snapshot) else { return }
        key.worker.closeWhenIdle()
        broker.keyChanged(key)
    }
}
