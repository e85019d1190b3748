#!/usr/bin/env python3
"""A credential made the way pamu2fcfg makes one, by python-fido2 on the
key directly (not through authkeyd): CTAP2 makeCredential for relying
party RPID over a random clientDataHash, ES256, a random 32-byte user id.
Prints the two fields of pam_u2f's authfile that come from the key, as
pamu2fcfg encodes them: the credential id and libfido2's public key bytes
(x || y), each in standard base64, joined by a comma.

usage: pam_u2f_credential.py SOCKET RPID USER
"""
import base64
import os
import sys

from fido2.ctap2 import Ctap2
from socket_key import open_device


def main():
    path, rp_id, user = sys.argv[1], sys.argv[2], sys.argv[3]
    ctap = Ctap2(open_device(path))
    attestation = ctap.make_credential(
        os.urandom(32),
        {"id": rp_id, "name": rp_id},
        {"id": os.urandom(32), "name": user, "displayName": user},
        [{"type": "public-key", "alg": -7}],
    )
    data = attestation.auth_data.credential_data
    key = data.public_key
    point = key[-2] + key[-3]
    print(base64.b64encode(data.credential_id).decode() + "," + base64.b64encode(point).decode())


if __name__ == "__main__":
    main()
