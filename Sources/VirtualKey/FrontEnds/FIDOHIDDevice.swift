/// The HID face of a FIDO security key (CTAP 2.1 §11.2.8.1), as the kernel
/// and libfido2 see it: usage page 0xF1D0, usage 0x01 (CTAPHID), one
/// 64-byte input report and one 64-byte output report, no report IDs.
public enum FIDOHIDDevice {
    /// The report descriptor. libfido2 treats a hidraw node as a FIDO key
    /// when its descriptor has the usage page 0xF1D0.
    public static let reportDescriptor: [UInt8] = [
        0x06, 0xD0, 0xF1, // Usage Page (FIDO Alliance)
        0x09, 0x01, //       Usage (CTAPHID)
        0xA1, 0x01, //       Collection (Application)
        0x09, 0x20, //         Usage (Input Report Data)
        0x15, 0x00, //         Logical Minimum (0)
        0x26, 0xFF, 0x00, //   Logical Maximum (255)
        0x75, 0x08, //         Report Size (8 bits)
        0x95, 0x40, //         Report Count (64)
        0x81, 0x02, //         Input (Data, Variable, Absolute)
        0x09, 0x21, //         Usage (Output Report Data)
        0x15, 0x00, //         Logical Minimum (0)
        0x26, 0xFF, 0x00, //   Logical Maximum (255)
        0x75, 0x08, //         Report Size (8 bits)
        0x95, 0x40, //         Report Count (64)
        0x91, 0x02, //         Output (Data, Variable, Absolute)
        0xC0, //             End Collection
    ]

    /// The CTAPHID report in the bytes a program wrote to the hidraw node,
    /// as `UHID_OUTPUT` hands them over.
    ///
    /// hidraw passes a write through unchanged, and its API asks for the
    /// report ID first even when the device has none, so libfido2 writes
    /// 65 bytes: 0x00, then the frame. A writer that leaves the ID out
    /// writes the bare 64-byte frame. Both are accepted, told apart by
    /// length; anything else is not a CTAPHID report and gives nil.
    public static func ctaphidReport(fromOutput data: [UInt8]) -> [UInt8]? {
        switch data.count {
        case CTAPHID.reportSize:
            return data
        case CTAPHID.reportSize + 1 where data[0] == 0:
            return Array(data.dropFirst())
        default:
            return nil
        }
    }
}

/// How a UHID device introduces itself: the `UHID_CREATE2` fields that are
/// not the report descriptor. They show in sysfs (`HID_NAME`, `HID_ID`),
/// in the kernel log, and in libfido2's manifest (vendor and product).
public struct UHIDDeviceIdentity: Equatable, Sendable {
    /// `BUS_USB`: libfido2's manifest lists only hidraw devices on USB.
    public static let usbBus: UInt16 = 0x03

    public var name: String
    public var physicalPath: String
    public var uniqueID: String
    public var bus: UInt16
    public var vendorID: UInt16
    public var productID: UInt16
    public var version: UInt32
    public var country: UInt32

    public init(
        name: String, physicalPath: String = "", uniqueID: String = "", bus: UInt16 = usbBus,
        vendorID: UInt16, productID: UInt16, version: UInt32 = 0x0100, country: UInt32 = 0
    ) {
        self.name = name
        self.physicalPath = physicalPath
        self.uniqueID = uniqueID
        self.bus = bus
        self.vendorID = vendorID
        self.productID = productID
        self.version = version
        self.country = country
    }

    /// `vendor:product` in four hex digits each, as `lsusb` writes it.
    public var usbID: String {
        func hex4(_ value: UInt16) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }
        return hex4(vendorID) + ":" + hex4(productID)
    }

    /// pid.codes' vendor ID for open hardware, and its test product ID.
    public static let virtualKeyVendorID: UInt16 = 0x1209
    public static let virtualKeyProductID: UInt16 = 0x0001

    /// The identity of a virtual key: "authkeyd Virtual Key (UHID)" for the
    /// default product name.
    public static func virtualKey(productName: String) -> UHIDDeviceIdentity {
        UHIDDeviceIdentity(
            name: "\(productName) (UHID)", physicalPath: "authkeyd-virtkey/uhid",
            vendorID: virtualKeyVendorID, productID: virtualKeyProductID)
    }
}
