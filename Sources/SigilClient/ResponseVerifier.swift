import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore

/// What a verified response signature says.
public struct VerifiedResponse: Sendable, Hashable {
    /// The server's time when it signed (`X-Timestamp` or `created`).
    public let timestamp: Int64
    /// Whether the signature covers the request it answers, by its key ID, nonce and signature
    /// (sigil-v1 always; rfc9421 when it covers `"signature";req`): such a response is as fresh as that
    /// request, whatever the clocks say.
    public let isBoundToRequestNonce: Bool
    /// Whether the signature covers the key ID the request named, whatever its signature: sigil-v1's
    /// base names it; rfc9421 when it covers `"signature-input";req`. Only then may a signed
    /// `unknown-key` or `revoked-key` be taken as the server's word about this request's key: a refusal
    /// of a request whose signature did not verify is bound to its signature bytes, which a copy may
    /// pair with another key ID.
    public var coversRequestKeyID = true
}

/// Checks a server's signed response: the key is the server key the app trusts, the timestamp is in
/// the window, and the signature covers the nonce (sigil-v1) or the request (rfc9421) it answers.
public struct ResponseVerifier: Sendable {
    /// The trusted server key.
    public let key: VerificationKey
    /// The key ID the server signs with.
    public let keyID: String
    /// The accepted `|now − timestamp|`.
    public var maxSkew: Int64 = 300
    let clock: any UnixClock
    /// sigil-v1: whether JSON bodies are canonicalized (must match the server).
    public var canonicalJSON = true
    /// More keys the server may sign with, learnt from its signed discovery (a promoted next key).
    public var trusted: TrustedResponseKeys?

    /// The trusted key `id` names: one of ``trusted`` when set (which starts with ``key`` and follows
    /// the server's rotations), else ``key``.
    func trustedKey(_ id: String) -> VerificationKey? {
        if let trusted { return trusted.key(id, at: clock.now(), maxSkew: maxSkew) }
        return id == keyID ? key : nil
    }

    /// Creates a verifier for one trusted server key.
    public init(key: VerificationKey, keyID: String, clock: any UnixClock = SystemUnixClock()) {
        self.key = key
        self.keyID = keyID
        self.clock = clock
    }

    /// Verifies a sigil-v1 signed response to `request`: the base names the request's key ID, nonce
    /// and `X-Signature` as sent (PROTOCOL.md section 2.7), so an answer to any other request, even
    /// one under the same nonce by another key, does not verify.
    ///
    /// - Parameter checkingWindow: whether the timestamp must be within ``maxSkew`` of the clock; a
    ///   caller that learns its clock from the response turns it off (the nonce makes it fresh).
    /// - Returns: the signed time.
    /// - Throws: ``SigilError``: `missing-signature`, `malformed-signature`, `unknown-key` (another key),
    ///   `timestamp-out-of-window`, `invalid-signature`.
    @discardableResult
    public func verifySigilV1(
        _ response: HTTPResponse,
        body: [UInt8],
        answering request: SigilV1.AnsweredRequest,
        checkingWindow: Bool = true
    ) throws -> VerifiedResponse {
        let fields = response.headerFields
        let timestamps = fields[values: SigilV1.timestampField]
        let keyIDs = fields[values: SigilV1.keyIDField]
        let signatures = fields[values: SigilV1.signatureField]
        if timestamps.isEmpty && keyIDs.isEmpty && signatures.isEmpty {
            throw SigilError(.missingSignature, "the response is not signed")
        }
        guard timestamps.count == 1, keyIDs.count == 1, signatures.count == 1,
            let timestamp = SigilV1.parseTimestamp(timestamps[0]),
            let signature = Base64URL.decode(signatures[0]), !signature.isEmpty
        else { throw SigilError(.malformedSignature, "the response's signature headers are malformed") }
        guard let key = trustedKey(keyIDs[0]) else {
            throw SigilError(
                .unknownKey, "the response is signed by \(keyIDs[0].prefix(128)), not the trusted \(keyID)")
        }
        if checkingWindow { try checkWindow(timestamp) }
        let base = SigilV1.responseBase(
            for: response,
            body: body,
            timestamp: timestamps[0],
            answering: request,
            canonicalJSON: canonicalJSON
        )
        guard key.isValidSignature(signature, for: base, profile: .sigilV1) else {
            throw SigilError(.invalidSignature, "the response signature does not verify")
        }
        trusted?.signed(by: keyIDs[0])
        return VerifiedResponse(timestamp: timestamp, isBoundToRequestNonce: true)
    }

