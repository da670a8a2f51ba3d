#!/usr/bin/env python3
"""An outside implementation of PROTOCOL.md section 6.2: seals a request body to a Sigil server.

Usage: hpke_seal.py PUBLIC_KEY_BASE64 KEY_ID NONCE < plaintext > sealed (base64)

PUBLIC_KEY_BASE64 is the server's 1216-byte X-Wing sealing key as discovery lists it; KEY_ID and
NONCE the key ID that signs the request the body travels in and its nonce (the body opens for that
signer and nonce only). Prints the sealed body, base64: the key ID (16 ASCII
bytes), then HPKE SealBase's enc and ciphertext, with Python's cryptography (48 or later) alone.
"""
import base64
import hashlib
import sys

from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM768PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
from cryptography.hazmat.primitives import hpke

raw = base64.b64decode(sys.argv[1])
assert len(raw) == 1216, "an X-Wing public key is 1216 bytes"
key_id = hashlib.sha256(raw).digest()[:8].hex().encode()
# X-Wing's public key is ML-KEM-768's (1184 bytes) followed by X25519's (32).
public_key = hpke.MLKEM768X25519PublicKey(
    MLKEM768PublicKey.from_public_bytes(raw[:1184]), X25519PublicKey.from_public_bytes(raw[1184:]))
suite = hpke.Suite(hpke.KEM.MLKEM768_X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)
info = b"sigil sealed request v1\x00" + sys.argv[2].encode() + b"\x00" + sys.argv[3].encode()
sealed = suite.encrypt(sys.stdin.buffer.read(), public_key, info=info)
print(base64.b64encode(key_id + sealed).decode())
