import Crypto
import Foundation
import Logging
@_spi(Sigil) import SigilCore
import Synchronization

/// Which of the server's own keys: the key answers are signed with, or the key bodies are sealed to.
public enum ServerKeyKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Signs answers, refusals and discovery (PROTOCOL.md section 2.7).
    case response
    /// X-Wing key request bodies are sealed to (section 6).
    case sealing
    /// The TLS key of a server that makes its own certificate (a P-256 key; the self-signed certificate
    /// is made from it): its pin is published in discovery, a next key's among the backup pins, so
    /// devices that follow discovery connect after a promotion (section 8.1).
    case tls
}

/// A server key as a store keeps it: its private key as PEM (the store seals it at rest), and when
/// it becomes current.
///
/// A key's state is a function of the keys of its kind and the time, so replicas agree without a
/// background job: the current key is the one activated last at or before now; a key activating
/// later is the next one (published, not yet used); the key before the current one is the previous
/// one for ``ServerKeyRing/overlap`` after the current one activated (still accepted: sealed bodies
/// open with it, discovery is signed with it too); older keys are retired.
public struct StoredServerKey: Sendable, Hashable, CustomStringConvertible {
    /// Names the key, never its material.
    public var description: String { "\(kind.rawValue) key \(keyID)" }

    /// Which key.
    public var kind: ServerKeyKind
    /// Its key ID (response: the §1 ID of its public key; sealing: the §6.1 ID).
    public var keyID: String
    /// Its private key, PEM.
    public var privatePEM: String
    /// When it becomes (or became) current, Unix seconds; 0 for a key current since it was imported.
    public var activatesAt: Int64
    /// When it was made.
    public var createdAt: Int64

    /// Creates a record.
    public init(kind: ServerKeyKind, keyID: String, privatePEM: String, activatesAt: Int64, createdAt: Int64) {
        self.kind = kind
        self.keyID = keyID
        self.privatePEM = privatePEM
        self.activatesAt = activatesAt
        self.createdAt = createdAt
    }
}

/// A server key as operators see it.
public struct ServerKeyInfo: Sendable, Hashable, Codable {
    /// `current`, `next`, `previous` (still accepted during the overlap) or `retired`.
    public enum State: String, Sendable, Hashable, Codable {
        case current, next, previous, retired
    }

    /// Which key.
    public var kind: ServerKeyKind
    /// Its key ID.
    public var keyID: String
    /// Its algorithm (`ed25519`, `ecdsa-p256-sha256`…) or KEM (`x-wing`).
    public var alg: String
    /// Its state now.
    public var state: State
    /// When it becomes or became current.
    public var activatesAt: Int64
    /// When it was made.
    public var createdAt: Int64

    enum CodingKeys: String, CodingKey {
        case keyID = "keyId"
        case kind, alg, state, activatesAt, createdAt
    }
}

/// The server's response and sealing keys as a store holds them, with their states at each moment:
/// what signs answers now, what discovery publishes, what sealed bodies open with.
///
/// It reads the store again at most once a second when asked for keys (in the background, so no
/// request waits for it), and at once after its own rotations: a rotation or promotion made by
/// another process or replica is followed within about a second, and a scheduled promotion happens
/// on time from what was read.
public final class ServerKeyRing: Sendable {
    /// A key of the ring, parsed.
    public struct Key: Sendable {
        /// The record.
        public let stored: StoredServerKey
        /// The response key, for ``ServerKeyKind/response``.
        public let signing: SigningKey?
        /// The sealing key, for ``ServerKeyKind/sealing``.
        public let sealing: SealingPrivateKey?
    }

    /// The keys of one kind at one moment.
    public struct Phase: Sendable {
        /// The key in use.
        public let current: Key
        /// Keys published, not yet in use.
        public let next: [Key]
        /// The key that was current before, still accepted until ``ServerKeyRing/overlap`` has passed.
        public let previous: Key?
    }

    let directory: Directory
    /// How long a next key is published before it becomes current, and how long the previous key
    /// stays accepted after, in seconds.
    public let overlap: Int64
    let clock: any UnixClock
    let keyFormats: KeyFormats
    let logger: Logger
    /// The keys read last, by kind, each list by activation time.
    let keys = Mutex<[ServerKeyKind: [Key]]>([:])
    /// A short name of every key the store holds, with its activation: it changes with each rotation
    /// and promotion, so an answer carrying it (``keysTag``) tells a client discovery has news.
    let tag = Mutex<String>("")
    /// When the keys were read last (uptime, ns), and whether a reading is under way: checked on every
    /// answer, so atomics rather than a lock.
    let loadedAt = Atomic<UInt64>(0)
    let refreshing = Atomic<Bool>(false)

    private init(
        directory: Directory, overlap: Int64, clock: any UnixClock, keyFormats: KeyFormats, logger: Logger
    ) {
        self.logger = logger
        self.directory = directory
        self.keyFormats = keyFormats
        self.overlap = overlap
        self.clock = clock
    }

