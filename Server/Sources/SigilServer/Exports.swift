// Keys, errors, algorithms and wire messages (SigilCore) are what a backend names beside the
// server's own types: `import SigilServer` is the one import it writes for them.
@_exported import SigilCore
