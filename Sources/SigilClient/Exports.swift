// What an app names beside SigilClient's own types: keys, errors, pins and wire messages (SigilCore),
// and the request and response types (swift-http-types). `import SigilClient` is the one import an
// app writes.
@_exported import HTTPTypes
@_exported import SigilCore
