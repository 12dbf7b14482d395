#!/usr/bin/env python3
"""Heartbeat receiver for packaging/test-release.sh.

Listens on a free port of 127.0.0.1, writes the port to PORTFILE once it is listening, and
appends one line per connection to LOG (opened for each line, so the test may empty it
between runs):

  test-receiver.py http PORTFILE LOG
      answers every GET with 200 and logs "<path>\t<decoded msg parameter>\t<User-Agent>";
      a POST (a Healthchecks ping with its log) the same, with "<the body's length> bytes"
      in place of the msg parameter
  test-receiver.py https PORTFILE LOG CERT KEY
      the same over TLS, with the certificate chain CERT and its key KEY (PEM files)
  test-receiver.py raw PORTFILE LOG
      logs the first bytes the client sends, in hex, and hangs up: enough to see that a
      TLS client got as far as sending its ClientHello, with no certificate involved
"""

import http.server
import os
import socket
import socketserver
import ssl
import sys
import urllib.parse


def log(path, line):
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def main():
    mode, portfile, logfile = sys.argv[1:4]
    if mode not in ("http", "https", "raw"):
        sys.exit(f"unknown mode {mode}")

    class Ping(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            msg = query.get("msg", [""])[0]
            # Logged before answering, so the line is there once crontap-run has its answer.
            log(logfile, "\t".join([self.path, msg, self.headers.get("User-Agent", "")]))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            log(logfile, "\t".join([self.path, f"{len(body)} bytes", self.headers.get("User-Agent", "")]))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    class Raw(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.settimeout(5)
            try:
                data = self.request.recv(16)
            except socket.timeout:
                data = b""
            log(logfile, data.hex())

    handler = Raw if mode == "raw" else Ping
    server = socketserver.TCPServer(("127.0.0.1", 0), handler)
    if mode == "https":
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[4], sys.argv[5])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(portfile + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    # Renamed into place so the test never reads a half-written port.
    os.rename(portfile + ".tmp", portfile)
    server.serve_forever()


if __name__ == "__main__":
    main()
