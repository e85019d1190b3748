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
import sys

from fido2.ctap2 import Ctap2
from fido2.ctap2.blob import LargeBlobs
from socket_key import open_device


def b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    path, rp_id, credential_id = sys.argv[1], sys.argv[2], b64decode(sys.argv[3])
    ctap2 = Ctap2(open_device(path))
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
