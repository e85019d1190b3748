import Glibc
import SystemKit

/// What the daemon's process must be before it holds a secret.
public enum ProcessHardening {
    /// Nobody may read PINs and tokens out of this process: no core dumps,
    /// no ptrace by the same uid. And a client that hangs up mid-write is
    /// an error on that write (EPIPE), not the end of the daemon.
    public static func apply(logger: Logger) {
        if !setProcessDumpable(false) {
            logger.error("cannot make the process undumpable (PR_SET_DUMPABLE): \(SystemError("prctl"))")
        }
        setSignalHandler(SIGPIPE, SIG_IGN)
    }
}
