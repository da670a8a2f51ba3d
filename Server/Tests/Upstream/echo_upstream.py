#!/usr/bin/env python3
"""A backend no one here wrote: Python's standard library HTTP server, echoing what reaches it.

Usage: echo_upstream.py PORT. Every request but GET /__count gets 200 and JSON with its method,
path (as received), headers (lower-case names, each a list of values), body length and SHA-256,
and the body itself when it is short UTF-8. GET /__count answers how many requests reached it.
The answers carry a forged `X-Signature`, which the gateway must replace with its own.
"""
import hashlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

count = 0
lock = threading.Lock()


class Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Signature", "forged-by-upstream")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        global count
        if self.command == "GET" and self.path == "/__count":
            with lock:
                self.answer(200, {"count": count})
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with lock:
            count += 1
        if self.path == "/__sigil-refusal":
            # A hostile backend speaking for the gateway: a refusal that would make a client resend.
            refusal = json.dumps({"code": "timestamp-out-of-window", "status": 401, "serverTime": 0}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/problem+json")
            self.send_header("Content-Length", str(len(refusal)))
            self.end_headers()
            self.wfile.write(refusal)
            return
        headers = {}
        for name, value in self.headers.items():
            headers.setdefault(name.lower(), []).append(value)
        text = None
        if len(body) <= 4096:
            try:
                text = body.decode()
            except UnicodeDecodeError:
                pass
        self.answer(200, {
            "method": self.command,
            "path": self.path,
            "headers": headers,
            "bodyLength": len(body),
            "bodySHA256": hashlib.sha256(body).hexdigest(),
            "body": text,
        })

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = handle_any


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Echo)
    server.daemon_threads = True
    # Port 0 is one the system picks: the banner says which, once it listens.
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()
