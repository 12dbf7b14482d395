"""The loopback heartbeat receiver the benchmarks ping: it answers 200 `OK` to every GET and
logs nothing. `bench/ping_vs_curl.py` and `bench/overhead.py` import it, and
`bench/protocols.py` builds its recording handler on `Ok` (run as scripts, their folder is on
Python's path)."""

import http.server
import threading


class Ok(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.reply_ok()

    def reply_ok(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *args):
        pass


class Quiet(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # clients closing the connection after the response are expected


def start():
    """A receiver on 127.0.0.1, served from a thread of its own, and the heartbeat URL that
    reaches it. Stop it with `server.shutdown()`."""
    server = Quiet(("127.0.0.1", 0), Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/ping/bench-token"
