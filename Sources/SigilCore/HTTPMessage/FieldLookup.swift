import HTTPTypes

// HTTPFields' subscripts build a name index on first use and join values through a generic,
// unspecialized `joined(separator:)`: about 0.3 µs per lookup on the verification path. A request
// carries a handful of fields, so a scan is cheaper; these return what the subscripts return.
extension HTTPFields {
    /// Whether a field named `name` is present (`self[name] != nil`).
    @inlinable
    @_spi(Sigil) public func has(_ name: HTTPField.Name) -> Bool {
        for field in self where field.name == name { return true }
        return false
    }

    /// The value of the fields named `name`, repeated ones joined by ", " (`self[name]`, for any
    /// field but Cookie).
    @inlinable
    @_spi(Sigil) public func value(_ name: HTTPField.Name) -> String? {
        var result: String?
        for field in self where field.name == name {
            if let joined = result {
                result = joined + ", " + field.value
            } else {
                result = field.value
            }
        }
        return result
    }

    /// The values of the fields named `name`, in order (`self[values: name]`).
    @inlinable
    @_spi(Sigil) public func values(_ name: HTTPField.Name) -> [String] {
        var result: [String] = []
        for field in self where field.name == name { result.append(field.value) }
        return result
    }
}