    /// Opens the ring on `directory`, importing `initialResponse` and `initialSealing` as the current keys
    /// of a kind the store has none of (a data directory's existing files, or new keys).
    ///
    /// ```swift
    /// let keys = try await ServerKeyRing.open(
    ///     directory: directory, initialResponse: { try .generate(.ed25519) }, initialSealing: { try .generate() })
    /// ```
    ///
    /// - Parameters:
    ///   - keyFormats: the key kinds beyond the built-in ones a response key may be of.
    ///   - initialResponse: makes or reads the first response key; called only when the store has none.
    ///     `@Sendable`, so an `async` `@main` (isolated to the main actor) can pass one in Swift 6.
    ///   - initialSealing: makes or reads the first sealing key; called only when the store has none.
    public static func open(
        directory: Directory,
        overlap: Int64 = 7 * 86_400,
        clock: any UnixClock = SystemUnixClock(),
        keyFormats: KeyFormats = .builtIn,
        logger: Logger = Logger(label: "sigil.server-keys"),
        initialResponse: @Sendable () throws -> SigningKey,
        initialSealing: @Sendable () throws -> SealingPrivateKey,
        initialTLS: (@Sendable () throws -> SigningKey)? = nil
    ) async throws -> ServerKeyRing {
        let ring = ServerKeyRing(
            directory: directory, overlap: overlap, clock: clock, keyFormats: keyFormats, logger: logger)
        try await ring.reload()
        let kinds = Set(ring.keys.withLock { $0.filter { !$0.value.isEmpty }.keys })
        if !kinds.contains(.response) {
            let key = try initialResponse()
            try await directory.addServerKey(
                try stored(.response, signing: key, activatesAt: 0, now: clock.now()), onlyIfFirst: true, audit: [])
        }
        if !kinds.contains(.sealing) {
            let key = try initialSealing()
            try await directory.addServerKey(
                stored(.sealing, sealing: key, activatesAt: 0, now: clock.now()), onlyIfFirst: true, audit: [])
        }
        if !kinds.contains(.tls), let initialTLS {
            try await directory.addServerKey(
                try stored(.tls, signing: try initialTLS(), activatesAt: 0, now: clock.now()), onlyIfFirst: true,
                audit: [])
        }
        if kinds.count < ServerKeyKind.allCases.count { try await ring.reload() }
        return ring
    }

    static func stored(_ kind: ServerKeyKind, signing: SigningKey, activatesAt: Int64, now: Int64) throws
        -> StoredServerKey
    {
        let verification = try signing.verificationKey
        guard let keyID = verification.derivedKeyID else { throw SigilInputError("a response key needs a public key") }
        return StoredServerKey(
            kind: kind, keyID: keyID, privatePEM: try KeyFile.privateKeyFile(for: signing), activatesAt: activatesAt,
            createdAt: now)
    }

    static func stored(_ kind: ServerKeyKind, sealing: SealingPrivateKey, activatesAt: Int64, now: Int64) throws
        -> StoredServerKey
    {
        StoredServerKey(
            kind: kind, keyID: sealing.publicKey.keyID, privatePEM: try Sealing.privateKeyFile(for: sealing),
            activatesAt: activatesAt, createdAt: now)
    }

    /// Reads the store now; a key that does not read is left out (and logged), the others kept.
    public func reload() async throws {
        let parsed = try await directory.serverKeys().compactMap { stored -> Key? in
            switch stored.kind {
            case .response, .tls:
                if let signing = try? KeyFile.load(Array(stored.privatePEM.utf8), formats: keyFormats).signingKey {
                    return Key(stored: stored, signing: signing, sealing: nil)
                }
            case .sealing:
                if let sealing = try? Sealing.privateKey(pem: stored.privatePEM) {
                    return Key(stored: stored, signing: nil, sealing: sealing)
                }
            }
            logger.error("a server key does not read; left out", metadata: ["sigil.key-id": "\(stored.keyID)"])
            return nil
        }.sorted { ($0.stored.activatesAt, $0.stored.createdAt) < ($1.stored.activatesAt, $1.stored.createdAt) }
        keys.withLock { $0 = Dictionary(grouping: parsed, by: \.stored.kind) }
        let named = parsed.map { "\($0.stored.kind.rawValue) \($0.stored.keyID) \($0.stored.activatesAt)" }
        tag.withLock {
            $0 = Hex.encode(Array(SHA256.hash(data: Array(named.sorted().joined(separator: "\n").utf8)).prefix(8)))
        }
        loadedAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// Starts a reload in the background when the last one is a second old.
    func refreshIfStale() {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now &- loadedAt.load(ordering: .relaxed) > 1_000_000_000,
            refreshing.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else { return }
        Task {
            do {
                try await self.reload()
            } catch {
                self.logger.warning("the server keys could not be read again; the keys read last stay in use")
                self.loadedAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)  // again in a second
            }
            self.refreshing.store(false, ordering: .releasing)
        }
    }

