"""Checks a sigil-v1 signed refusal with outside code alone (Python's json, hashlib and
cryptography), as a client in another language would: the response base of PROTOCOL.md section 2.7
built by hand and the server's Ed25519 signature verified with the key discovery published.

Input on stdin, JSON: {"publicKey": SPKI PEM, "keyId": the request's X-Key-ID, "nonce": its X-Nonce,
"signature": its X-Signature text, "status": the answer's status, "headers": [[name, value], ...],
"body": the answer's body as text}.
Prints "verified <code>" and exits 0, or prints the reason and exits 1.
"""
import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import load_pem_public_key


def jcs(value):
    """RFC 8785 for what a problem+json refusal holds (strings and integers in one object)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def main():
    given = json.load(sys.stdin)
    headers = {name.lower(): value for name, value in given["headers"]}
    for name in ("x-timestamp", "x-key-id", "x-signature"):
        if name not in headers:
            print(f"unsigned: no {name}")
            return 1
    body = given["body"]
    body_hash = hashlib.sha256(jcs(json.loads(body)).encode()).hexdigest() if body else ""
    base = "\n".join([
        headers["x-timestamp"],
        given["keyId"],
        given["nonce"],
        hashlib.sha256(given["signature"].encode("ascii")).hexdigest(),
        str(given["status"]),
        body_hash,
    ])
    text = headers["x-signature"]
    signature = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    key = load_pem_public_key(given["publicKey"].encode())
    try:
        key.verify(signature, base.encode())
    except InvalidSignature:
        print("the signature does not verify")
        return 1
    print("verified " + json.loads(body)["code"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
