/// The kernel's UHID interface (`linux/uhid.h`) as bytes: every message
/// read from or written to `/dev/uhid` is a packed `struct uhid_event`, a
/// 32-bit type and a union of requests, in the machine's byte order.
///
/// Encoded by hand rather than imported from C: the union's 4 KiB arrays
/// come into Swift as 4096-element tuples, and as bytes the layout (a
/// stable kernel ABI) is plain to see and to test. The offsets below are
/// those of `linux/uhid.h`, measured with `offsetof` on Debian 12.
enum UHIDEventType: UInt32 {
    case destroy = 1
    case start = 2
    case stop = 3
    case open = 4
    case close = 5
    case output = 6
    case getReport = 9
    case getReportReply = 10
    case create2 = 11
    case input2 = 12
    case setReport = 13
    case setReportReply = 14
}

/// `enum uhid_report_type`; any other value the kernel sends is kept as it is.
public struct UHIDReportType: RawRepresentable, Equatable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let feature = UHIDReportType(rawValue: 0)
    public static let output = UHIDReportType(rawValue: 1)
    public static let input = UHIDReportType(rawValue: 2)
}

/// `UHID_DATA_MAX` and `HID_MAX_DESCRIPTOR_SIZE`: the largest report and
/// report descriptor.
public enum UHIDLimits {
    public static let dataMaximum = 4096
    public static let descriptorMaximum = 4096
    /// `sizeof(struct uhid_event)`: the type and the union, padded to 8.
    public static let eventSize = 4380
}

/// What the kernel tells a UHID device (read from `/dev/uhid`).
public enum UHIDKernelEvent: Equatable, Sendable {
    /// A driver bound the device; `flags` say whether its reports are numbered.
    case start(flags: UInt64)
    case stop
    /// The first program opened the device node (hidraw)...
    case open
    /// ...and the last one closed it.
    case close
    /// A program wrote a report (`write` on hidraw): its bytes as written,
    /// report ID included when the writer gave one.
    case output(data: [UInt8], reportType: UHIDReportType)
    /// A program asks for a report (`HIDIOCGFEATURE`); must be answered.
    case getReport(id: UInt32, reportNumber: UInt8, reportType: UHIDReportType)
    /// A program sends a report with a SET_REPORT request (`HIDIOCSFEATURE`); must be answered.
    case setReport(id: UInt32, reportNumber: UInt8, reportType: UHIDReportType, data: [UInt8])
    /// A type this code does not know (legacy, or newer than it).
    case unknown(type: UInt32)

    /// Decodes one event as read. The kernel may write events shorter than
    /// the struct; the rest reads as zeros (`linux/uhid.h`). Nil when even
    /// the type is missing.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count >= 4 else { return nil }
        let event = UHIDBytes(bytes)
        let type = event.uint32(at: 0)
        switch UHIDEventType(rawValue: type) {
        case .start:
            self = .start(flags: event.uint64(at: 4))
        case .stop:
            self = .stop
        case .open:
            self = .open
        case .close:
            self = .close
        case .output:
            // struct uhid_output_req { data[4096]; u16 size; u8 rtype; }
            let size = min(Int(event.uint16(at: 4 + UHIDLimits.dataMaximum)), UHIDLimits.dataMaximum)
            let reportType = UHIDReportType(rawValue: event.byte(at: 4 + UHIDLimits.dataMaximum + 2))
            self = .output(data: event.bytes(at: 4, count: size), reportType: reportType)
        case .getReport:
            // struct uhid_get_report_req { u32 id; u8 rnum; u8 rtype; }
            self = .getReport(
                id: event.uint32(at: 4), reportNumber: event.byte(at: 8),
                reportType: UHIDReportType(rawValue: event.byte(at: 9)))
        case .setReport:
            // struct uhid_set_report_req { u32 id; u8 rnum; u8 rtype; u16 size; u8 data[4096]; }
            let size = min(Int(event.uint16(at: 10)), UHIDLimits.dataMaximum)
            self = .setReport(
                id: event.uint32(at: 4), reportNumber: event.byte(at: 8),
                reportType: UHIDReportType(rawValue: event.byte(at: 9)),
                data: event.bytes(at: 12, count: size))
        default:
            self = .unknown(type: type)
        }
    }
}