    /// Verifies an rfc9421 signed response to `request`, which must cover `@status` and, with a body,
    /// `content-digest`, with a `Content-Encoding` `content-encoding`, plus at least one `;req` component.
    ///
    /// - Parameter checkingWindow: whether `created` must be within ``maxSkew`` of the clock; when it
    ///   is off, a response that does not cover the request's signature is still held to the window.
    /// - Returns: the signed time.
    @discardableResult
    public func verifyRFC9421(
        _ response: HTTPResponse,
        body: [UInt8],
        answering request: HTTPRequest,
        checkingWindow: Bool = true
    ) throws -> VerifiedResponse {
        let signatures = try MessageSignatures(response.headerFields)
        guard let entry = signatures.entries.first(where: { (try? $0.input.keyID).flatMap(trustedKey) != nil }),
            let entryKeyID = try entry.input.keyID, let key = trustedKey(entryKeyID)
        else {
            throw SigilError(.unknownKey, "no response signature by the trusted key \(keyID)")
        }
        let input = entry.input
        guard input.components.contains(.status) else {
            throw SigilError(.missingComponent, "the response signature must cover @status")
        }
        guard input.components.contains(where: { $0.flag("req") }) else {
            throw SigilError(.missingComponent, "the response signature must cover the request (;req)")
        }
        if !body.isEmpty || response.headerFields[MessageSignatures.contentDigestField] != nil {
            guard input.components.contains(.contentDigest) else {
                throw SigilError(.missingComponent, "the response signature must cover content-digest")
            }
            try ContentDigest.verify(response.headerFields, body: body)
        }
        if response.headerFields[.contentEncoding] != nil && !input.components.contains(.contentEncoding) {
            throw SigilError(.missingComponent, "the response signature must cover content-encoding")
        }
        guard let created = try input.created else { throw SigilError(.missingComponent, "created is required") }
        let bound = input.components.contains { $0.name == "signature" && $0.flag("req") }
        if checkingWindow || !bound { try checkWindow(created) }
        if let expires = try input.expires, expires <= clock.now() {
            throw SigilError(.expired, "the response signature expired")
        }
        let base = try RFC9421.signatureBase(
            for: input, message: RFC9421Message(response: response, answering: request))
        guard key.isValidSignature(entry.signature, for: base, profile: .rfc9421) else {
            throw SigilError(.invalidSignature, "the response signature does not verify")
        }
        trusted?.signed(by: entryKeyID)
        var verified = VerifiedResponse(timestamp: created, isBoundToRequestNonce: bound)
        verified.coversRequestKeyID = input.components.contains { $0.name == "signature-input" && $0.flag("req") }
        return verified
    }

    func checkWindow(_ timestamp: Int64) throws {
        if let refusal = TimeWindow(maxSkew: maxSkew).refusal(
            of: timestamp, at: clock.now(), what: "the response timestamp")
        {
            throw refusal
        }
    }
}

/// The response keys a client trusts, starting with the one it enrolled with and following the
/// server's rotations: learnt only from a discovery document signed by a key it already trusts
/// (`Sigil-Discovery-Signature`), dated within the window of the client's (server-corrected) clock and
/// no older than the last one learnt from. The keys such a document lists (`current`, `next`) replace
/// the ones trusted before, so a retired key stops being trusted once the client has seen its successor,
/// and an old document replayed teaches nothing.
public final class TrustedResponseKeys: Sendable {
    struct State {
        var keys: [String: VerificationKey]
        var current: Registration.Discovery.Key?
        var sealingKey: SealingPublicKey?
        var lastServerTime = Int64.min
        /// When keys stop signing (the directory's `exp`), by key ID.
        var expiries: [String: Int64] = [:]
        /// The keys learnt as published ahead of a promotion, not yet seen signing.
        var next: Set<String> = []
        /// The TLS pins the last discovery document learnt from listed (its `pins`, then its
        /// `backupPins`); empty until one was.
        var pins: [String] = []
        /// The `Sigil-Keys` tag of the keys learnt last (the signed document's own), and the last tag
        /// whose read brought a document that did not verify (not read again and again).
        var keysTag: String?
        var refusedTag: String?
        /// Whether the last discovery document read was refused (unsigned, another key's, stale).
        var lastRefused = false
    }
    let state: Locked<State>
    let keyFormats: KeyFormats

