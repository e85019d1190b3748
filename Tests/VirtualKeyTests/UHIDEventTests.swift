import Testing
import VirtualKey

/// The UHID events as bytes, against the layout of `struct uhid_event` in
/// `linux/uhid.h` (offsets measured with `offsetof` on Debian 12; the
/// kernel uses the machine's byte order, little-endian on x86-64 and
/// arm64), and the FIDO HID device the kernel is given. The kernel itself
/// checks them in scripts/vm-test.
@Suite struct UHIDEventTests {
    /// `count` bytes of `value`, least significant first.
    func littleEndian(_ value: UInt64, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    func field(_ bytes: [UInt8], at offset: Int, _ count: Int) -> [UInt8] {
        Array(bytes[offset..<offset + count])
    }

    /// A NUL-padded string field as text.
    func text(_ bytes: [UInt8], at offset: Int, _ count: Int) -> String {
        String(decoding: field(bytes, at: offset, count).prefix { $0 != 0 }, as: UTF8.self)
    }

    // MARK: Written to /dev/uhid

    @Test func createCarriesTheIdentityAndTheDescriptorAtTheKernelsOffsets() {
        let identity = UHIDDeviceIdentity(
            name: "Test Key", physicalPath: "test/phys", uniqueID: "serial-1", vendorID: 0x1209,
            productID: 0x0001, version: 0x0102, country: 7)
        let descriptor = FIDOHIDDevice.reportDescriptor
        let bytes = UHIDDeviceEvent.create(identity, reportDescriptor: descriptor).bytes
        #expect(field(bytes, at: 0, 4) == littleEndian(11, 4), "UHID_CREATE2")
        #expect(text(bytes, at: 4, 128) == "Test Key")
        #expect(text(bytes, at: 132, 64) == "test/phys")
        #expect(text(bytes, at: 196, 64) == "serial-1")
        #expect(field(bytes, at: 260, 2) == littleEndian(UInt64(descriptor.count), 2), "rd_size")
        #expect(field(bytes, at: 262, 2) == littleEndian(3, 2), "bus: BUS_USB")
        #expect(field(bytes, at: 264, 4) == littleEndian(0x1209, 4), "vendor")
        #expect(field(bytes, at: 268, 4) == littleEndian(0x0001, 4), "product")
        #expect(field(bytes, at: 272, 4) == littleEndian(0x0102, 4), "version")
        #expect(field(bytes, at: 276, 4) == littleEndian(7, 4), "country")
        #expect(Array(bytes[280...]) == descriptor, "rd_data, and nothing after it")
    }

    @Test func aLongNameIsCutBetweenCharactersAndStaysTerminated() {
        let name = String(repeating: "é", count: 100)  // 200 bytes of UTF-8
        let identity = UHIDDeviceIdentity(name: name, vendorID: 1, productID: 2)
        let bytes = UHIDDeviceEvent.create(identity, reportDescriptor: []).bytes
        #expect(text(bytes, at: 4, 128) == String(repeating: "é", count: 63))
        #expect(bytes[4 + 126] == 0 && bytes[4 + 127] == 0, "NUL-terminated within its 128 bytes")
        #expect(bytes.count == 280)
    }

    @Test func inputCarriesTheReportAfterItsSize() {
        let report = (0..<64).map { UInt8($0) }
        let bytes = UHIDDeviceEvent.input(data: report).bytes
        #expect(field(bytes, at: 0, 4) == littleEndian(12, 4), "UHID_INPUT2")
        #expect(field(bytes, at: 4, 2) == littleEndian(64, 2))
        #expect(Array(bytes[6...]) == report)
        #expect(bytes.count == 70, "short: the kernel zero-fills the rest")
    }

    @Test func destroyIsTheTypeAlone() {
        #expect(UHIDDeviceEvent.destroy.bytes == littleEndian(1, 4))
    }

    @Test func repliesCarryTheRequestIDAndAnErrno() {
        let getReply = UHIDDeviceEvent.getReportReply(id: 0xA1B2_C3D4, error: 5, data: [9, 8]).bytes
        #expect(getReply == littleEndian(10, 4) + littleEndian(0xA1B2_C3D4, 4) + littleEndian(5, 2) + littleEndian(2, 2) + [9, 8])
        let setReply = UHIDDeviceEvent.setReportReply(id: 42, error: 5).bytes
        #expect(setReply == littleEndian(14, 4) + littleEndian(42, 4) + littleEndian(5, 2))
    }

    // MARK: Read from /dev/uhid

    /// An event as the kernel writes it: the whole struct, zero-filled.
    func kernelEvent(type: UInt32, fields: [(offset: Int, bytes: [UInt8])] = []) -> [UInt8] {
        var event = [UInt8](repeating: 0, count: UHIDLimits.eventSize)
        event.replaceSubrange(0..<4, with: littleEndian(UInt64(type), 4))
        for (offset, bytes) in fields { event.replaceSubrange(offset..<offset + bytes.count, with: bytes) }
        return event
    }

    @Test func outputIsTheDataAsWrittenWithItsReportType() {
        let written = [0] + (1...64).map { UInt8($0) }
        let event = kernelEvent(type: 6, fields: [(4, written), (4100, littleEndian(65, 2)), (4102, [1])])
        #expect(UHIDKernelEvent(bytes: event) == .output(data: written, reportType: .output))
    }

    @Test func anOversizedOutputIsCutToTheDataField() {
        let event = kernelEvent(type: 6, fields: [(4100, littleEndian(60000, 2)), (4102, [1])])
        guard case .output(let data, _) = UHIDKernelEvent(bytes: event) else {
            Issue.record("not an output event")
            return
        }
        #expect(data.count == UHIDLimits.dataMaximum)
    }

    @Test func lifecycleEventsDecode() {
        #expect(UHIDKernelEvent(bytes: kernelEvent(type: 2, fields: [(4, littleEndian(0b101, 8))])) == .start(flags: 0b101))
        #expect(UHIDKernelEvent(bytes: kernelEvent(type: 3)) == .stop)
        #expect(UHIDKernelEvent(bytes: kernelEvent(type: 4)) == .open)
        #expect(UHIDKernelEvent(bytes: kernelEvent(type: 5)) == .close)
    }

    @Test func reportRequestsDecode() {
        let get = kernelEvent(type: 9, fields: [(4, littleEndian(77, 4)), (8, [3]), (9, [0])])
        #expect(UHIDKernelEvent(bytes: get) == .getReport(id: 77, reportNumber: 3, reportType: .feature))
        let set = kernelEvent(type: 13, fields: [(4, littleEndian(78, 4)), (8, [0]), (9, [1]), (10, littleEndian(3, 2)), (12, [7, 7, 7])])
        #expect(UHIDKernelEvent(bytes: set) == .setReport(id: 78, reportNumber: 0, reportType: .output, data: [7, 7, 7]))
    }

    @Test func shortEventsReadAsZeroFilled() {
        #expect(UHIDKernelEvent(bytes: littleEndian(2, 4)) == .start(flags: 0))
        #expect(UHIDKernelEvent(bytes: littleEndian(6, 4)) == .output(data: [], reportType: .feature))
        #expect(UHIDKernelEvent(bytes: [6, 0, 0]) == nil, "not even a type")
    }

    @Test func unknownTypesAreKeptNotDropped() {
        #expect(UHIDKernelEvent(bytes: kernelEvent(type: 0)) == .unknown(type: 0), "legacy UHID_CREATE")
        #expect(UHIDKernelEvent(bytes: kernelEvent(type: 99)) == .unknown(type: 99))
        let strangeReport = kernelEvent(type: 6, fields: [(4100, littleEndian(1, 2)), (4102, [9])])
        #expect(UHIDKernelEvent(bytes: strangeReport) == .output(data: [0], reportType: UHIDReportType(rawValue: 9)))
    }

    // MARK: The FIDO HID device

    @Test func outputDataMapsToACTAPHIDReportWithOrWithoutTheReportID() {
        let frame = (0..<64).map { UInt8(255 - $0) }
        #expect(FIDOHIDDevice.ctaphidReport(fromOutput: [0] + frame) == frame, "libfido2: report ID 0, then the frame")
        #expect(FIDOHIDDevice.ctaphidReport(fromOutput: frame) == frame, "the bare frame")
        #expect(FIDOHIDDevice.ctaphidReport(fromOutput: [1] + frame) == nil, "a report ID the device does not have")
        #expect(FIDOHIDDevice.ctaphidReport(fromOutput: Array(frame.prefix(63))) == nil)
        #expect(FIDOHIDDevice.ctaphidReport(fromOutput: [0, 0] + frame) == nil)
    }

    /// The descriptor's short items (tag and size byte, then data), as
    /// libfido2 reads them.
    func items(_ descriptor: [UInt8]) -> [(tag: UInt8, value: UInt32)] {
        var items: [(tag: UInt8, value: UInt32)] = []
        var index = 0
        while index < descriptor.count {
            let prefix = descriptor[index]
            let size = [0, 1, 2, 4][Int(prefix & 0x03)]
            let data = descriptor[(index + 1)..<(index + 1 + size)]
            items.append((prefix & 0xFC, data.reversed().reduce(0) { $0 << 8 | UInt32($1) }))
            index += 1 + size
        }
        return items
    }

    @Test func theDescriptorIsAFIDOKeyWith64ByteReportsAndNoReportIDs() {
        let items = items(FIDOHIDDevice.reportDescriptor)
        #expect(items.first { $0.tag == 0x04 }?.value == 0xF1D0, "usage page FIDO")
        #expect(items.first { $0.tag == 0x08 }?.value == 0x01, "usage CTAPHID")
        #expect(items.filter { $0.tag == 0x94 }.map(\.value) == [64, 64], "64 reports each way")
        #expect(items.filter { $0.tag == 0x74 }.map(\.value) == [8, 8], "of 8 bits")
        #expect(items.filter { $0.tag == 0x80 }.count == 1, "one input")
        #expect(items.filter { $0.tag == 0x90 }.count == 1, "one output")
        #expect(!items.contains { $0.tag == 0x84 }, "no report IDs")
    }

    @Test func theVirtualKeyIntroducesItselfAsAUSBKey() {
        let identity = UHIDDeviceIdentity.virtualKey(productName: "authkeyd Virtual Key")
        #expect(identity.name == "authkeyd Virtual Key (UHID)")
        #expect(identity.usbID == "1209:0001")
        #expect(identity.bus == UHIDDeviceIdentity.usbBus)
    }
}
