import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles
import Testing

/// JSON values, decodable and sendable, for vector files.
enum JSON: Sendable, Decodable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSON])
    case object([String: JSON])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }

    subscript(_ key: String) -> JSON? { if case .object(let value) = self { return value[key] } else { return nil } }
    var string: String? { if case .string(let value) = self { return value } else { return nil } }
    var int: Int64? { if case .number(let value) = self { return Int64(value) } else { return nil } }
    var bool: Bool? { if case .bool(let value) = self { return value } else { return nil } }
    var array: [JSON] { if case .array(let value) = self { return value } else { return [] } }
    var isNull: Bool { if case .null = self { return true } else { return false } }
}

/// One case of a vector file, named in test output.
struct VectorCase: CustomTestStringConvertible, Sendable {
    let name: String
    let json: JSON
    var testDescription: String { name }
    subscript(_ key: String) -> JSON? { json[key] }
}

/// Loads the vectors copied into `Tests/Vectors`.
enum Vectors {
    static let directory = TestPaths.tests.appendingPathComponent("Vectors")

    static func file(_ name: String) -> JSON {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
            let json = try? JSONDecoder().decode(JSON.self, from: data)
        else { return .null }
        return json
    }

    static func cases(_ name: String, _ key: String = "cases", nameKey: String = "id") -> [VectorCase] {
        (file(name)[key]?.array ?? []).enumerated().map { index, json in
            VectorCase(name: json[nameKey]?.string ?? "\(key)[\(index)]", json: json)
        }
    }

    static func keyFile(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent("keys").appendingPathComponent(name)))
    }

    /// A copy of the vector key file `name`, mode 0600, for the commands that refuse a private key or
    /// secret others may read (a checkout's files are 0644).
    static func privateKeyCopy(_ name: String) throws -> String {
        let path = TestServer.temporaryDirectory() + "-" + name
        try SecureFile.write(try keyFile(name), to: path)
        return path
    }
}
