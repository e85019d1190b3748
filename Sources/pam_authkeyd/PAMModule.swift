import PAMAuthFile
import CPAM
import Dispatch
import Glibc
import PAMAuthkeyd
import SystemKit

/// One call of `pam_sm_authenticate`: who, their credentials, the
/// authentication, and the PAM code it ends with.
struct PAMModule {
    let handle: OpaquePointer
    let options: ModuleOptions
    let log: PAMLog

    init(handle: OpaquePointer, options: ModuleOptions) {
        self.handle = handle
        self.options = options
        log = PAMLog(handle: handle, debug: options.debug, file: options.debugFile)
    }

    /// The PAM code, logged with `debug` by its name.
    func authenticate() -> Int32 {
        let code = authenticateUser()
        log.debug("returns \(Self.name(of: code))")
        return code
    }

    static func name(of code: Int32) -> String {
        switch code {
        case PAM_SUCCESS: return "PAM_SUCCESS"
        case PAM_AUTH_ERR: return "PAM_AUTH_ERR"
        case PAM_AUTHINFO_UNAVAIL: return "PAM_AUTHINFO_UNAVAIL"
        case PAM_USER_UNKNOWN: return "PAM_USER_UNKNOWN"
        case PAM_IGNORE: return "PAM_IGNORE"
        default: return "PAM code \(code)"
        }
    }

    private func authenticateUser() -> Int32 {
        for argument in options.unknown { log.error("unknown option \"\(argument)\" ignored") }
        var name: UnsafePointer<CChar>?
        guard pam_get_user(handle, &name, nil) == PAM_SUCCESS, let name
        else {
            log.error("no user to authenticate")
            return PAM_USER_UNKNOWN
        }
        let user = String(cString: name)
        guard let account = UserAccount(handle: handle, name: user) else {
            log.error("no account \"\(user)\"")
            return PAM_USER_UNKNOWN
        }

        let credentials: [EnrolledCredential]
        switch readCredentials(of: account) {
        case .found(let found):
            credentials = found
        case .none(let why):
            log.debug("\(user) has no credentials: \(why)")
            return options.noUserOK ? PAM_IGNORE : PAM_USER_UNKNOWN
        case .unreadable(let why):
            log.error("authfile of \(user): \(why)")
            return PAM_AUTHINFO_UNAVAIL
        }

        let relyingParty = options.relyingParty(hostName: hostName())
        log.debug("authenticating \(user) with \(credentials.count) credential(s) at \(relyingParty) through \(options.socketPath)")
        let authentication = PAMAuthentication(
            user: user, actingFor: geteuid() == account.uid ? nil : user, relyingParty: relyingParty, options: options,
            conversation: PAMConversation(handle: handle), log: log)
        let outcome = waitFor { await authentication.run(credentials) }
        switch outcome {
        case .success:
            log.debug("\(user) authenticated")
            return PAM_SUCCESS
        case .failed(let why):
            log.error("\(user) not authenticated: \(why)")
            return PAM_AUTH_ERR
        case .unavailable(let why):
            log.error("\(user) could not be authenticated: \(why)")
            return PAM_AUTHINFO_UNAVAIL
        }
    }

    private enum Credentials {
        case found([EnrolledCredential])
        case none(String)
        case unreadable(String)
    }

    /// The user's line of their authfile, read as pam_u2f reads it: the
    /// default (`~/.config/Yubico/u2f_keys`) and a relative `authfile=`
    /// with the user's own privileges, an absolute one with root's unless
    /// `openasuser`.
    private func readCredentials(of account: UserAccount) -> Credentials {
        let path: String
        let asUser: Bool
        switch options.authFile {
        case let file? where file.hasPrefix("/"):
            (path, asUser) = (file, options.openAsUser)
        case let file?:
            (path, asUser) = ("\(account.home)/\(file)", true)
        case nil:
            // XDG_CONFIG_HOME is not read: the environment belongs to
            // whoever started sudo.
            (path, asUser) = ("\(account.home)/.config/Yubico/u2f_keys", true)
        }
        let contents: [UInt8]
        switch AuthFileReader(handle: handle, account: account).read(path, asUser: asUser && geteuid() == 0 && account.uid != 0) {
        case .success(let bytes?): contents = bytes
        case .success(nil): return .none("no authfile \(path)")
        case .failure(let why): return .unreadable("\(path): \(why)")
        }
        do {
            guard let credentials = try AuthFile.credentials(of: account.name, in: contents, maxDevices: options.maxDevices),
                !credentials.isEmpty
            else { return .none("no line for \(account.name) in \(path)") }
            return .found(credentials)
        } catch {
            return .unreadable("\(path): \(error)")
        }
    }
}

/// Runs the authentication to its end on Swift's threads while the
/// calling thread (the application's, inside pam_authenticate) waits: PAM
/// calls are synchronous.
func waitFor(_ body: @escaping @Sendable () async -> PAMOutcome) -> PAMOutcome {
    let finished = DispatchSemaphore(value: 0)
    let outcome = Protected<PAMOutcome?>(nil)
    Task {
        let result = await body()
        outcome.withLock { $0 = result }
        finished.signal()
    }
    finished.wait()
    // Set before the signal, so never nil here.
    return outcome.withLock { $0 } ?? .unavailable("the authentication ended without an outcome")
}
