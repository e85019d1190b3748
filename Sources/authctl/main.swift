// authctl: the command line for authkeyd. The commands are AuthctlKit's
// (where the tests run them too); this is the process around them.
import AuthctlKit
import Glibc

exit(await Authctl.run(Array(CommandLine.arguments.dropFirst()), console: .process))
