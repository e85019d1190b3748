import FIDO2
import VirtualKey
import VirtualKeyDevice

/// Opens a virtual key's state file in this process, through libfido2:
/// what a call left on a key, read from the key and not the broker's word.
func openKey(state path: String) throws -> Device {
    try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "state=\(path)")).openDevice()
}
