/// What a new key signs to prove its possession in a rotation (`POST /v1/keys/rotate`), built once
/// for both ends: `sigil-rotate-v2`, the server's response key ID, the current key ID, the new key ID
/// and the request's nonce, one per line; the `proof` is the new key's sigil-v1 signature over it.
///
/// The server's key ID binds the rotation to one server: without it, a whole rotation request
/// (signed by a device key two servers both know) could be replayed to the other server.
public enum RotationProof {
    /// The message the new key signs.
    public static func message(serverKeyID: String, currentKeyID: String, newKeyID: String, nonce: String) -> [UInt8] {
        Array("sigil-rotate-v2\n\(serverKeyID)\n\(currentKeyID)\n\(newKeyID)\n\(nonce)".utf8)
    }
}
