"""DPoP proofs (RFC 9449) made by outside code (joserfc), for Sigil's DPoP tests: valid ones with
ES256, EdDSA and RS256, then one single change each.

Usage: python3 dpop_proofs.py NOW URL ACCESS_TOKEN; prints {"case": {"proof": …, "expect": code|"ok"}}.
"""
import base64
import hashlib
import json
import sys
import uuid

from joserfc import jws
from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey

now, url, token = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def ath(value: str) -> str:
    return b64url(hashlib.sha256(value.encode()).digest())


def proof(key, alg, *, header=None, claims=None, jwk=None, signer=None):
    head = {"typ": "dpop+jwt", "alg": alg, "jwk": jwk if jwk is not None else key.as_dict(private=False)}
    head.update(header or {})
    body = {"htm": "POST", "htu": url, "iat": now, "jti": str(uuid.uuid4()), "ath": ath(token)}
    body.update(claims or {})
    body = {name: value for name, value in body.items() if value is not None}
    registry = jws.JWSRegistry(algorithms=[alg])
    return jws.serialize_compact(head, json.dumps(body).encode(), signer or key, registry=registry)


es = ECKey.generate_key("P-256")
ed = OKPKey.generate_key("Ed25519")
rsa = RSAKey.generate_key(2048)
other = ECKey.generate_key("P-256")
unsigned_head = b64url(json.dumps({"typ": "dpop+jwt", "alg": "none", "jwk": es.as_dict(private=False)}).encode())
unsigned_body = b64url(json.dumps({"htm": "POST", "htu": url, "iat": now, "jti": "x", "ath": ath(token)}).encode())

cases = {
    "es256": (proof(es, "ES256"), "ok"),
    "eddsa": (proof(ed, "EdDSA"), "ok"),
    "rs256": (proof(rsa, "RS256"), "ok"),
    "another-htm": (proof(es, "ES256", claims={"htm": "GET"}), "invalid-signature"),
    "another-scheme": (proof(es, "ES256", claims={"htu": url.replace("https://", "http://")}), "invalid-signature"),
    "another-host": (proof(es, "ES256", claims={"htu": url.replace("localhost", "evil.example")}), "invalid-signature"),
    "another-path": (proof(es, "ES256", claims={"htu": url + "/more"}), "invalid-signature"),
    "old-iat": (proof(es, "ES256", claims={"iat": now - 600}), "timestamp-out-of-window"),
    "no-ath": (proof(es, "ES256", claims={"ath": None}), "invalid-signature"),
    "wrong-ath": (proof(es, "ES256", claims={"ath": ath(token + "x")}), "invalid-signature"),
    "alg-none": (unsigned_head + "." + unsigned_body + ".", "malformed-signature"),
    "hs256": (proof(OctKey.generate_key(256), "HS256", jwk={"kty": "oct"}), "unsupported-algorithm"),
    "private-jwk": (proof(es, "ES256", jwk=es.as_dict(private=True)), "malformed-signature"),
    "other-key": (proof(es, "ES256", signer=other), "invalid-signature"),
    "typ-jwt": (proof(es, "ES256", header={"typ": "JWT"}), "malformed-signature"),
}
print(json.dumps({name: {"proof": value, "expect": expect} for name, (value, expect) in cases.items()}))
