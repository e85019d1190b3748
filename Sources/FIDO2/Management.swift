internal import CFido2
import Glibc

extension Device {
    /// Sets the first PIN of a key that has none (`fido_dev_set_pin` without an old PIN).
    public func setPIN(_ newPIN: PIN) throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in
            try newPIN.withCString { (new) throws(FIDO2Error) in
                try check(fido_dev_set_pin(handle, new, nil), "fido_dev_set_pin")
            }
        }
    }

    /// Changes the PIN (`fido_dev_set_pin` with the old PIN).
    public func changePIN(from oldPIN: PIN, to newPIN: PIN) throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in
            try newPIN.withCString { (new) throws(FIDO2Error) in
                try oldPIN.withCString { (old) throws(FIDO2Error) in
                    try check(fido_dev_set_pin(handle, new, old), "fido_dev_set_pin")
                }
            }
        }
    }

    /// Resets the key: every credential and the PIN are gone
    /// (`fido_dev_reset`). Keys accept this only shortly after being plugged
    /// in, and ask for a touch.
    public func reset() throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in try check(fido_dev_reset(handle), "fido_dev_reset") }
    }

    /// Starts a touch request, so that the user can pick this key among
    /// several by touching it (`fido_dev_get_touch_begin`). Poll with
    /// `touchStatus`, and `cancel()` the keys that were not touched.
    public func touchBegin() throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in
            try check(fido_dev_get_touch_begin(handle), "fido_dev_get_touch_begin")
        }
    }

    /// Waits up to `timeout` for the touch `touchBegin` asked for; true once
    /// touched (`fido_dev_get_touch_status`).
    public func touchStatus(timeout: Duration) throws(FIDO2Error) -> Bool {
        try perform { (handle) throws(FIDO2Error) in
            var touched: Int32 = 0
            try check(
                fido_dev_get_touch_status(handle, &touched, Int32(Device.milliseconds(timeout))),
                "fido_dev_get_touch_status")
            return touched != 0
        }
    }
}

// MARK: - authenticatorConfig (CTAP 2.1 §6.11)

extension Device {
    /// Turns always-UV on or off, whichever it is not (`fido_dev_toggle_always_uv`).
    public func toggleAlwaysUV(pin: PIN?) throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_dev_toggle_always_uv(handle, pin), "fido_dev_toggle_always_uv")
            }
        }
    }

    /// Raises the minimum PIN length (`fido_dev_set_pin_minlen`).
    public func setMinimumPINLength(_ length: Int, pin: PIN?) throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_dev_set_pin_minlen(handle, length, pin), "fido_dev_set_pin_minlen")
            }
        }
    }

    /// Names relying parties allowed to read the minimum PIN length
    /// (`fido_dev_set_pin_minlen_rpid`).
    public func setMinimumPINLengthRelyingParties(_ ids: [String], pin: PIN?) throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                let cStrings = ids.map { strdup($0) }
                defer { cStrings.forEach { free($0) } }
                let result = cStrings.map { UnsafePointer($0) }.withUnsafeBufferPointer {
                    fido_dev_set_pin_minlen_rpid(handle, $0.baseAddress, ids.count, pin)
                }
                try check(result, "fido_dev_set_pin_minlen_rpid")
            }
        }
    }

    /// Makes the key demand a new PIN before its next use (`fido_dev_force_pin_change`).
    public func forcePINChange(pin: PIN?) throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_dev_force_pin_change(handle, pin), "fido_dev_force_pin_change")
            }
        }
    }
}
