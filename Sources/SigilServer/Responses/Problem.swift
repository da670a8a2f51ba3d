import SigilCore

/// RFC 9457 problem+json for a refused request (PROTOCOL.md section 4).
public enum Problem {
    /// The media type.
    public static let contentType = "application/problem+json"

    /// The JSON body for `error`.
    ///
    /// - Parameters:
    ///   - serverTime: the server's Unix time, so a client can re-sync its clock.
    ///   - includeSignatureBase: the debug option: adds the server's computed `signatureBase` when known.
    public static func body(for error: SigilError, serverTime: Int64, includeSignatureBase: Bool = false) -> [UInt8] {
        var json = "{\"type\":\"urn:sigil:error:\(error.code.rawValue)\""
        json += ",\"title\":" + quoted(error.code.title)
        json += ",\"status\":\(error.code.httpStatus)"
        json += ",\"detail\":" + quoted(error.detail)
        json += ",\"code\":\"\(error.code.rawValue)\""
        json += ",\"serverTime\":\(serverTime)"
        if includeSignatureBase, let base = error.signatureBase {
            json += ",\"signatureBase\":" + quoted(base)
        }
        json += "}"
        return Array(json.utf8)
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
