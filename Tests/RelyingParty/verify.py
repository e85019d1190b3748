#!/usr/bin/env python3
"""A relying party, independent of authkeyd: py_webauthn (Duo Labs) checks
the WebAuthn JSON that authkeyd returns, as a web server would.

  verify.py register      < {"credential", "challenge", "origin", "rpId", "requireUserVerification"}
  verify.py authenticate  < {"credential", "challenge", "origin", "rpId", "publicKey", "signCount",
                             "requireUserVerification", "transaction"}

Binary values are base64url. Prints a JSON result on success; on failure
prints the reason on stderr and exits 1.
"""
import base64
import json
import sys

from webauthn import verify_authentication_response, verify_registration_response


def b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def register(request):
    verified = verify_registration_response(
        credential=request["credential"],
        expected_challenge=b64decode(request["challenge"]),
        expected_origin=request["origin"],
        expected_rp_id=request["rpId"],
        require_user_verification=request.get("requireUserVerification", False),
    )
    return {
        "credentialId": b64encode(verified.credential_id),
        "publicKey": b64encode(verified.credential_public_key),
        "signCount": verified.sign_count,
        "format": getattr(verified.fmt, "value", verified.fmt),
        "userVerified": verified.user_verified,
    }


def authenticate(request):
    verified = verify_authentication_response(
        credential=request["credential"],
        expected_challenge=b64decode(request["challenge"]),
        expected_origin=request["origin"],
        expected_rp_id=request["rpId"],
        credential_public_key=b64decode(request["publicKey"]),
        credential_current_sign_count=request.get("signCount", 0),
        require_user_verification=request.get("requireUserVerification", False),
    )
    client_data = json.loads(b64decode(request["credential"]["response"]["clientDataJSON"]))
    expected = request.get("transaction")
    if expected is not None and client_data.get("transaction") != expected:
        raise ValueError("clientDataJSON does not carry the confirmed transaction: %r" % client_data.get("transaction"))
    return {
        "signCount": verified.new_sign_count,
        "userVerified": verified.user_verified,
        "transaction": client_data.get("transaction"),
    }


def main():
    request = json.load(sys.stdin)
    try:
        result = {"register": register, "authenticate": authenticate}[sys.argv[1]](request)
    except Exception as error:  # the verifier's verdict, whatever its kind
        print("%s: %s" % (type(error).__name__, error), file=sys.stderr)
        sys.exit(1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
