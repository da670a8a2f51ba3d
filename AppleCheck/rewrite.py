#!/usr/bin/env python3
"""Copies Swift files with Apple's availability spellings rewritten to custom availability domains,
which the Linux compiler enforces (it ignores `@available(iOS 26, …)` and `#available(iOS 26, …)`).

Usage: rewrite.py MIN_IOS OUT_DIR FILE…   (MIN_IOS: the package's declared minimum, e.g. 17.0)

Every Apple version above the minimum that any of the files names becomes a domain, `Apple<major>`
or `Apple<major>_<minor>` (iOS 18 → Apple18, iOS 17.4 → Apple17_4). A declaration or check naming a
version takes the domain of that version and of every lower one in the ladder, so code inside
`#available(iOS 26, *)` may also use an iOS 18 API, as on a device. A version named only for macOS,
tvOS, watchOS, visionOS or Mac Catalyst is read as the iOS version of the same release. At or below
the minimum nothing changes: such an attribute or check always holds, as the compiler here reads it.

Module plumbing is rewritten too, because the check compiles everything as one module (custom
domains declared on the command line do not cross module boundaries in Swift 6.3): the imports of
the stubbed frameworks and of Sigil's own client modules are dropped, and `canImport` of a stubbed
framework is true. Prints the domains, one a line, on standard output.
"""
import os
import re
import sys

STUBBED = {"Crypto", "CryptoKit", "Security", "DeviceCheck", "LocalAuthentication", "Synchronization", "SwiftUI",
           "AppleFoundation", "os", "SigilCore", "SigilFiles", "SigilClient", "SigilOpenAPIClient", "SigilTesting"}
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal)\s+)?import\s+(?:\w+\s+)?(\w+)(?:\.\w+)*\s*$")
EXPORTED = re.compile(r"^\s*@_exported\s+import\s+(\w+)", re.M)
CAN_IMPORT = re.compile(r"canImport\((\w+)\)")
ATTRIBUTE = re.compile(r"@available\(([^()]*)\)")
CHECK = re.compile(r"#(available|unavailable)\(([^()]*)\)")
PLATFORM = re.compile(r"^(iOS|macOS|tvOS|watchOS|visionOS|macCatalyst|iPadOS)\s+(\d+)(?:\.(\d+))?(?:\.\d+)?$")


def to_ios(platform, major, minor):
    """The iOS release of the same year: macOS 14/15 are iOS 17/18, watchOS 10/11 are 17/18,
    visionOS 1/2 are 17/18; from 26 every platform shares the number."""
    if platform in ("iOS", "iPadOS", "macCatalyst", "tvOS") or major >= 26:
        return (major, minor)
    if platform == "macOS":
        return (major + 3, minor) if major >= 11 else (major, minor)
    if platform == "watchOS":
        return (major + 7, minor)
    if platform == "visionOS":
        return (major + 16, minor)
    return (major, minor)


def versions(arguments):
    """The iOS versions an availability argument list names, or None when it is not the short form
    (`@available(*, deprecated)`, `@available(iOS, unavailable)`…)."""
    found = []
    for part in (p.strip() for p in arguments.split(",")):
        if part == "*":
            continue
        match = PLATFORM.match(part)
        if not match:
            return None
        found.append(to_ios(match.group(1), int(match.group(2)), int(match.group(3) or 0)))
    return found or None


def domain(version):
    return f"Apple{version[0]}" if version[1] == 0 else f"Apple{version[0]}_{version[1]}"


def main():
    minimum = tuple(int(x) for x in (sys.argv[1].split(".") + ["0"])[:2])
    out, files = sys.argv[2], sys.argv[3:]
    texts = {path: open(path, encoding="utf-8").read() for path in files}
    ladder = set()
    for text in texts.values():
        for match in list(ATTRIBUTE.finditer(text)) + [m for m in CHECK.finditer(text)]:
            found = versions(match.group(match.lastindex))
            ladder.update(v for v in found or [] if v > minimum)
    ladder = sorted(ladder)

    def needed(found):
        top = max(found)
        return [v for v in ladder if v <= top] if top > minimum else []

    def attribute(match):
        found = versions(match.group(1))
        if not found or not needed(found):
            return match.group(0)
        return " ".join(f"@available({domain(v)})" for v in needed(found))

    def check(match):
        found = versions(match.group(2))
        if not found or not needed(found):
            return match.group(0)
        if match.group(1) == "unavailable":
            return f"#unavailable({domain(max(found))})"
        return ", ".join(f"#available({domain(v)})" for v in needed(found))

    # What `import SigilClient` brings besides SigilClient (its `@_exported import`s of real modules):
    # dropping that import must leave a file seeing what an app's file would.
    exported = sorted({m.group(1) for path, text in texts.items() if "/Sources/SigilClient/" in path
                       for m in EXPORTED.finditer(text)} - STUBBED)
    for index, (path, text) in enumerate(texts.items()):
        lines = []
        for line in text.split("\n"):
            match = IMPORT.match(line)
            if match and match.group(1) == "SigilClient" and exported:
                lines.append("; ".join(f"import {name}" for name in exported))
            else:
                lines.append("" if match and match.group(1) in STUBBED else line)
        text = "\n".join(lines)
        text = CAN_IMPORT.sub(lambda m: "true" if m.group(1) in STUBBED else m.group(0), text)
        text = ATTRIBUTE.sub(attribute, text)
        text = CHECK.sub(check, text)
        # One module: files of the same name in different folders must not collide.
        name = f"{index:03d}-{os.path.basename(path)}"
        with open(os.path.join(out, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    for version in ladder:
        print(domain(version))


if __name__ == "__main__":
    main()
