import FIDO2
import VirtualKey

extension VirtualKey {
    /// Opens the key through libfido2, over a new in-process connection.
    ///
    /// A module of its own, so that neither depends on the other: the
    /// virtual key (and `authkeyd-virtkey`) links no libfido2, and FIDO2
    /// carries no software authenticator. The tests, the fuzzer and the
    /// benchmarks, which drive one through the other, import it.
    public func openDevice(timeout: Duration = Device.defaultTimeout) throws(FIDO2Error) -> Device {
        try Device.open(connection: connect(), name: "virtual:\(configuration.productName)", timeout: timeout)
    }
}
