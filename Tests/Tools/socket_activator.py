#!/usr/bin/env python3
"""What systemd does for authkeyd.socket, as far as exit-idle needs: it
holds the listening socket, starts COMMAND when a connection waits and no
instance runs, passing the socket as fd 3 (LISTEN_FDS=1, LISTEN_PID set
to the child), and keeps the socket while the daemon is gone. Each start
and each exit is printed on standard output ("started PID", "exited PID
STATUS"); the daemon's standard error goes to LOG. Stops on SIGTERM,
stopping the daemon first.

usage: socket_activator.py SOCKET LOG COMMAND [ARGUMENT...]
"""
import os
import select
import signal
import socket
import sys


def main():
    path, log, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    child = None

    def stop(*_):
        if child:
            os.kill(child, signal.SIGTERM)
            os.waitpid(child, 0)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    print("listening", flush=True)
    while True:
        select.select([listener], [], [])
        child = os.fork()
        if child == 0:
            if listener.fileno() != 3:
                os.dup2(listener.fileno(), 3, inheritable=True)
            os.set_inheritable(3, True)
            errors = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.dup2(errors, 2)
            environment = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
            environment.pop("NOTIFY_SOCKET", None)
            os.execve(command[0], command, environment)
        print(f"started {child}", flush=True)
        _, status = os.waitpid(child, 0)
        print(f"exited {child} {os.waitstatus_to_exitcode(status)}", flush=True)
        child = None


if __name__ == "__main__":
    main()