    /// Trusts `keys`, by key ID.
    public init(_ keys: [String: VerificationKey], keyFormats: KeyFormats = .builtIn) {
        state = Locked(State(keys: keys))
        self.keyFormats = keyFormats
    }

    /// The key `id` names, if trusted.
    public func key(_ id: String) -> VerificationKey? { state.withLock { $0.keys[id] } }

    /// The key `id` names, if trusted and not past the `exp` its directory gave it (by more than
    /// `maxSkew`): a retired key, even one stolen afterwards, signs nothing this client takes.
    public func key(_ id: String, at now: Int64, maxSkew: Int64) -> VerificationKey? {
        state.withLock { state in
            if let expiry = state.expiries[id], now > expiry + maxSkew { return nil }
            return state.keys[id]
        }
    }

    /// Notes that an answer verified under `id`: a key learnt as the next one signs answers only once
    /// the server promoted it, so it becomes current (what ``DeviceIdentity/following(_:)`` keeps).
    /// Only forward: an answer by the key it replaced (a replica a moment behind) changes nothing.
    public func signed(by id: String) {
        state.withLock { state in
            guard state.next.contains(id), let key = state.keys[id],
                let promoted = Registration.Discovery.Key(keyID: id, key: key, state: "current")
            else { return }
            state.next.remove(id)
            state.current = promoted
        }
    }

    /// The server's current response key as the last discovery learnt said, for a client to keep in
    /// its identity in place of the one it enrolled with; `nil` until one was learnt.
    public var current: Registration.Discovery.Key? { state.withLock { $0.current } }

    /// The server's current sealing key as the last signed discovery learnt said; `nil` until one was.
    public var sealingKey: SealingPublicKey? { state.withLock { $0.sealingKey } }

    /// The TLS pins (the key served, then the keys it may move to) the last signed discovery listed;
    /// empty until one was learnt. Pins are learnt from nothing else: never from an unsigned document
    /// or one another key signed.
    public var pins: [String] { state.withLock { $0.pins } }

    /// The `Sigil-Keys` tag the keys were last learnt at (``Registration/keysTagField``).
    public var keysTag: String? {
        get { state.withLock { $0.keysTag } }
        set { state.withLock { $0.keysTag = newValue } }
    }

    /// Whether an answer tagged `tag` calls for reading discovery: a tag other than the one learnt at,
    /// and not one whose read brought a document that did not verify. A read that failed on the way (a
    /// dropped connection) or brought an older document (a replica a moment behind) is tried again on
    /// a later answer: at most one read an answer.
    public func needsRead(tag: String) -> Bool {
        state.withLock { tag != $0.keysTag && tag != $0.refusedTag }
    }

    /// Notes that the read prompted by `tag` brought a document that did not verify.
    public func refusedRead(tag: String) {
        state.withLock { state in
            if state.lastRefused { state.refusedTag = tag }
        }
    }

