import AuthProtocol
import FIDO2
import VirtualKey

extension Broker {
    /// Creates an in-process virtual key from its spec and serves it; the
    /// key, like any other, is reached only through libfido2's custom I/O.
    @discardableResult
    func bringUpVirtualKey(spec: String) async -> RegisteredKey? {
        let virtualKey: VirtualKey
        do {
            virtualKey = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: spec))
        } catch {
            logger.error("cannot create virtual key \(DaemonConfiguration.redacted(spec)): \(error)")
            return nil
        }
        let configuration = virtualKey.configuration
        let path = "virtual:\(configuration.productName)"
        let key = await bringUp(
            transport: .virtual, path: path, manufacturer: configuration.manufacturer,
            product: configuration.productName
        ) { () throws(FIDO2Error) -> Device in
            try Device.open(connection: virtualKey.connect(), name: path)
        }
        guard let key else { return nil }
        keys.virtual[key.id] = (spec, virtualKey)
        // A virtual key that vanishes (a fault injected by a test) is a removal.
        virtualKey.onUnplug { [weak self] in
            guard let self else { return }
            self.startTask { await self.virtualKeyUnplugged(key) }
        }
        return key
    }

    private func virtualKeyUnplugged(_ key: RegisteredKey) {
        keys.virtual[key.id] = nil
        takeDown(key)
    }

    /// After a reload: virtual keys whose spec left the configuration go,
    /// new specs come.
    func reconcileVirtualKeys(with specs: [String]) async {
        var wanted = specs
        for (id, entry) in keys.virtual {
            if let index = wanted.firstIndex(of: entry.spec) {
                wanted.remove(at: index)
            } else if let key = keys[id] {
                keys.virtual[id] = nil
                takeDown(key)
            }
        }
        for spec in wanted { await bringUpVirtualKey(spec: spec) }
    }
}
