"""DPoP proofs (RFC 9449) and access tokens made by outside code (joserfc), for Sigil's DPoP tests:
valid proofs with ES256, EdDSA, RS256 and PS256, then one single change each.

Usage: python3 dpop_proofs.py NOW URL ACCESS_TOKEN; prints {"case": {"proof": …, "expect": code|"ok"}}.
With ACCESS_TOKEN "-", an ES256 issuer key is made, and the output gains "issuer" (its public PEM) and,
per case, the access token (bound by cnf.jkt, audience "sigil-test", issuer "https://issuer.test").
"""
import base64
import hashlib
import json
import sys
import uuid

from joserfc import jws
from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey

now, url, token = int(sys.argv[1]), sys.argv[2], sys.argv[3]
issuer = ECKey.generate_key("P-256") if token == "-" else None


def access_token(bound_to, *, aud="sigil-test", exp=None):
    claims = {
        "sub": "user-1", "aud": aud, "iss": "https://issuer.test", "exp": exp or now + 600, "iat": now,
        "cnf": {"jkt": bound_to.thumbprint()},
    }
    return jws.serialize_compact({"alg": "ES256", "typ": "at+jwt"}, json.dumps(claims).encode(), issuer)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def ath(value: str) -> str:
    return b64url(hashlib.sha256(value.encode()).digest())


def proof(key, alg, *, header=None, claims=None, jwk=None, signer=None, for_token=None):
    head = {"typ": "dpop+jwt", "alg": alg, "jwk": jwk if jwk is not None else key.as_dict(private=False)}
    head.update(header or {})
    body = {"htm": "POST", "htu": url, "iat": now, "jti": str(uuid.uuid4()), "ath": ath(for_token or token)}
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
    "ps256": (proof(rsa, "PS256"), "ok"),
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
if issuer is None:
    print(json.dumps({name: {"proof": value, "expect": expect} for name, (value, expect) in cases.items()}))
    sys.exit(0)

# With tokens: each case again with a token bound to its key (signature cases keep their codes), then
# the token's own single changes.
output = {"issuer": issuer.as_pem(private=False).decode(), "cases": {}}
keys = {"es256": es, "eddsa": ed, "rs256": rsa, "ps256": rsa}
for name in ("es256", "eddsa", "rs256", "ps256"):
    bound = access_token(keys[name])
    alg = {"es256": "ES256", "eddsa": "EdDSA", "rs256": "RS256", "ps256": "PS256"}[name]
    output["cases"][name] = {"proof": proof(keys[name], alg, for_token=bound), "token": bound, "expect": "ok"}
for name, token_value, expect in [
    ("token-other-key", access_token(other), "invalid_token"),
    ("token-expired", access_token(es, exp=now - 60), "invalid_token"),
    ("token-other-audience", access_token(es, aud="someone-else"), "invalid_token"),
]:
    output["cases"][name] = {"proof": proof(es, "ES256", for_token=token_value), "token": token_value, "expect": expect}
bound = access_token(es)
output["cases"]["ath-of-another-token"] = {"proof": proof(es, "ES256"), "token": bound, "expect": "invalid_dpop_proof"}
print(json.dumps(output))
