import CSSHSecurityKeyAPI
import SSHSecurityKey

/// `sk_api_version()`: the middleware API version this provider implements.
@_cdecl("sk_api_version")
public func skAPIVersion() -> UInt32 { UInt32(SSH_SK_VERSION_MAJOR) }
