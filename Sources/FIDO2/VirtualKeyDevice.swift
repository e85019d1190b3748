import VirtualKey

extension VirtualKey {
    /// Opens the key through libfido2, over a new in-process connection.
    ///
    /// It lives here, not in VirtualKey, so that the virtual key (and
    /// `authkeyd-virtkey`, which serves it) does not link libfido2.
    public func openDevice(timeout: Duration = Device.defaultTimeout) throws(FIDO2Error) -> Device {
        try Device.open(connection: connect(), name: "virtual:\(configuration.productName)", timeout: timeout)
    }
}
