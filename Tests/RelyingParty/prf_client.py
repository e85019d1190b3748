#!/usr/bin/env python3
"""A WebAuthn client, independent of authkeyd: python-fido2 (Yubico) asks a
key for hmac-secret outputs itself, so that a test can compare its bytes
with the daemon's for the same credential and input.

  prf_client.py < {"socket", "origin", "rpId", "allowCredentials": [id],
                   "extensions": {"prf": …} | {"hmacGetSecret": …},
                   "userVerification"?, "pin"?, "pinProtocol"?}
  prf_client.py < {"mode": "register", "socket", "origin", "rpId",
                   "extensions": {"prf": …}, "userVerification"?, "pin"?}

The key is reached over the SOCK_SEQPACKET socket of `authkeyd-virtkey
--socket` (one 64-byte CTAPHID report per message, no report id), which
serves several hosts at once, so the daemon keeps its own connection.

Without "pinProtocol", python-fido2's WebAuthn client (Fido2Client with a
DefaultClientDataCollector) does everything, as a browser would; it picks
PIN/UV protocol 2 when the key offers it. With "pinProtocol": 1 or 2,
python-fido2's own hmac-secret extension runs over that protocol on
Ctap2 directly.

"register" makes a credential with Fido2Client, which sends CTAP 2.2's
hmac-secret-mc when the key lists it, so that PRF `eval` at registration
gets results.

Binary values are base64url. Prints {"clientExtensionResults",
"credentialId", "userVerified"}; on failure prints the reason on stderr
and exits 1.
"""
import hashlib
import json
import os
import sys
from collections.abc import Mapping

from fido2.client import DefaultClientDataCollector, Fido2Client, UserInteraction
from fido2.ctap2 import Ctap2
from fido2.ctap2.extensions import HmacSecretExtension
from fido2.ctap2.pin import ClientPin, PinProtocolV1, PinProtocolV2
from fido2.utils import websafe_decode, websafe_encode
from fido2.webauthn import PublicKeyCredentialDescriptor, PublicKeyCredentialRequestOptions
from socket_key import open_device

class PinInteraction(UserInteraction):
    def __init__(self, pin):
        self.pin = pin

    def request_pin(self, permissions, rp_id):
        return self.pin

    def request_uv(self, permissions, rp_id):
        return True


def jsonable(value):
    """python-fido2's result objects as JSON, bytes as base64url. An absent
    second output is empty bytes there (shown as []): it is left out."""
    if isinstance(value, bytes):
        return websafe_encode(value)
    if isinstance(value, Mapping):
        return {key: jsonable(value[key]) for key in value if value[key] not in (None, b"", [], "")}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return value


def request_options(request):
    return PublicKeyCredentialRequestOptions.from_dict({
        "challenge": websafe_encode(os.urandom(32)),
        "rpId": request["rpId"],
        "allowCredentials": [{"type": "public-key", "id": id} for id in request["allowCredentials"]],
        "userVerification": request.get("userVerification", "discouraged"),
        "extensions": request["extensions"],
    })


def webauthn_client(device, request):
    return Fido2Client(
        device, DefaultClientDataCollector(request["origin"]), PinInteraction(request.get("pin")),
        extensions=[HmacSecretExtension(allow_hmac_secret=True)])


def register(device, request):
    response = webauthn_client(device, request).make_credential({
        "rp": {"id": request["rpId"], "name": "Example"},
        "user": {"id": websafe_encode(b"python-fido2 user"), "name": "python", "displayName": "Python"},
        "challenge": websafe_encode(os.urandom(32)),
        "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
        "authenticatorSelection": {"userVerification": request.get("userVerification", "discouraged")},
        "extensions": request["extensions"],
    })
    return {
        "clientExtensionResults": jsonable(response.client_extension_results),
        "credentialId": websafe_encode(response.raw_id),
        "userVerified": response.response.attestation_object.auth_data.is_user_verified(),
    }


def with_webauthn_client(device, request):
    response = webauthn_client(device, request).get_assertion(request_options(request)).get_response(0)
    return {
        "clientExtensionResults": jsonable(response.client_extension_results),
        "credentialId": websafe_encode(response.raw_id),
        "userVerified": response.response.authenticator_data.is_user_verified(),
    }


def with_protocol(device, request):
    protocol = {1: PinProtocolV1, 2: PinProtocolV2}[request["pinProtocol"]]()
    ctap = Ctap2(device)
    options = request_options(request)
    token = None
    if request.get("pin") is not None:
        token = ClientPin(ctap, protocol).get_pin_token(
            request["pin"], ClientPin.PERMISSION.GET_ASSERTION, options.rp_id)
    processor = HmacSecretExtension(allow_hmac_secret=True).get_assertion(ctap, options, protocol)
    allow = [PublicKeyCredentialDescriptor(type="public-key", id=websafe_decode(id)) for id in request["allowCredentials"]]
    inputs = processor.prepare_inputs(allow[0] if len(allow) == 1 else None, token)
    client_data_hash = hashlib.sha256(os.urandom(32)).digest()
    assertion = ctap.get_assertion(
        options.rp_id, client_data_hash, [{"type": "public-key", "id": descriptor.id} for descriptor in allow], inputs, None,
        protocol.authenticate(token, client_data_hash) if token else None, protocol.VERSION if token else None)
    return {
        "clientExtensionResults": jsonable(processor.prepare_outputs(assertion, token) or {}),
        "credentialId": websafe_encode(assertion.credential["id"]),
        "userVerified": assertion.auth_data.is_user_verified(),
    }


def main():
    request = json.load(sys.stdin)
    try:
        device = open_device(request["socket"])
        if request.get("mode") == "register":
            run = register
        else:
            run = with_protocol if "pinProtocol" in request else with_webauthn_client
        result = run(device, request)
    except Exception as error:  # the client's verdict, whatever its kind
        print("%s: %s" % (type(error).__name__, error), file=sys.stderr)
        sys.exit(1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