    /// Learns the response keys of a discovery document (`body`, as received) whose
    /// `Sigil-Discovery-Signature` (`signature`) verifies under a key already trusted, whose
    /// `serverTime` is within `maxSkew` of `now` and not before the last document learnt from.
    ///
    /// - Returns: the key IDs learnt now (none when the document is refused).
    /// - Parameter tag: the `Sigil-Keys` tag of the answer that prompted the read, kept as the tag the
    ///   keys were learnt at when the document is taken.
    @discardableResult
    public func learn(
        discovery body: [UInt8], signature: String?, now: Int64, maxSkew: Int64 = 300, tag: String? = nil
    ) -> [String] {
        let trusted = state.withLock { $0.keys }
        guard !Registration.DiscoverySignature.verifiedSigners(signature, body: body, trusted: trusted).isEmpty,
            let discovery = try? JSONDecoder().decode(Registration.Discovery.self, from: Data(body)),
            TimeWindow(maxSkew: maxSkew).refusal(of: discovery.serverTime, at: now, what: "discovery") == nil
        else {
            state.withLock { $0.lastRefused = true }
            return []
        }
        state.withLock { $0.lastRefused = false }
        var keys: [String: VerificationKey] = [:]
        for entry in discovery.responseKeys
        where entry.state == nil || entry.state == "current" || entry.state == "next" {
            guard let algorithm = try? SignatureAlgorithm.named(entry.alg),
                let key = try? KeyFile.load(Array(entry.publicKey.utf8), algorithm: algorithm, formats: keyFormats)
                    .verificationKey,
                key.derivedKeyID == entry.keyId
            else { continue }
            keys[entry.keyId] = key
        }
        guard !keys.isEmpty else { return [] }
        return state.withLock { state -> [String] in
            guard discovery.serverTime >= state.lastServerTime else { return [] }
            let learnt = keys.keys.filter { state.keys[$0] == nil }.sorted()
            state.keys = keys
            state.lastServerTime = min(discovery.serverTime, now)
            state.current = discovery.responseKeys.first { $0.state == nil || $0.state == "current" }
            state.next = Set(discovery.responseKeys.filter { $0.state == "next" }.map(\.keyId)).intersection(keys.keys)
            state.expiries = [:]
            if let sealing = try? discovery.sealingKeys?.first?.key() { state.sealingKey = sealing }
            var pins: [String] = []
            for pin in discovery.pins + discovery.backupPins where !pins.contains(pin) { pins.append(pin) }
            if !discovery.pins.isEmpty { state.pins = pins }
            // The document's own tag, signed with it; an older server's (none): the answer's.
            if let tag = discovery.keysTag ?? tag { state.keysTag = tag }
            return learnt
        }
    }
}

