import AuthProtocol
import SystemKit

/// The "touch your key" cues: each `operation.status` worth telling the
/// user is written to standard error once, when it changes, so that it
/// shows at the terminal without mixing into output a script reads.
final class StatusCues: Sendable {
    private let last = Protected<(status: OperationStatus.Status, holder: Holder?)?>(nil)
    /// What each status says; a command may say it its own way (a reset
    /// asks for the touch that confirms it, an enrollment counts samples).
    private let wording: @Sendable (OperationStatus) -> String?

    init(wording: @escaping @Sendable (OperationStatus) -> String? = { StatusCues.cue(for: $0) }) {
        self.wording = wording
    }

    func show(_ status: OperationStatus, to output: any ConsoleOutput) {
        let changed = last.withLock { last -> Bool in
            defer { last = (status.status, status.holder) }
            // Each captured sample is news, even right after another; so is
            // another program taking the key.
            guard let last else { return true }
            return last.status != status.status || last.holder != status.holder || status.status == .sampleCaptured
        }
        guard changed, let cue = wording(status) else { return }
        output.writeError(cue + "\n")
    }

    /// After a prompt the same status may mean a new wait: a second touch
    /// after a wrong PIN. Tell it again.
    func forget() {
        last.withLock { $0 = nil }
    }

    static func cue(for status: OperationStatus) -> String? {
        switch status.status {
        case .waitingForTouch: return "Touch your security key…"
        case .waitingForUv: return "Place your finger on the sensor…"
        case .queued: return "Waiting for the key (another request is using it)…"
        case .busy: return "The key is in use by \(holderName(status.holder)); waiting for it…"
        case .selectingByTouch: return "Touch the security key you want to use…"
        case .processing, .sampleCaptured: return nil
        }
    }

    /// "fido2-token (pid 4242)", or "another program" where the daemon
    /// could not tell.
    static func holderName(_ holder: Holder?) -> String {
        holder.map { printable($0.description) } ?? "another program"
    }
}
