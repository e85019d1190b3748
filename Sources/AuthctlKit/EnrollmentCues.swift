import AuthProtocol
import SystemKit

/// The cues of a fingerprint enrollment: the daemon asks for a touch
/// before each sample (`waitingForTouch`) and reports each one taken
/// (`sampleCaptured`, with the samples still to take). Samples are counted
/// as they are reported, so a wrong PIN, asked again, does not count one.
final class EnrollmentCues: Sendable {
    private let captured = Protected(0)

    func cue(_ status: OperationStatus) -> String? {
        switch status.status {
        case .waitingForTouch:
            return "Touch the sensor (sample \(captured.withLock { $0 } + 1))…"
        case .sampleCaptured:
            captured.withLock { $0 += 1 }
            let left = status.remainingSamples ?? 0
            let toGo = left == 0 ? "done" : "\(left) to go"
            guard let feedback = status.sampleStatus, feedback != 0 else { return "Sample captured, \(toGo)" }
            return "Sample not usable (\(Self.feedback(feedback))), \(toGo)"
        default:
            return StatusCues.cue(for: status)
        }
    }

    /// lastEnrollSampleStatus (CTAP 2.1 §6.7.4), the sensor's word on a sample.
    static func feedback(_ code: Int) -> String {
        let words = [
            1: "too high", 2: "too low", 3: "too far left", 4: "too far right", 5: "too fast", 6: "too slow",
            7: "poor quality", 8: "too skewed", 9: "too short", 10: "merge failure", 11: "already enrolled",
            13: "no finger", 14: "lift the finger between samples",
        ]
        return words[code] ?? "code \(code)"
    }
}
