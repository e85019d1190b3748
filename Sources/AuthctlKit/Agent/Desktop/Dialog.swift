import SystemKit

/// The dialog on screen for one prompt, so that the prompt's cancellation
/// (its request was cancelled: the requester died or gave up) can close it
/// from another thread. A dialog opened after the cancellation is closed
/// as soon as it is shown.
final class Dialog: Sendable {
    private let state = Protected<(close: (@Sendable () -> Void)?, abandoned: Bool)>((nil, false))

    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// Files how to close what is now on screen.
    func showing(closeWith close: @escaping @Sendable () -> Void) {
        let abandoned = state.withLock { state -> Bool in
            state.close = close
            return state.abandoned
        }
        if abandoned { close() }
    }

    /// The prompt is void: close the dialog, and any opened later.
    func abandon() {
        let close = state.withLock { state -> (@Sendable () -> Void)? in
            state.abandoned = true
            return state.close
        }
        close?()
    }
}
