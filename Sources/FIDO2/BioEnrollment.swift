internal import CFido2

/// The fingerprint sensor a key reports (`fido_bio_dev_get_info`).
public struct BioSensorInfo: Codable, Hashable, Sendable {
    /// CTAP `fingerprintKind`: 1 touch sensor, 2 swipe sensor.
    public var type: UInt8
    /// Good samples an enrollment needs.
    public var maxSamples: UInt8
}

/// An enrolled fingerprint.
public struct BioTemplate: Codable, Hashable, Sendable {
    public var id: [UInt8]
    public var name: String?

    public init(id: [UInt8], name: String?) {
        self.id = id
        self.name = name
    }
}

/// Where an enrollment stands after a sample (CTAP 2.1 §6.7.4:
/// `lastEnrollSampleStatus`, 0 is a good sample).
public struct BioEnrollmentProgress: Codable, Hashable, Sendable {
    public var lastSampleStatus: UInt8
    public var remainingSamples: Int
}

/// A fingerprint enrollment in progress: begun with a PIN, continued one
/// sample at a time with the token obtained then.
public final class BioEnrollment: @unchecked Sendable {
    // The handles are used only through `device.perform`, which serialises them.
    private let device: Device
    private let template: OpaquePointer
    private let enroll: OpaquePointer

    fileprivate init(device: Device) throws(FIDO2Error) {
        guard let template = fido_bio_template_new() else {
            throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_bio_template_new")
        }
        guard let enroll = fido_bio_enroll_new() else {
            var pointer: OpaquePointer? = template
            fido_bio_template_free(&pointer)
            throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_bio_enroll_new")
        }
        self.device = device
        self.template = template
        self.enroll = enroll
    }

    deinit {
        var t: OpaquePointer? = template
        fido_bio_template_free(&t)
        var e: OpaquePointer? = enroll
        fido_bio_enroll_free(&e)
    }

    /// The id the key gave the new template.
    public var templateID: [UInt8] { bytes(fido_bio_template_id_ptr(template), fido_bio_template_id_len(template)) }

    private var progress: BioEnrollmentProgress {
        BioEnrollmentProgress(
            lastSampleStatus: fido_bio_enroll_last_status(enroll),
            remainingSamples: Int(fido_bio_enroll_remaining_samples(enroll)))
    }

    fileprivate func begin(pin: PIN, sampleTimeout: Duration) throws(FIDO2Error) -> BioEnrollmentProgress {
        try device.perform { (handle) throws(FIDO2Error) in
            try pin.withCString { (pin) throws(FIDO2Error) in
                try check(
                    fido_bio_dev_enroll_begin(handle, template, enroll, UInt32(Device.milliseconds(sampleTimeout)), pin),
                    "fido_bio_dev_enroll_begin")
            }
        }
        return progress
    }

    /// Captures the next sample (`fido_bio_dev_enroll_continue`).
    public func captureNextSample(timeout: Duration) throws(FIDO2Error) -> BioEnrollmentProgress {
        try device.perform { (handle) throws(FIDO2Error) in
            try check(
                fido_bio_dev_enroll_continue(handle, template, enroll, UInt32(Device.milliseconds(timeout))),
                "fido_bio_dev_enroll_continue")
        }
        return progress
    }

    /// Abandons the enrollment (`fido_bio_dev_enroll_cancel`).
    public func cancel() throws(FIDO2Error) {
        try device.perform { (handle) throws(FIDO2Error) in
            try check(fido_bio_dev_enroll_cancel(handle), "fido_bio_dev_enroll_cancel")
        }
    }
}

// MARK: - bioEnrollment (CTAP 2.1 §6.7)

extension Device {
    public func bioSensorInfo() throws(FIDO2Error) -> BioSensorInfo {
        try perform { (handle) throws(FIDO2Error) in
            guard let info = fido_bio_info_new() else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_bio_info_new") }
            var pointer: OpaquePointer? = info
            defer { fido_bio_info_free(&pointer) }
            try check(fido_bio_dev_get_info(handle, info), "fido_bio_dev_get_info")
            return BioSensorInfo(type: fido_bio_info_type(info), maxSamples: fido_bio_info_max_samples(info))
        }
    }

    /// Starts enrolling a fingerprint; the first sample is taken at once
    /// (`fido_bio_dev_enroll_begin`).
    public func beginBioEnrollment(pin: PIN, sampleTimeout: Duration) throws(FIDO2Error) -> (
        BioEnrollment, BioEnrollmentProgress
    ) {
        let enrollment = try BioEnrollment(device: self)
        let progress = try enrollment.begin(pin: pin, sampleTimeout: sampleTimeout)
        return (enrollment, progress)
    }

    /// The enrolled fingerprints (`fido_bio_dev_get_template_array`). CTAP
    /// answers "invalid option" when there are none; that is an empty list.
    public func bioTemplates(pin: PIN) throws(FIDO2Error) -> [BioTemplate] {
        try perform { (handle) throws(FIDO2Error) in
            guard let array = fido_bio_template_array_new() else {
                throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_bio_template_array_new")
            }
            var pointer: OpaquePointer? = array
            defer { fido_bio_template_array_free(&pointer) }
            let result = pin.withCString { fido_bio_dev_get_template_array(handle, array, $0) }
            if result == FIDO_ERR_INVALID_OPTION { return [] }
            try check(result, "fido_bio_dev_get_template_array")
            return (0..<fido_bio_template_array_count(array)).compactMap { i in
                guard let template = fido_bio_template(array, i) else { return nil }
                return BioTemplate(
                    id: bytes(fido_bio_template_id_ptr(template), fido_bio_template_id_len(template)),
                    name: fido_bio_template_name(template).map { String(cString: $0) })
            }
        }
    }

    /// Renames an enrolled fingerprint (`fido_bio_dev_set_template_name`).
    public func renameBioTemplate(id: [UInt8], name: String, pin: PIN) throws(FIDO2Error) {
        let template = try Self.makeTemplate(id: id, name: name)
        var pointer: OpaquePointer? = template
        defer { fido_bio_template_free(&pointer) }
        try perform { (handle) throws(FIDO2Error) in
            try pin.withCString { (pin) throws(FIDO2Error) in
                try check(fido_bio_dev_set_template_name(handle, template, pin), "fido_bio_dev_set_template_name")
            }
        }
    }

    /// Removes an enrolled fingerprint (`fido_bio_dev_enroll_remove`).
    public func removeBioTemplate(id: [UInt8], pin: PIN) throws(FIDO2Error) {
        let template = try Self.makeTemplate(id: id, name: nil)
        var pointer: OpaquePointer? = template
        defer { fido_bio_template_free(&pointer) }
        try perform { (handle) throws(FIDO2Error) in
            try pin.withCString { (pin) throws(FIDO2Error) in
                try check(fido_bio_dev_enroll_remove(handle, template, pin), "fido_bio_dev_enroll_remove")
            }
        }
    }

    private static func makeTemplate(id: [UInt8], name: String?) throws(FIDO2Error) -> OpaquePointer {
        FIDO2Library.ensureInitialized()
        guard let template = fido_bio_template_new() else {
            throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_bio_template_new")
        }
        var ok = fido_bio_template_set_id(template, id, id.count)
        if ok == FIDO_OK, let name { ok = fido_bio_template_set_name(template, name) }
        guard ok == FIDO_OK else {
            var pointer: OpaquePointer? = template
            fido_bio_template_free(&pointer)
            throw FIDO2Error(code: ok, function: "fido_bio_template_set_id")
        }
        return template
    }
}
