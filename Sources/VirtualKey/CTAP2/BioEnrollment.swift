import CBOR
import Crypto

/// A fingerprint enrollment under way: samples still to capture.
struct PendingEnrollment {
    var templateID: [UInt8]
    var remainingSamples: Int
}

/// authenticatorBioEnrollment (CTAP 2.1 §6.7), also reached as the
/// FIDO_2_1_PRE command 0x40 that libfido2 sends. The sensor is simulated:
/// a sample is a touch, and every sample is good.
extension Authenticator {
    private enum Subcommand: UInt64 {
        case enrollBegin = 0x01
        case enrollCaptureNextSample = 0x02
        case cancelCurrentEnrollment = 0x03
        case enumerateEnrollments = 0x04
        case setFriendlyName = 0x05
        case removeEnrollment = 0x06
        case getFingerprintSensorInfo = 0x07
    }

    static let fingerprintModality: UInt64 = 1
    static let maxEnrollments = 5
    static let maxTemplateFriendlyNameLength = 32
    /// lastEnrollSampleStatus: CTAP2_ENROLL_FEEDBACK_FP_GOOD.
    static let goodSample = 0x00

    func bioEnrollment(_ parameters: Parameters, context: CommandContext) throws(CTAP2Status) -> CBORMap? {
        guard configuration.fingerprintSensor else { throw .invalidCommand }
        guard let subcommandValue = try parameters.unsigned(0x02) else {
            guard try parameters.bool(0x06) == true else { throw .missingParameter }
            return [0x01: .unsigned(Self.fingerprintModality)]
        }
        guard let subcommand = Subcommand(rawValue: subcommandValue) else { throw .invalidSubcommand }
        let modality = try parameters.required(try parameters.unsigned(0x01))
        guard modality == Self.fingerprintModality else { throw .invalidParameter }
        let subParameters = try parameters.nestedMap(0x03)

        if subcommand != .getFingerprintSensorInfo && subcommand != .cancelCurrentEnrollment {
            var message: [UInt8] = [UInt8(modality), UInt8(subcommandValue)]
            if let subParameters { message += CBOR.map(subParameters).encoded() }
            try verifyToken(
                parameter: try parameters.bytes(0x05), protocolValue: try parameters.unsigned(0x04), message: message,
                permission: .bioEnrollment)
        }
        let sub = Parameters(subParameters ?? [:])
        switch subcommand {
        case .getFingerprintSensorInfo:
            return [
                0x01: .unsigned(Self.fingerprintModality), 0x02: 1,
                0x03: .int(configuration.enrollmentSamples), 0x08: .int(Self.maxTemplateFriendlyNameLength),
            ]
        case .enrollBegin:
            guard state.enrollments.count < Self.maxEnrollments else { throw .fingerprintDatabaseFull }
            volatile.enrollment = PendingEnrollment(
                templateID: secureRandomBytes(4), remainingSamples: configuration.enrollmentSamples)
            return try captureSample(context)
        case .enrollCaptureNextSample:
            let templateID = try sub.required(try sub.bytes(0x01))
            guard volatile.enrollment?.templateID == templateID else { throw .invalidParameter }
            var response = try captureSample(context)
            response[0x04] = nil
            return response
        case .cancelCurrentEnrollment:
            volatile.enrollment = nil
            return nil
        case .enumerateEnrollments:
            guard !state.enrollments.isEmpty else { throw .invalidOption }
            return [0x07: .array(state.enrollments.map(\.templateInfo))]
        case .setFriendlyName:
            let templateID = try sub.required(try sub.bytes(0x01))
            let name = try sub.required(try sub.text(0x02))
            guard name.utf8.count <= Self.maxTemplateFriendlyNameLength else { throw .invalidLength }
            guard let index = state.enrollments.firstIndex(where: { $0.templateID == templateID }) else {
                throw .invalidOption
            }
            state.enrollments[index].friendlyName = name
            try persist()
            return nil
        case .removeEnrollment:
            let templateID = try sub.required(try sub.bytes(0x01))
            guard let index = state.enrollments.firstIndex(where: { $0.templateID == templateID }) else {
                throw .invalidOption
            }
            state.enrollments.remove(at: index)
            try persist()
            return nil
        }
    }

    /// One sample: a finger on the sensor. The last one commits the template.
    private func captureSample(_ context: CommandContext) throws(CTAP2Status) -> CBORMap {
        guard var enrollment = volatile.enrollment else { throw .invalidParameter }
        try requireUserPresence(context)
        enrollment.remainingSamples -= 1
        if enrollment.remainingSamples <= 0 {
            state.enrollments.append(Enrollment(templateID: enrollment.templateID, friendlyName: nil))
            try persist()
            volatile.enrollment = nil
        } else {
            volatile.enrollment = enrollment
        }
        return [
            0x04: .bytes(enrollment.templateID), 0x05: .int(Self.goodSample),
            0x06: .int(max(0, enrollment.remainingSamples)),
        ]
    }
}

extension Enrollment {
    /// templateFriendlyName is optional in CTAP 2.1 §6.7.6, but an unnamed
    /// finger is sent with an empty one, as YubiKey Bio sends it: hosts
    /// (python-fido2's `enumerate_enrollments`) read the member as always there.
    var templateInfo: CBOR {
        .map([0x01: .bytes(templateID), 0x02: .text(friendlyName ?? "")])
    }
}
