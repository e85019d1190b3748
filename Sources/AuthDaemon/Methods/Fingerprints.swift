import AuthProtocol
import FIDO2

extension Broker {
    /// Time allowed for each fingerprint sample.
    static let sampleTimeout: Duration = .seconds(20)

    /// `authenticators.fingerprints.info`: the sensor (no PIN needed).
    func fingerprintSensor(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let target = try decode(AuthenticatorParams.self, params).authenticator
        return try manage(ManagementMethod.fingerprintSensor, key: target, id: id, session: session) { [self] operation, key throws(RPCError) in
            try requireSensor(key)
            let sensor = try await operation.perform(key, in: self) { device throws(FIDO2Error) in try device.bioSensorInfo() }
                mapError: { $0.rpcError(doing: "reading the fingerprint sensor") }
            return .value(encode(FingerprintSensor(kind: Int(sensor.type), samplesRequired: Int(sensor.maxSamples))))
        }
    }

    /// `authenticators.fingerprints.enroll`: the PIN, then one touch per
    /// sample, each reported as `sampleCaptured` with the samples left.
    func enrollFingerprint(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let request = try decode(EnrollParams.self, params)
        return try manage(ManagementMethod.enrollFingerprint, key: request.authenticator, id: id, session: session) { [self] operation, key throws(RPCError) in
            try requireSensor(key)
            let activity = "enrolling a fingerprint"
            let (enrollment, first, pin) = try await operation.withPIN(on: key, activity: activity, in: self) { device, pin throws(FIDO2Error) in
                let (enrollment, first) = try device.beginBioEnrollment(pin: pin, sampleTimeout: Self.sampleTimeout)
                return (enrollment, first, pin)
            }
            var progress = first
            operation.sendSampleStatus(progress, key: key)
            while progress.remainingSamples > 0 {
                operation.sendStatus(.waitingForTouch, key: key, in: self)
                do throws(FIDOFailure) {
                    progress = try await operation.perform(key, in: self) { _ throws(FIDO2Error) in
                        try enrollment.captureNextSample(timeout: Self.sampleTimeout)
                    }
                } catch {
                    _ = try? await operation.perform(key, in: self) { _ throws(FIDO2Error) in try enrollment.cancel() }
                    throw error.rpcError(doing: activity)
                }
                operation.sendSampleStatus(progress, key: key)
            }
            let templateID = Base64URL.encode(enrollment.templateID)
            if let name = request.name, !name.isEmpty {
                // Named with the PIN the user gave for this enrollment, kept
                // in memory until the request ends: libfido2 asks a PIN of
                // each bio call, and a second prompt was the user's chance
                // to leave a fingerprint enrolled without its name.
                try await operation.perform(key, in: self) { device throws(FIDO2Error) in
                    try device.renameBioTemplate(id: enrollment.templateID, name: name, pin: pin)
                } mapError: { $0.rpcError(doing: "naming the fingerprint") }
            }
            return .value(encode(Fingerprint(templateId: templateID, name: request.name)))
        }
    }

    func listFingerprints(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let target = try decode(AuthenticatorParams.self, params).authenticator
        return try manage(ManagementMethod.listFingerprints, key: target, id: id, session: session) { [self] operation, key throws(RPCError) in
            try requireSensor(key)
            let templates = try await operation.withPIN(on: key, activity: "listing fingerprints", status: nil, in: self) { device, pin throws(FIDO2Error) in
                try device.bioTemplates(pin: pin)
            }
            // An unnamed finger comes with an empty name from most keys
            // (YubiKey Bio, the virtual key) and none from others: both are
            // no name.
            return .value(encode(FingerprintList(fingerprints: templates.map {
                Fingerprint(templateId: Base64URL.encode($0.id), name: $0.name?.isEmpty == false ? $0.name : nil)
            })))
        }
    }

    func renameFingerprint(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let request = try decode(FingerprintParams.self, params)
        let template = try decodeTemplateID(request.templateId)
        guard let name = request.name, !name.isEmpty else { throw RPCError(.invalidParams, "invalid params: name is required") }
        return try manage(ManagementMethod.renameFingerprint, key: request.authenticator, id: id, session: session) { [self] operation, key throws(RPCError) in
            try requireSensor(key)
            try await operation.withPIN(on: key, activity: "renaming the fingerprint", status: nil, in: self) { device, pin throws(FIDO2Error) in
                try device.renameBioTemplate(id: template, name: name, pin: pin)
            }
            return .value(encode(Fingerprint(templateId: request.templateId, name: name)))
        }
    }

    func deleteFingerprint(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let request = try decode(FingerprintParams.self, params)
        let template = try decodeTemplateID(request.templateId)
        return try manage(ManagementMethod.deleteFingerprint, key: request.authenticator, id: id, session: session) { [self] operation, key throws(RPCError) in
            try requireSensor(key)
            try await operation.withPIN(on: key, activity: "deleting the fingerprint", status: nil, in: self) { device, pin throws(FIDO2Error) in
                try device.removeBioTemplate(id: template, pin: pin)
            }
            return .value(["deleted": true])
        }
    }

    private func requireSensor(_ key: RegisteredKey) throws(RPCError) {
        let supports = key.info.supports
        guard supports.bioEnrollment.isSupported else {
            throw RPCError(.unsupported, "the key has no fingerprint sensor")
        }
        guard supports.clientPIN.isOn else {
            throw RPCError(.pinRequired, "fingerprints need a PIN on the key first (authenticators.setPin)")
        }
    }

    private func decodeTemplateID(_ text: String) throws(RPCError) -> [UInt8] {
        guard let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw RPCError(.invalidParams, "invalid params: templateId: expected base64url")
        }
        return bytes
    }
}

extension Operation {
    /// `sampleCaptured` to the requester: the samples left, and how the
    /// last one went.
    fileprivate func sendSampleStatus(_ progress: BioEnrollmentProgress, key: RegisteredKey) {
        let status = OperationStatus(
            request: id.json, status: .sampleCaptured, authenticator: key.id, remainingSamples: progress.remainingSamples,
            sampleStatus: Int(progress.lastSampleStatus))
        session.send(.notification(method: Method.operationStatus, params: encode(status)))
    }
}
