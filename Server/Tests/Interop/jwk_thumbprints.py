"""RFC 7638 thumbprints of the test keys, made by outside code, for Sigil's JWK tests.

EC, OKP and RSA keys: joserfc (its JWK import and `thumbprint()`). ML-DSA (`kty: AKP`, which joserfc
does not know yet): the public key's FIPS 204 encoding from Python's `cryptography`, put in the
required members `alg`, `kty`, `pub` of the JOSE ML-DSA draft and hashed as RFC 7638 says.

Usage: python3 jwk_thumbprints.py KEYFILE... > jwk-thumbprints.json (paths relative to the current directory).
"""
import base64
import hashlib
import json
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from joserfc.jwk import import_key


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(path: str) -> dict:
    pem = open(path, "rb").read()
    key = serialization.load_pem_public_key(pem)
    name = type(key).__name__.lower()
    if "mldsa" in name:
        raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        alg = "ML-DSA-65" if "65" in name else "ML-DSA-87"
        members = {"alg": alg, "kty": "AKP", "pub": b64url(raw)}
        canonical = json.dumps(members, separators=(",", ":"), sort_keys=True)
        return {"members": members, "thumbprint": b64url(hashlib.sha256(canonical.encode()).digest())}
    kty = (
        "EC" if isinstance(key, ec.EllipticCurvePublicKey)
        else "OKP" if isinstance(key, ed25519.Ed25519PublicKey)
        else "RSA"
    )
    jwk = import_key(pem, kty)
    members = {k: v for k, v in jwk.as_dict(private=False).items() if k in ("crv", "kty", "x", "y", "n", "e")}
    return {"members": members, "thumbprint": jwk.thumbprint()}


print(json.dumps({path.split("/")[-1]: thumbprint(path) for path in sys.argv[1:]}, indent=2, sort_keys=True))