    /// A short name of the keys the store holds, which every rotation and promotion changes: answers
    /// carry it (`Sigil-Keys`), so a client re-reads the signed discovery when it changed.
    public var keysTag: String {
        refreshIfStale()
        return tag.withLock { $0 }
    }

    /// The current key of `kind` at `now` (what signs every answer: no allocation); `nil` when the
    /// store holds none.
    public func current(_ kind: ServerKeyKind, at now: Int64? = nil) -> Key? {
        refreshIfStale()
        let now = now ?? clock.now()
        return keys.withLock { keys in
            guard let all = keys[kind] else { return nil }
            return all.last { $0.stored.activatesAt <= now } ?? all.first
        }
    }

    /// The keys of `kind` at `now`; `nil` when the store holds none.
    public func phase(_ kind: ServerKeyKind, at now: Int64? = nil) -> Phase? {
        refreshIfStale()
        let now = now ?? clock.now()
        let all = keys.withLock { $0[kind] ?? [] }
        guard let currentIndex = all.lastIndex(where: { $0.stored.activatesAt <= now }) else {
            // Only keys activating later (a clock far behind): use the earliest.
            return all.first.map { Phase(current: $0, next: Array(all.dropFirst()), previous: nil) }
        }
        let current = all[currentIndex]
        let previous =
            currentIndex > 0 && now < current.stored.activatesAt + overlap ? all[currentIndex - 1] : nil
        return Phase(current: current, next: Array(all[(currentIndex + 1)...]), previous: previous)
    }

    /// Every key with its state now, for operators.
    public func describe(at now: Int64? = nil) -> [ServerKeyInfo] {
        let now = now ?? clock.now()
        var infos: [ServerKeyInfo] = []
        for kind in ServerKeyKind.allCases {
            guard let phase = phase(kind, at: now) else { continue }
            for key in keys.withLock({ $0[kind] ?? [] }) {
                let state: ServerKeyInfo.State
                if key.stored.keyID == phase.current.stored.keyID {
                    state = .current
                } else if phase.next.contains(where: { $0.stored.keyID == key.stored.keyID }) {
                    state = .next
                } else if phase.previous?.stored.keyID == key.stored.keyID {
                    state = .previous
                } else {
                    state = .retired
                }
                let alg = (try? key.signing?.verificationKey.algorithm.rawValue) ?? Sealing.kemName
                infos.append(
                    ServerKeyInfo(
                        kind: kind, keyID: key.stored.keyID, alg: alg ?? Sealing.kemName, state: state,
                        activatesAt: key.stored.activatesAt, createdAt: key.stored.createdAt))
            }
        }
        return infos
    }

    /// Publishes a new next key of `kind`, current after ``overlap``.
    ///
    /// - Parameters:
    ///   - algorithm: a response key's algorithm; the current key's by default.
    ///   - tlsKey: the next TLS key (a P-256 key clients pin already, the data directory's backup
    ///     key); a new one when `nil`.
    /// - Returns: the new key ID.
    /// - Throws: `forbidden` when a next key is published already.
    public func rotate(
        _ kind: ServerKeyKind, actor: String, algorithm: SignatureAlgorithm? = nil, tlsKey: SigningKey? = nil
    ) async throws -> String {
        let now = clock.now()
        let stored: StoredServerKey
        switch kind {
        case .response:
            let current = try phase(.response, at: now)?.current.signing?.verificationKey.algorithm
            stored = try Self.stored(
                kind, signing: try SigningKey.generate(algorithm ?? current ?? .ed25519), activatesAt: now + overlap,
                now: now)
        case .sealing:
            stored = try Self.stored(
                kind, sealing: try SealingPrivateKey.generate(), activatesAt: now + overlap, now: now)
        case .tls:
            guard phase(.tls, at: now) != nil else {
                throw SigilError(
                    .forbidden,
                    "this server serves a certificate of its own (--cert): its TLS key is not Sigil's to rotate")
            }
            stored = try Self.stored(
                kind, signing: try tlsKey ?? SigningKey.generate(.ecdsaP256SHA256), activatesAt: now + overlap,
                now: now)
        }
        try await directory.addServerKey(
            stored, onlyIfFirst: false,
            audit: [
                AuditEntry(
                    time: now, action: .serverKeyRotated, keyID: stored.keyID, actor: actor,
                    clientAddress: AuditContext.clientAddress,
                    reason: "\(kind.rawValue) key, current from \(OperatorText.time(now + overlap))")
            ])
        try await reload()
        return stored.keyID
    }

    /// Makes the next key of `kind` current now, ending the overlap early.
    ///
    /// - Returns: the key ID promoted.
    public func promote(_ kind: ServerKeyKind, actor: String) async throws -> String {
        let now = clock.now()
        let keyID = try await directory.promoteServerKey(
            kind, at: now,
            audit: [
                AuditEntry(
                    time: now, action: .serverKeyPromoted, actor: actor, clientAddress: AuditContext.clientAddress,
                    reason: "\(kind.rawValue) key")
            ])
        try await reload()
        return keyID
    }
}
