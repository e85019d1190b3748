internal import CFido2
import SystemKit

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
            let hidraw = String(cString: path)
            let product = fido_dev_info_product_string(entry).map { String(cString: $0) } ?? ""
            return DeviceDescriptor(
                path: hidraw,
                manufacturer: fido_dev_info_manufacturer_string(entry).map { String(cString: $0) } ?? "",
                product: product.isEmpty ? kernelHIDName(of: hidraw) ?? "" : product,
                vendorID: UInt16(bitPattern: fido_dev_info_vendor(entry)),
                productID: UInt16(bitPattern: fido_dev_info_product(entry)))
        }
    }

    /// The name the kernel gives a HID device (`HID_NAME` in its uevent).
    /// libfido2 1.12 reads the product string from the USB device above
    /// the hidraw node; a device with no USB parent (a UHID key, a
    /// Bluetooth one) has none, and this is what it calls itself instead.
    static func kernelHIDName(of hidrawPath: String) -> String? {
        guard let node = hidrawPath.split(separator: "/").last, node.hasPrefix("hidraw"),
            let uevent = try? AtomicFile.read("/sys/class/hidraw/\(node)/device/uevent")
        else { return nil }
        let prefix = "HID_NAME="
        return String(decoding: uevent, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix(prefix) }
            .map { String($0.dropFirst(prefix.count)) }
            .flatMap { $0.isEmpty ? nil : $0 }
    }
}
