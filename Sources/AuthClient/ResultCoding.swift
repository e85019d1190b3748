import AuthProtocol

/// A call's params as JSON, from the protocol's Codable types.
func encodeParams(_ params: some Encodable) throws(AuthClientError) -> JSONValue {
    do { return try JSONValueEncoder().encode(params) } catch {
        throw .protocolViolation("cannot encode params: \(error)")
    }
}

/// A call's result as the protocol's type: what the daemon sent and this
/// client cannot read is a protocol violation, named by the method.
func decodeResult<Result: Decodable>(_ type: Result.Type, of method: String, from json: JSONValue) throws(AuthClientError) -> Result {
    do {
        return try JSONValueDecoder().decode(type, from: json)
    } catch {
        throw .protocolViolation("the result of \(method): \(error)")
    }
}
