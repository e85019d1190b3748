#!/usr/bin/env python3
"""An independent large-blob reader: python-fido2 (Yubico), speaking CTAP
to a key served by `authkeyd-virtkey --socket`, beside authkeyd.

  largeblob_read.py SOCKET RPID CREDENTIAL_ID

Asks the key for the credential's largeBlobKey (getAssertion with the
largeBlobKey extension, a touch but no PIN), reads the large-blob array in
fragments, checks its hash, finds and opens the credential's blob with
python-fido2's own LargeBlobs, and prints {"blob": base64url or null,
"entries": n} as JSON. Binary arguments are base64url.
"""
import base64
import hashlib
import json
import os
import socket
import sys

from fido2.ctap2 import Ctap2
from fido2.ctap2.blob import LargeBlobs
from fido2.hid import CtapHidConnection, CtapHidDevice, HidDescriptor


def b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class SocketConnection(CtapHidConnection):
    """One 64-byte CTAPHID report per SOCK_SEQPACKET message, no report ID."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(30)
        self.sock.connect(path)

    def write_packet(self, data):
        self.sock.send(bytes(data).ljust(64, b"\0"))

    def read_packet(self):
        return self.sock.recv(64)

    def close(self):
        self.sock.close()


def main():
    path, rp_id, credential_id = sys.argv[1], sys.argv[2], b64decode(sys.argv[3])
    descriptor = HidDescriptor(path, 0x1209, 0x0001, 64, 64, "authkeyd virtual key", None)
    ctap2 = Ctap2(CtapHidDevice(descriptor, SocketConnection(path)))
    if not LargeBlobs.is_supported(ctap2.info):
        raise SystemExit("the key does not report largeBlobs")
    assertion = ctap2.get_assertion(
        rp_id,
        hashlib.sha256(os.urandom(32)).digest(),
        allow_list=[{"type": "public-key", "id": credential_id}],
        extensions={"largeBlobKey": True},
    )
    key = assertion.large_blob_key
    if key is None:
        raise SystemExit("the key returned no largeBlobKey")
    blobs = LargeBlobs(ctap2)
    blob = blobs.get_blob(key)
    print(json.dumps({"blob": None if blob is None else b64encode(blob), "entries": len(blobs.read_blob_array())}))


if __name__ == "__main__":
    main()