extension TrustedResponseKeys {
    /// Learns the response keys of the server's signed key directory
    /// (`/.well-known/http-message-signatures-directory`, docs/PROTOCOL.md §12), answered to `request`.
    ///
    /// The answer is taken when a key already trusted signed it, over `("@authority";req)` and
    /// `content-digest` (so over the list itself) with the directory's tag, within `maxSkew` of `now`
    /// and not expired; when every key it lists signed it too (each proves it holds its key); and when
    /// it is no older than the last document learnt from. Its keys then replace the ones trusted,
    /// by their Sigil key IDs. A directory whose signatures cover `@authority` alone teaches nothing:
    /// anyone on the path could list another key beside a signature that still verifies.
    ///
    /// - Returns: the key IDs learnt now (none when the directory is refused).
    @discardableResult
    public func learn(
        directory body: [UInt8], response: HTTPResponse, request: HTTPRequest, now: Int64, maxSkew: Int64 = 300
    ) -> [String] {
        guard response.status == .ok, body.count <= 65_536,
            (try? ContentDigest.verify(response.headerFields, body: body)) != nil,
            let signatures = try? MessageSignatures(response.headerFields), signatures.entries.count <= 16,
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let listed = object["keys"] as? [[String: Any]], !listed.isEmpty, listed.count <= 16
        else { return [] }
        // Each key's algorithm is the one its own signature names (signed), and its JOSE `alg` when given.
        var signedAlgorithms: [String: SignatureAlgorithm] = [:]
        for entry in signatures.entries {
            if let kid = try? entry.input.keyID, let name = try? entry.input.algorithm,
                let algorithm = SignatureAlgorithm(rawValue: name)
            {
                signedAlgorithms[kid] = algorithm
            }
        }
        var keys: [String: VerificationKey] = [:]
        var byThumbprint: [String: VerificationKey] = [:]
        var current: Registration.Discovery.Key?
        var next: Set<String> = []
        var expiries: [String: Int64] = [:]
        for jwk in listed {
            guard let kid = jwk["kid"] as? String, byThumbprint[kid] == nil, let algorithm = signedAlgorithms[kid],
                (jwk["alg"] as? String).map({ $0 == JWK.joseAlgorithm(algorithm) }) ?? true,
                let key = try? JWK.verificationKey(
                    jwk.compactMapValues { $0 as? String }.filter {
                        $0.key != "kid" && $0.key != "alg" && $0.key != "use"
                    },
                    algorithm: algorithm, formats: keyFormats),
                key.jwkThumbprint == kid, let keyID = key.derivedKeyID
            else { return [] }
            keys[keyID] = key
            byThumbprint[kid] = key
            if jwk["nbf"] != nil {
                next.insert(keyID)
            } else if current == nil {
                current = Registration.Discovery.Key(keyID: keyID, key: key, state: "current")
            }
            if let expiry = jwk["exp"] as? Int { expiries[keyID] = Int64(expiry) }
        }
        // Nothing is verified unless a key already trusted is among those listed.
        let trusted = state.withLock { $0.keys }
        let trustedThumbprints = Set(trusted.values.compactMap(\.jwkThumbprint))
        guard !trustedThumbprints.isDisjoint(with: byThumbprint.keys) else { return [] }
        let message = RFC9421Message(response: response, answering: request)
        var signedBy: Set<String> = []
        var newest = Int64.min
        for entry in signatures.entries {
            let input = entry.input
            guard (try? input.tag) == Registration.Path.keyDirectoryTag,
                input.components.contains(ComponentIdentifier("@authority", parameters: [("req", .bool(true))])),
                input.components.contains(.contentDigest),
                let created = try? input.created,
                TimeWindow(maxSkew: maxSkew).refusal(of: created, at: now, what: "the directory") == nil,
                let expiry = try? input.expires, expiry > now,
                let kid = try? input.keyID, let key = byThumbprint[kid],
                let base = try? RFC9421.signatureBase(for: input, message: message),
                key.isValidSignature(entry.signature, for: base, profile: .rfc9421)
            else { continue }
            signedBy.insert(kid)
            newest = max(newest, created)
        }
        guard signedBy == Set(byThumbprint.keys), !signedBy.isDisjoint(with: trustedThumbprints) else { return [] }
        return state.withLock { state -> [String] in
            guard newest >= state.lastServerTime else { return [] }
            let learnt = keys.keys.filter { state.keys[$0] == nil }.sorted()
            state.keys = keys
            // A document dated ahead of this clock (a replica running fast) does not hold back the next.
            state.lastServerTime = min(newest, now)
            if let current { state.current = current }
            state.next = next
            state.expiries = expiries
            return learnt
        }
    }
}

extension DeviceIdentity {
    /// The identity following what `trusted` learnt from the server's signed discovery (its current
    /// response key, its current sealing key), to keep in place of the keys of enrollment; `nil`
    /// when nothing changed.
    public func following(_ trusted: TrustedResponseKeys) -> DeviceIdentity? {
        var updated = self
        if let current = trusted.current, current.keyId != responseKeyID {
            updated.responseKeyID = current.keyId
            updated.responseKey = current.publicKey
        }
        if let sealing = trusted.sealingKey, sealing.keyID != sealingKey?.keyId {
            updated.sealingKey = Registration.Discovery.SealingKey(sealing)
        }
        // Pins from a discovery document a trusted key signed (the key served now and those the server
        // may move to, so a TLS key's promotion needs no new enrollment), beside the app's own, which
        // are never dropped: a CDN's key the app pinned stays pinned.
        let learnt = trusted.pins
        if !learnt.isEmpty {
            let own = appPins ?? (pinsTakenOnFirstUse == true ? [] : pins)
            var pins = own
            for pin in learnt where !pins.contains(pin) { pins.append(pin) }
            if pins != self.pins || appPins == nil {
                updated.pins = pins
                updated.appPins = own
                updated.pinsTakenOnFirstUse = nil
            }
        }
        if let tag = trusted.keysTag { updated.keysTag = tag }
        return updated == self ? nil : updated
    }
}