/// What a UHID device tells the kernel (written to `/dev/uhid`).
///
/// Encoded no longer than the fields in use: the kernel extends a short
/// event with zeros (`linux/uhid.h`), so a 64-byte input report costs a
/// 70-byte write, not 4380.
public enum UHIDDeviceEvent: Equatable, Sendable {
    /// Creates the HID device (`UHID_CREATE2`).
    case create(UHIDDeviceIdentity, reportDescriptor: [UInt8])
    /// Removes it: an unplug (`UHID_DESTROY`).
    case destroy
    /// A report from the device to the programs reading it (`UHID_INPUT2`).
    case input(data: [UInt8])
    /// Answers a `getReport`; a nonzero `error` is an errno for the caller.
    case getReportReply(id: UInt32, error: UInt16, data: [UInt8])
    /// Answers a `setReport`.
    case setReportReply(id: UInt32, error: UInt16)

    public var bytes: [UInt8] {
        var event = UHIDEventWriter()
        switch self {
        case .create(let identity, let descriptor):
            precondition(descriptor.count <= UHIDLimits.descriptorMaximum, "HID report descriptor too long")
            // struct uhid_create2_req { name[128]; phys[64]; uniq[64]; u16 rd_size; u16 bus;
            //   u32 vendor; u32 product; u32 version; u32 country; u8 rd_data[4096]; }
            event.append(UHIDEventType.create2.rawValue)
            event.appendString(identity.name, size: 128)
            event.appendString(identity.physicalPath, size: 64)
            event.appendString(identity.uniqueID, size: 64)
            event.append(UInt16(descriptor.count))
            event.append(identity.bus)
            event.append(UInt32(identity.vendorID))
            event.append(UInt32(identity.productID))
            event.append(identity.version)
            event.append(identity.country)
            event.append(descriptor)
        case .destroy:
            event.append(UHIDEventType.destroy.rawValue)
        case .input(let data):
            precondition(data.count <= UHIDLimits.dataMaximum, "HID report too long")
            // struct uhid_input2_req { u16 size; u8 data[4096]; }
            event.append(UHIDEventType.input2.rawValue)
            event.append(UInt16(data.count))
            event.append(data)
        case .getReportReply(let id, let error, let data):
            precondition(data.count <= UHIDLimits.dataMaximum, "HID report too long")
            // struct uhid_get_report_reply_req { u32 id; u16 err; u16 size; u8 data[4096]; }
            event.append(UHIDEventType.getReportReply.rawValue)
            event.append(id)
            event.append(error)
            event.append(UInt16(data.count))
            event.append(data)
        case .setReportReply(let id, let error):
            // struct uhid_set_report_reply_req { u32 id; u16 err; }
            event.append(UHIDEventType.setReportReply.rawValue)
            event.append(id)
            event.append(error)
        }
        return event.bytes
    }
}

/// Reads the fields of an event, in the machine's byte order; bytes past
/// the end read as zero.
private struct UHIDBytes {
    let storage: [UInt8]

    init(_ bytes: some Collection<UInt8>) { storage = Array(bytes) }

    func byte(at offset: Int) -> UInt8 { offset < storage.count ? storage[offset] : 0 }

    func bytes(at offset: Int, count: Int) -> [UInt8] { (offset..<offset + count).map(byte(at:)) }

    private func integer<T: FixedWidthInteger>(at offset: Int, as _: T.Type) -> T {
        var value = T.zero
        withUnsafeMutableBytes(of: &value) { raw in
            for index in raw.indices { raw[index] = byte(at: offset + index) }
        }
        return value
    }

    func uint16(at offset: Int) -> UInt16 { integer(at: offset, as: UInt16.self) }
    func uint32(at offset: Int) -> UInt32 { integer(at: offset, as: UInt32.self) }
    func uint64(at offset: Int) -> UInt64 { integer(at: offset, as: UInt64.self) }
}

/// Builds an event field by field, in the machine's byte order.
private struct UHIDEventWriter {
    var bytes: [UInt8] = []

    mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value) { bytes += $0 }
    }

    mutating func append(_ data: [UInt8]) { bytes += data }

    /// A NUL-terminated string in a fixed-size field, cut to fit between
    /// characters (a cut inside one would leave invalid UTF-8 in sysfs).
    mutating func appendString(_ text: String, size: Int) {
        var utf8: [UInt8] = []
        for character in text {
            let encoded = Array(character.utf8)
            guard utf8.count + encoded.count < size else { break }
            utf8 += encoded
        }
        bytes += utf8 + [UInt8](repeating: 0, count: size - utf8.count)
    }
}
