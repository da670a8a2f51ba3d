#!/usr/bin/env python3
"""An impostor holding a server's TLS key: Python's standard library HTTPS server answering each
path with a status, fields and body given to it.

Usage: impostor.py CERT KEY ANSWERS PORT. ANSWERS is a JSON file {path: {"status": n, "headers":
{name: value}, "body": text}}; any other path gets 404. It listens on 127.0.0.1:PORT.
"""
import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

certificate, key, answers_path, port = sys.argv[1:5]
with open(answers_path) as f:
    answers = json.load(f)


class Impostor(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        answer = answers.get(self.path.split("?")[0], {"status": 404, "headers": {}, "body": ""})
        body = answer["body"].encode()
        self.send_response(answer["status"])
        for name, value in answer["headers"].items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = ThreadingHTTPServer(("127.0.0.1", int(port)), Impostor)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.minimum_version = ssl.TLSVersion.TLSv1_3
context.load_cert_chain(certificate, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
# Port 0 is one the system picks: the banner says which, once it listens.
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
