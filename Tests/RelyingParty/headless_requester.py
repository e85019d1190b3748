#!/usr/bin/python3
"""A requester with no user interface, as a script or a service is: it
tells authkeyd in hello that it answers no prompt (ui: []), so that its
user's session agent is asked instead. It makes one request and prints the
daemon's reply to it, one JSON line, ignoring every notification.

usage: headless_requester.py SOCKET METHOD < PARAMS.json
"""
import json
import socket
import sys


def main():
    path, method = sys.argv[1], sys.argv[2]
    params = json.load(sys.stdin)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    stream = connection.makefile("rwb")

    def send(message):
        stream.write(json.dumps(message).encode() + b"\n")
        stream.flush()

    def reply_to(number):
        for line in stream:
            message = json.loads(line)
            if "method" in message:
                continue
            if message.get("id") == number:
                return message
        raise SystemExit("authkeyd closed the connection")

    send({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"client": "headless-requester/1", "ui": []}})
    hello = reply_to(1)
    if "error" in hello:
        print(json.dumps(hello))
        return 1
    send({"jsonrpc": "2.0", "id": 2, "method": method, "params": params})
    print(json.dumps(reply_to(2)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
