"""Checks a signed key directory answer with outside code: pyauth's http-message-signatures verifies
every signature (the tag, `expires`, `("@authority";req)`), and joserfc computes each `kid` as the
RFC 7638 thumbprint of its JWK.

Input on stdin, JSON: {"url": request URL, "headers": [[name, value], ...], "body": text}.
Prints "verified N" and exits 0, or prints the reason and exits 1.
"""
import base64
import datetime
import hashlib
import json
import sys

from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from http_message_signatures import HTTPMessageVerifier, MappingKeyResolver, algorithms
from joserfc.jwk import import_key


class Headers(dict):
    """Case-insensitive header fields, one value each (the directory repeats none)."""

    def __init__(self, pairs):
        super().__init__((name.lower(), value) for name, value in pairs)

    def __getitem__(self, name):
        return super().__getitem__(name.lower())

    def __contains__(self, name):
        return super().__contains__(name.lower())


class Request:
    def __init__(self, url):
        self.method = "GET"
        self.url = url
        self.headers = Headers([])


class Response:
    def __init__(self, url, headers):
        self.status_code = 200
        self.headers = Headers(headers)
        self.request = Request(url)


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_key(jwk):
    if jwk["kty"] == "OKP":
        return ed25519.Ed25519PublicKey.from_public_bytes(b64url(jwk["x"])), algorithms.ED25519
    numbers = ec.EllipticCurvePublicNumbers(
        int.from_bytes(b64url(jwk["x"]), "big"), int.from_bytes(b64url(jwk["y"]), "big"), ec.SECP256R1())
    return numbers.public_key(), algorithms.ECDSA_P256_SHA256


def main():
    given = json.load(sys.stdin)
    keys = json.loads(given["body"])["keys"]
    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(given["body"].encode()).digest()).decode() + ":"
    if Headers(given["headers"]).get("content-digest") != digest:
        print("the Content-Digest is not the body's")
        return 1
    verified = 0
    for jwk in keys:
        members = {name: jwk[name] for name in ("kty", "crv", "x", "y") if name in jwk}
        thumbprint = import_key(members, jwk["kty"]).thumbprint()
        if thumbprint != jwk["kid"]:
            print(f"kid {jwk['kid']} is not the thumbprint {thumbprint}")
            return 1
        key, algorithm = public_key(jwk)
        verifier = HTTPMessageVerifier(
            signature_algorithm=algorithm, key_resolver=MappingKeyResolver(public_keys={jwk["kid"]: key}, private_keys={}))
        response = Response(given["url"], given["headers"])
        # Select this key's signature by its label: every listed key signs under its own.
        label = f"sig{keys.index(jwk) + 1}"
        results = verifier.verify(
            response, expect_tag="http-message-signatures-directory", expect_label=label,
            max_age=datetime.timedelta(minutes=5), require_components=['"@authority";req', '"content-digest"'])
        if [result.parameters.get("keyid") for result in results] != [jwk["kid"]]:
            print(f"{label} is not signed by {jwk['kid']}")
            return 1
        verified += 1
    print(f"verified {verified}")
    return 0


sys.exit(main())
