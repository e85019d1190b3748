#!/usr/bin/env python3
"""A daemon that lies: it serves authkeyd's socket protocol far enough for
pam_authkeyd (hello, then credentials.get) and answers the assertion with
something that looks right but must be refused.

  wrong-signature: authenticator data for the asked relying party with UP
      and UV set, signed over the asked clientDataHash by a key of its own,
      for the first credential of the allow list;
  replay FILE: the `result` of an earlier, genuine credentials.get (as
      authkeyd sent it), whatever was asked now.

Serves until killed; prints "ready" once listening. Every request it
answered is appended to its log (stderr), one line each.

usage: fake_authkeyd.py SOCKET MODE [FILE]
"""
import base64
import hashlib
import json
import os
import socket
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def forged(params):
    key = ec.generate_private_key(ec.SECP256R1())
    data = hashlib.sha256(params["rpId"].encode()).digest() + bytes([0x05]) + struct.pack(">I", 7)
    signature = key.sign(data + unb64url(params["clientDataHash"]), ec.ECDSA(hashes.SHA256()))
    allowed = params.get("allowCredentials") or [{"id": b64url(os.urandom(32))}]
    credential_id = allowed[0]["id"]
    return {"credential": {
        "id": credential_id, "rawId": credential_id, "type": "public-key",
        "response": {"authenticatorData": b64url(data), "signature": b64url(signature)},
        "clientExtensionResults": {},
    }}


def serve(connection, answer):
    stream = connection.makefile("rwb")
    for line in stream:
        message = json.loads(line)
        method, number = message.get("method"), message.get("id")
        if method == "hello":
            result = {"protocol": 1, "daemon": "fake/0", "capabilities": ["credentials.get"], "uid": 0, "canManage": True}
        elif method == "credentials.get":
            result = answer(message.get("params") or {})
        else:
            stream.write(json.dumps({"jsonrpc": "2.0", "id": number, "error": {"code": -32601, "message": "no"}}).encode() + b"\n")
            stream.flush()
            continue
        print(f"answered {method}", file=sys.stderr, flush=True)
        stream.write(json.dumps({"jsonrpc": "2.0", "id": number, "result": result}).encode() + b"\n")
        stream.flush()


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if mode == "wrong-signature":
        answer = forged
    elif mode == "replay":
        with open(sys.argv[3]) as file:
            recorded = json.load(file)
        answer = lambda params: recorded
    else:
        raise SystemExit(f"unknown mode {mode}")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    print("ready", flush=True)
    while True:
        connection, _ = server.accept()
        try:
            serve(connection, answer)
        except (OSError, ValueError):
            pass
        finally:
            connection.close()


if __name__ == "__main__":
    main()
