import CPAM
import Glibc
import PAMAuthkeyd
import SystemKit

/// The application's conversation function (`PAM_CONV`), one message at a
/// time. The answer's buffers are the application's `malloc`s: they are
/// zeroed (a PIN) and freed here, as the Module Writers' Guide says.
struct PAMConversation: Conversation {
    /// The handle, as a number: PAM handles are used from one thread at a
    /// time, and this one is used only while pam_sm_authenticate waits.
    private let handle: Int

    init(handle: OpaquePointer) { self.handle = Int(bitPattern: UnsafeRawPointer(handle)) }

    func askHidden(_ prompt: String) -> String? {
        converse(PAM_PROMPT_ECHO_OFF, prompt)
    }

    func inform(_ text: String) {
        _ = converse(PAM_TEXT_INFO, text)
    }

    private func converse(_ style: Int32, _ text: String) -> String? {
        guard let pointer = UnsafeRawPointer(bitPattern: handle) else { return nil }
        var item: UnsafeRawPointer?
        guard pam_get_item(OpaquePointer(pointer), PAM_CONV, &item) == PAM_SUCCESS,
            let conversation = item?.assumingMemoryBound(to: pam_conv.self).pointee, let function = conversation.conv
        else { return nil }
        return text.withCString { message -> String? in
            var entry = pam_message(msg_style: style, msg: message)
            return withUnsafePointer(to: &entry) { entryPointer -> String? in
                var messages: UnsafePointer<pam_message>? = entryPointer
                var response: UnsafeMutablePointer<pam_response>?
                let status = function(1, &messages, &response, conversation.appdata_ptr)
                guard let response else { return nil }
                defer { free(response) }
                guard let answer = response.pointee.resp else { return nil }
                defer {
                    zeroSecret(UnsafeMutableRawBufferPointer(start: answer, count: strlen(answer)))
                    free(answer)
                }
                return status == PAM_SUCCESS ? String(cString: answer) : nil
            }
        }
    }
}
