internal import CFido2

/// A FIDO key the operating system offers, before it is opened.
public struct DeviceDescriptor: Codable, Hashable, Sendable {
    /// The hidraw node, such as `/dev/hidraw3`.
    public var path: String
    public var manufacturer: String
    public var product: String
    public var vendorID: UInt16
    public var productID: UInt16

    public init(path: String, manufacturer: String, product: String, vendorID: UInt16, productID: UInt16) {
        self.path = path
        self.manufacturer = manufacturer
        self.product = product
        self.vendorID = vendorID
        self.productID = productID
    }
}

/// The FIDO keys plugged into this machine (`fido_dev_info_manifest`).
public enum DeviceManifest {
    /// Lists every HID device with the FIDO usage page that libfido2 can see.
    public static func devices(limit: Int = 64) throws(FIDO2Error) -> [DeviceDescriptor] {
        FIDO2Library.ensureInitialized()
        guard let list = fido_dev_info_new(limit) else {
            throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_dev_info_new")
        }
        var pointer: OpaquePointer? = list
        defer { fido_dev_info_free(&pointer, limit) }
        var found = 0
        try check(fido_dev_info_manifest(list, limit, &found), "fido_dev_info_manifest")
        return (0..<found).compactMap { i in
            guard let entry = fido_dev_info_ptr(list, i), let path = fido_dev_info_path(entry) else { return nil }
            return DeviceDescriptor(
                path: String(cString: path),
                manufacturer: fido_dev_info_manufacturer_string(entry).map { String(cString: $0) } ?? "",
                product: fido_dev_info_product_string(entry).map { String(cString: $0) } ?? "",
                vendorID: UInt16(bitPattern: fido_dev_info_vendor(entry)),
                productID: UInt16(bitPattern: fido_dev_info_product(entry)))
        }
    }
}
