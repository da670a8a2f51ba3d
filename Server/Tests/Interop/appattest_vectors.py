#!/usr/bin/env python3
"""Makes Tests/Vectors/apple-appattest.json: requests signed with apple-appattest (README,
"App Attest", section 7) by an implementation independent of Sigil: Python's `cryptography` for
ECDSA P-256, CBOR and both signature bases written out by hand. ECDSA signatures are randomized, so
each run writes different assertions; every run's file is equally valid.

    python3 Tests/Interop/appattest_vectors.py > Tests/Vectors/apple-appattest.json
"""
import base64
import hashlib
import json

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

APP_ID = "TEAM123456.dev.sigil.vectors"
NOW = 1763769600
SECRET = int.from_bytes(hashlib.sha256(b"sigil apple-appattest vector key").digest(), "big")
KEY = ec.derive_private_key(SECRET % (2**256 - 2**224 + 2**192 + 2**96 - 1), ec.SECP256R1())
X963 = KEY.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
APP_ATTEST_KEY_ID = hashlib.sha256(X963).digest()
KEY_ID = APP_ATTEST_KEY_ID[:8].hex()


def cbor_head(major, value):
    if value < 24:
        return bytes([major << 5 | value])
    for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if value < 1 << (8 * size):
            return bytes([major << 5 | info]) + value.to_bytes(size, "big")
    raise ValueError(value)


def cbor_map(pairs):
    out = cbor_head(5, len(pairs))
    for key, value in pairs:
        text = key.encode()
        out += cbor_head(3, len(text)) + text + cbor_head(2, len(value)) + value
    return out


def assertion(client_data, counter, app_id=APP_ID):
    """What DCAppAttestService.generateAssertion makes for clientDataHash = SHA-256(client_data)."""
    authenticator_data = hashlib.sha256(app_id.encode()).digest() + b"\x40" + counter.to_bytes(4, "big")
    nonce = hashlib.sha256(authenticator_data + hashlib.sha256(client_data).digest()).digest()
    signature = KEY.sign(nonce, ec.ECDSA(hashes.SHA256()))
    return cbor_map([("signature", signature), ("authenticatorData", authenticator_data)])


def sigil_v1(case_id, body, counter, previous, expect, app_id=APP_ID, sent_body=None, note=""):
    nonce = f"appattest-vector-{case_id}"
    base = f"{NOW}\n{nonce}\nPOST\n/v1/echo\n{hashlib.sha256(body).hexdigest()}"
    signature = base64.urlsafe_b64encode(assertion(base.encode(), counter, app_id)).rstrip(b"=").decode()
    sent = body if sent_body is None else sent_body
    message = (
        "POST /v1/echo HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: text/plain\r\n"
        f"X-Timestamp: {NOW}\r\nX-Nonce: {nonce}\r\nX-Key-ID: {KEY_ID}\r\nX-Signature: {signature}\r\n\r\n"
    ) + sent.decode()
    return {"id": case_id, "profile": "sigil-v1", "previousCounter": previous, "message": message,
            "signatureBase": base, "expect": expect, "note": note}


def rfc9421(case_id, body, counter, previous, expect):
    digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
    params = (f'("@method" "@authority" "@path" "@query" "content-digest");created={NOW};'
              f'keyid="{KEY_ID}";nonce="appattest-vector-{case_id}";alg="apple-appattest"')
    base = (f'"@method": POST\n"@authority": api.example.com\n"@path": /v1/echo\n"@query": ?\n'
            f'"content-digest": sha-256=:{digest}:\n"@signature-params": {params}')
    signature = base64.b64encode(assertion(base.encode(), counter)).decode()
    message = (
        "POST /v1/echo HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: text/plain\r\n"
        f"Content-Digest: sha-256=:{digest}:\r\nSignature-Input: sig1={params}\r\n"
        f"Signature: sig1=:{signature}:\r\n\r\n"
    ) + body.decode()
    return {"id": case_id, "profile": "rfc9421", "previousCounter": previous, "message": message,
            "signatureBase": base, "expect": expect, "note": ""}


body = b"hello from the genuine app"
cases = [
    sigil_v1("sigil-v1-valid", body, 7, 6, "valid"),
    rfc9421("rfc9421-valid", body, 8, 7, "valid"),
    sigil_v1("counter-not-above", body, 7, 7, "replayed-nonce", note="the stored counter is already 7"),
    sigil_v1("another-app", body, 9, 0, "invalid-signature", app_id="TEAM123456.dev.other",
             note="made for another App ID: rpIdHash is not the accepted one"),
    sigil_v1("body-changed", body, 10, 0, "invalid-signature", sent_body=b"hello from a modified app",
             note="the body sent is not the body signed"),
]
print(json.dumps({
    "description": "apple-appattest requests (README, App Attest, section 7), made by Tests/Interop/appattest_vectors.py "
                   "with Python's cryptography, independent of Sigil.",
    "appId": APP_ID,
    "publicKeyPem": KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo).decode(),
    "appAttestKeyIdBase64": base64.b64encode(APP_ATTEST_KEY_ID).decode(),
    "keyId": KEY_ID,
    "now": NOW,
    "maxSkew": 300,
    "cases": cases,
}, indent=1))
