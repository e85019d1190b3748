import CPAM
import PAMAuthkeyd
import SystemKit

// The auth interface libpam looks up in the module (the Linux-PAM Module
// Writers' Guide): pam_sm_authenticate and pam_sm_setcred, nothing else
// (pam-module.map). The module runs inside sudo, login or a screen
// locker: it never traps on what it is given, writes to no descriptor it
// did not open itself (the log goes to syslog, or a `debug_file=` it
// opens), and takes nothing from the environment.

@_cdecl("pam_sm_authenticate")
public func pamSmAuthenticate(
    _ handle: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    guard let handle else { return PAM_SYSTEM_ERR }
    let options = ModuleOptions(arguments: arguments(argc, argv))
    let module = PAMModule(handle: handle, options: options)
    defer { module.log.close() }
    return module.authenticate()
}

/// No credentials to set: the key proved who the user is, and that is all.
@_cdecl("pam_sm_setcred")
public func pamSmSetcred(
    _ handle: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    PAM_SUCCESS
}

/// The module's arguments from its line in /etc/pam.d.
private func arguments(_ count: Int32, _ vector: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> [String] {
    guard let vector, count > 0 else { return [] }
    return (0..<Int(count)).compactMap { vector[$0].map { String(cString: $0) } }
}
