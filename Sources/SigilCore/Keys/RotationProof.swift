/// What a new key signs to prove its possession in a rotation (`POST /v1/keys/rotate`), built once
/// for both ends: `sigil-rotate`, the current key ID, the new key ID and the request's nonce, one per
/// line; the `proof` is the new key's sigil-v1 signature over it.
public enum RotationProof {
    /// The message the new key signs.
    public static func message(currentKeyID: String, newKeyID: String, nonce: String) -> [UInt8] {
        Array("sigil-rotate\n\(currentKeyID)\n\(newKeyID)\n\(nonce)".utf8)
    }
}
