#!/usr/bin/env python3
"""Gathers the real-program corpus (tests/corpus/programs/cases.txt).

Runs real programs on this machine so that they fail with a credential in play, against
servers this script starts on 127.0.0.1 (or ports nothing listens on), with secrets generated
afresh for every case, and records what each program printed, byte for byte. The format of
the file it writes is described at the top of that file (see HEADER below).

It installs nothing. It needs, already installed:
  Debian: postgresql (initdb, pg_ctl, psql, pg_dump, createdb), postgresql-client,
          mariadb-server, mariadb-client, redis-server, redis-tools, curl, wget, git,
          p7zip-full, zip, unzip, openssl, apache2-utils (htpasswd), openjdk-17-jdk-headless
          (java, javac, keytool), libpostgresql-jdbc-java, sshpass, openssh-client, rsync,
          lftp, tnftp (ftp), golang-go, gnupg, make, swaks, ldap-utils, mosquitto-clients, jq, msmtp,
          ruby, restic, php-cli, php-mysql, php-pgsql, redis-tools,
          libdbd-mariadb-perl, nodejs, npm, python3, libspring-context-java
          (Spring Framework 4.3 with its beans, core, expression and aop jars)
  PyPI:   requests, httpx, SQLAlchemy, psycopg2-binary, PyMySQL, redis, rich,
          better_exceptions, pydantic, PyYAML, pytest, awscli, moto[server], loguru,
          stackprinter (run it with the Python that has them, e.g. a venv's)
  npm:    pg, axios, mysql2, ioredis (in the directory named by CORPUS_NODE_MODULES, default
          /tmp/corpus-npm/node_modules)

Run as root (PostgreSQL's tools then run as the `postgres` account):
    python3 tests/corpus/programs/gather.py [OUTPUT]        (default: cases.txt next to it)
CORPUS_ONLY=<text>[,<text>…] runs only the cases whose id contains one of them (with
CORPUS_MERGE=1, they replace their namesakes in the existing file and the other cases stay);
the servers a case needs (PostgreSQL, MariaDB, Redis, moto) start only when it runs; CORPUS_DEBUG=<dir> writes every
case's script and raw output there. A case whose output holds none of its secrets (the
program masked it, or failed some other way) is left out, with a line on stderr.

Case ids are `<template>.<secret shape>` and do not change from one gathering to the next,
so the known misses (missed.txt) keep their keys; re-gathering draws new secrets, so the
test (tests/integration/program_corpus) then says which misses changed, and
CORPUS_WRITE_MISSED=1 rewrites the file. It is not run in CI; the file it writes is read by
that test.
"""

import base64
import json
import os
import random
import secrets as rnd
import shlex
import shutil
import socket
import socketserver
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_MODULES = os.environ.get("CORPUS_NODE_MODULES", "/tmp/corpus-npm/node_modules")
TAIL = 8192  # bytes kept of a stream, as crontap-run's tail would keep its end
SYSRAND = random.SystemRandom()

# ---------------------------------------------------------------------------------------
# Secrets: fresh for every case, in many shapes.

B62 = string.ascii_letters + string.digits
# Words of five letters or more (the test checks each word of a passphrase on its own),
# uncommon enough not to occur in programs' own messages.
WORDS = """saffron quokka lantern gravel obsidian marmalade tundra pelican zephyr walnut
cobalt juniper thimble nectar basalt falcon meadow quartz sorrel tamarind vellum wombat
yarrow almond bramble cinder dapple emberly fennel gossamer hemlock indigo jasper kelpie
lichen mosaic nutmeg oriole paprika quiver russet spindle trellis umber vortex willow
xylophone yonder zither anchovy biscuit cactus dolphin eclipse fjords granite harbour
iguana jackal kumquat lobster mango narwhal octopus pumpkin quince radish sequoia""".split()
SHAPES = ["base62", "hex", "punct", "passphrase", "urlhostile", "vendor", "jwt", "aws", "wordpunct"]


def b62(n):
    return "".join(SYSRAND.choice(B62) for _ in range(n))


def secret(shape):
    """A fresh secret of the given shape."""
    if shape == "base62":
        return b62(SYSRAND.randint(16, 32))
    if shape == "hex":
        return rnd.token_hex(SYSRAND.choice([16, 20, 32]))
    if shape == "punct":  # P@ss!w0rd#… style
        alphabet = B62 + "!#%^*-_+=.,~"
        body = "".join(SYSRAND.choice(alphabet) for _ in range(SYSRAND.randint(12, 20)))
        return SYSRAND.choice(["P@ss!", "Pa55#", "Sup3r!", "Adm1n%"]) + body
    if shape == "passphrase":  # words with spaces
        return " ".join(SYSRAND.sample(WORDS, 4))
    if shape == "urlhostile":  # characters a URL must escape: @ / :
        parts = [b62(SYSRAND.randint(8, 12)) for _ in range(3)]
        return f"{parts[0]}@{parts[1]}/{parts[2]}:{b62(3)}"
    if shape == "vendor":  # a made-up vendor prefix before a random body
        prefix = "".join(SYSRAND.choice(string.ascii_lowercase) for _ in range(3))
        return prefix + SYSRAND.choice(["_", "-"]) + b62(SYSRAND.randint(28, 40))
    if shape == "jwt":
        head = {"alg": "HS256", "typ": "JWT", "kid": b62(8)}
        claims = {"sub": b62(10), "iat": SYSRAND.randint(1700000000, 1800000000)}
        enc = lambda o: base64.urlsafe_b64encode(json.dumps(o).encode()).rstrip(b"=").decode()
        sig = base64.urlsafe_b64encode(rnd.token_bytes(32)).rstrip(b"=").decode()
        return f"{enc(head)}.{enc(claims)}.{sig}"
    if shape == "aws":  # a secret access key's shape (40 characters of base64)
        return "".join(SYSRAND.choice(B62 + "+/") for _ in range(40))
    if shape == "wordpunct":  # word-like, with punctuation
        w = SYSRAND.sample(WORDS, 2)
        return f"{w[0].capitalize()}-{w[1]}{SYSRAND.randint(10, 99)}!{SYSRAND.choice('#%&*')}"
    raise ValueError(shape)


def aws_key_id():
    return "AKIA" + "".join(SYSRAND.choice(string.ascii_uppercase + "234567") for _ in range(16))


def b64(text):
    return base64.b64encode(text.encode()).decode()


# ---------------------------------------------------------------------------------------
# Loopback servers.


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HTTP401(BaseHTTPRequestHandler):
    """Asks for credentials and refuses every request."""

    protocol_version = "HTTP/1.1"

    def reply(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = b'{"error":"invalid credentials"}\n'
        self.send_response(401, "Unauthorized")
        self.send_header("WWW-Authenticate", 'Basic realm="corpus"')
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = reply

    def log_message(self, *args):
        pass


class LineServer(socketserver.StreamRequestHandler):
    greeting = b""

    def handle(self):
        try:
            self.wfile.write(self.greeting)
            while True:
                line = self.rfile.readline()
                if not line:
                    return
                out = self.answer(line.decode("latin-1").rstrip("\r\n"))
                if out is None:
                    return
                self.wfile.write(out.encode("latin-1"))
        except (ConnectionError, OSError):
            pass


class FTP(LineServer):
    greeting = b"220 corpus FTP ready\r\n"

    def answer(self, line):
        verb = line.split(" ")[0].upper()
        if verb == "USER":
            return "331 Password required\r\n"
        if verb == "PASS":
            return "530 Login incorrect.\r\n"
        if verb == "QUIT":
            self.wfile.write(b"221 Goodbye.\r\n")
            return None
        if verb in ("AUTH", "FEAT", "OPTS", "SYST", "EPSV", "PWD"):
            return "502 Command not implemented.\r\n"
        return "530 Please login with USER and PASS.\r\n"


class SMTP(LineServer):
    greeting = b"220 corpus ESMTP ready\r\n"
    pending = 0

    def answer(self, line):
        if self.pending:
            self.pending -= 1
            if self.pending:
                return "334 UGFzc3dvcmQ6\r\n"
            return "535 5.7.8 Authentication credentials invalid\r\n"
        words = line.split(" ")
        verb = words[0].upper()
        if verb == "EHLO":
            return "250-corpus\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n"
        if verb == "HELO":
            return "250 corpus\r\n"
        if verb == "AUTH":
            mech = words[1].upper() if len(words) > 1 else ""
            if mech == "PLAIN" and len(words) > 2:
                return "535 5.7.8 Authentication credentials invalid\r\n"
            if mech == "PLAIN":
                self.pending = 1
                return "334 \r\n"
            if mech == "LOGIN":
                self.pending = 2 if len(words) <= 2 else 1
                return "334 VXNlcm5hbWU6\r\n" if len(words) <= 2 else "334 UGFzc3dvcmQ6\r\n"
            return "504 5.5.4 Unrecognized authentication type\r\n"
        if verb == "QUIT":
            self.wfile.write(b"221 Bye\r\n")
            return None
        if verb == "STARTTLS":
            return "454 4.7.0 TLS not available\r\n"
        return "530 5.7.0 Authentication required\r\n"


class SMTPLogin(SMTP):
    """Offers AUTH LOGIN only, so that clients answer its two 334 prompts line by line."""

    def answer(self, line):
        if line.split(" ")[0].upper() == "EHLO":
            return "250-corpus\r\n250-AUTH LOGIN\r\n250 8BITMIME\r\n"
        return super().answer(line)


class LDAP(socketserver.BaseRequestHandler):
    """Answers any LDAP bind request with invalidCredentials (49), then waits for the unbind."""

    def handle(self):
        try:
            self.request.settimeout(5)
            if not self.request.recv(65536):
                return
            # BindResponse, message id 1: resultCode 49, empty matchedDN and diagnostic.
            self.request.sendall(bytes.fromhex("300c02010161070a013104000400"))
            self.request.recv(65536)
        except OSError:
            pass


class IMAP(LineServer):
    greeting = b"* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] corpus ready\r\n"
    tag = None

    def answer(self, line):
        if self.tag:
            tag, self.tag = self.tag, None
            return f"{tag} NO [AUTHENTICATIONFAILED] Invalid credentials\r\n"
        words = line.split(" ")
        tag = words[0]
        verb = words[1].upper() if len(words) > 1 else ""
        if verb == "CAPABILITY":
            return f"* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n{tag} OK done\r\n"
        if verb == "LOGIN":
            return f"{tag} NO [AUTHENTICATIONFAILED] Invalid credentials\r\n"
        if verb == "AUTHENTICATE":
            if len(words) > 3:
                return f"{tag} NO [AUTHENTICATIONFAILED] Invalid credentials\r\n"
            self.tag = tag
            return "+ \r\n"
        if verb == "LOGOUT":
            self.wfile.write(f"* BYE\r\n{tag} OK bye\r\n".encode())
            return None
        return f"{tag} BAD unknown command\r\n"


class POP3(LineServer):
    greeting = b"+OK corpus POP3 ready\r\n"

    def answer(self, line):
        verb = line.split(" ")[0].upper()
        if verb == "CAPA":
            return "+OK\r\nUSER\r\n.\r\n"
        if verb == "USER":
            return "+OK\r\n"
        if verb in ("PASS", "APOP"):
            return "-ERR [AUTH] Invalid credentials\r\n"
        if verb == "AUTH":
            return "-ERR [AUTH] Invalid credentials\r\n"
        if verb == "QUIT":
            self.wfile.write(b"+OK bye\r\n")
            return None
        return "-ERR unknown command\r\n"


class Threading(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(handler, cls=Threading):
    server = cls(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


class Servers:
    """Everything the cases talk to, on 127.0.0.1, torn down at the end."""

    def __init__(self, root):
        self.root = root
        self.procs = []
        self.http = serve(HTTP401, ThreadingHTTPServer)
        self.ftp = serve(FTP)
        self.smtp = serve(SMTP)
        self.imap = serve(IMAP)
        self.pop3 = serve(POP3)
        self.smtp_login = serve(SMTPLogin)
        self.ldap = serve(LDAP)
        self.closed = free_port()  # nothing listens here
        # PostgreSQL, MariaDB, Redis and moto start when a case first asks for their port
        # (see __getattr__), so a run of some cases needs only their servers installed.

    LAZY = {"pg": "start_postgres", "pg_dir": "start_postgres", "pg_sock": "start_postgres",
            "pg_password": "start_postgres", "my": "start_mariadb", "my_dir": "start_mariadb",
            "my_sock": "start_mariadb", "my_password": "start_mariadb", "redis": "start_redis",
            "redis_password": "start_redis", "moto": "start_moto"}

    def __getattr__(self, name):
        start = Servers.LAZY.get(name)
        if start is None:
            raise AttributeError(name)
        getattr(self, start)()
        return self.__dict__[name]

    def start_postgres(self):
        self.pg = free_port()
        self.pg_dir = os.path.join(self.root, "pg")
        self.pg_sock = os.path.join(self.root, "pgsock")
        os.makedirs(self.pg_sock)
        shutil.chown(self.root, "postgres")
        shutil.chown(self.pg_sock, "postgres")
        self.pg_password = b62(20)  # the real one; cases use others
        pwfile = os.path.join(self.root, "pgpw")
        with open(pwfile, "w") as f:
            f.write(b62(20))
        shutil.chown(pwfile, "postgres")
        as_pg = ["runuser", "-u", "postgres", "--"]
        run(as_pg + ["initdb", "-D", self.pg_dir, "-U", "postgres", "--pwfile", pwfile,
                     "--auth-host=scram-sha-256", "--auth-local=trust"])
        run(as_pg + ["pg_ctl", "-D", self.pg_dir, "-w", "-l", os.path.join(self.root, "pg.log"),
                     "-o", f"-p {self.pg} -k {self.pg_sock} -c listen_addresses=127.0.0.1", "start"])
        self.procs.append(lambda: run(as_pg + ["pg_ctl", "-D", self.pg_dir, "-m", "immediate", "stop"]))
        sql = f"""CREATE ROLE app LOGIN PASSWORD '{self.pg_password}';
CREATE DATABASE app OWNER app;"""
        run(["psql", "-h", self.pg_sock, "-p", str(self.pg), "-U", "postgres", "-c", sql.split(";")[0]])
        run(["psql", "-h", self.pg_sock, "-p", str(self.pg), "-U", "postgres", "-c", sql.split(";")[1]])
        run(["psql", "-h", self.pg_sock, "-p", str(self.pg), "-U", "app", "-d", "app", "-c",
             "CREATE TABLE api_keys (id serial PRIMARY KEY, owner text NOT NULL, api_token text UNIQUE);"
             "CREATE TABLE users (name text PRIMARY KEY, password_hash text NOT NULL CHECK (length(password_hash) = 60));"])

    def start_mariadb(self):
        self.my = free_port()
        self.my_dir = os.path.join(self.root, "my")
        self.my_sock = os.path.join(self.root, "my.sock")
        run(["mariadb-install-db", "--user=root", f"--datadir={self.my_dir}",
             "--auth-root-authentication-method=socket", "--skip-test-db"])
        proc = subprocess.Popen(["mariadbd", "--no-defaults", "--user=root", f"--datadir={self.my_dir}",
                                 f"--port={self.my}", "--bind-address=127.0.0.1", f"--socket={self.my_sock}",
                                 f"--pid-file={self.root}/my.pid", "--skip-log-bin"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(lambda: (proc.terminate(), proc.wait()))
        self.my_password = b62(20)
        for _ in range(100):
            if os.path.exists(self.my_sock):
                break
            time.sleep(0.1)
        time.sleep(0.5)
        run(["mariadb", f"--socket={self.my_sock}", "-uroot", "-e",
             f"CREATE DATABASE app; CREATE USER app@'%' IDENTIFIED BY '{self.my_password}';"
             "GRANT ALL ON app.* TO app@'%';"
             "CREATE TABLE app.api_keys (id int auto_increment primary key, owner varchar(40) not null,"
             " api_token varchar(200) unique);"])

    def start_redis(self):
        self.redis = free_port()
        self.redis_password = b62(24)
        conf = os.path.join(self.root, "redis.conf")
        with open(conf, "w") as f:
            f.write(f"port {self.redis}\nbind 127.0.0.1\nsave \"\"\nappendonly no\n"
                    f"requirepass {self.redis_password}\ndir {self.root}\n")
        proc = subprocess.Popen(["redis-server", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(lambda: (proc.terminate(), proc.wait()))
        wait_port(self.redis)

    def start_moto(self):
        self.moto = free_port()
        env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="0")
        proc = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(self.moto)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(lambda: (proc.terminate(), proc.wait()))
        wait_port(self.moto)

    def stop(self):
        for stop in reversed(self.procs):
            try:
                stop()
            except Exception as e:  # keep stopping the others
                print("stop:", e, file=sys.stderr)


def wait_port(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


# ---------------------------------------------------------------------------------------
# The corpus file.

HEADER = """\
# Real programs failing with credentials in play: what they printed, byte for byte.
#
# Gathered by gather.py (next to this file) on {date}: every program ran on this machine
# against servers on 127.0.0.1 (PostgreSQL, MariaDB, Redis, moto, and small servers that ask
# for credentials and refuse them: HTTP, FTP, SMTP, IMAP, POP3, LDAP) or against a port nothing
# listens on, with secrets generated for that case alone. Do not edit by hand; re-gather.
#
# Format: lines starting with `#` before the first case are comments. A case starts with
#   === <id>
# followed by fields, one a line:
#   program: <the program or library that printed the output>
#   exit: <its exit status, or the shell's>
#   secret <name>: <value>     one line per credential in play (the form it was printed in:
#                              as given, percent-encoded, or base64 as a protocol sent it)
#   command:                   the bash script that was run (in an empty directory), then
#   stdout:                    what it printed on standard output, then
#   stderr:                    what it printed on standard error.
# A block field (command, stdout, stderr) is followed by its lines, each prefixed with `|`;
# the text is those lines joined by newlines (so `|a` `|b` `|` is "a\\nb\\n", `|a` alone is "a"
# with no final newline, and no line at all is empty). In values and lines, bytes other than
# printable text are escaped: `\\\\` is a backslash, `\\t` a tab, `\\r` a carriage return and
# `\\xNN` any other byte (control characters, bytes that are not UTF-8, and the line-like
# characters NEL, U+2028 and U+2029 written as their UTF-8 bytes). A stream longer than
# {tail} bytes keeps only its last whole lines within {tail} bytes, as the end of a real
# tail would, and the case says so with a field `cut <stream>: <bytes left out>`.
"""


def escape(data):
    """Bytes as one escaped text, newlines kept."""
    text = data.decode("utf-8", errors="surrogateescape")
    out = []
    for ch in text:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\n":
            out.append("\n")
        elif 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8
            out.append(f"\\x{o - 0xDC00:02x}")
        elif o < 0x20 or o == 0x7F or 0x80 <= o <= 0x9F or o in (0x2028, 0x2029):
            out.append("".join(f"\\x{b:02x}" for b in ch.encode()))
        else:
            out.append(ch)
    return "".join(out)


def block(name, data):
    lines = [f"{name}:"]
    if data:
        lines += ["|" + line for line in escape(data).split("\n")]
    return lines


def tail(data):
    """The last whole lines of `data` within TAIL bytes, and how many bytes were left out."""
    if len(data) <= TAIL:
        return data, 0
    rest = data[-TAIL:]
    nl = rest.find(b"\n")
    rest = rest[nl + 1:] if nl >= 0 else rest
    return rest, len(data) - len(rest)


# ---------------------------------------------------------------------------------------
# Running a case.


class Case:
    def __init__(self, cid, program, script, secrets, files=None, timeout=30):
        self.id = cid
        self.program = program
        self.script = script
        self.secrets = secrets  # [(name, value)]
        self.files = files or {}
        self.timeout = timeout


def forms(value):
    """The forms a program may print a secret in: as given, and percent-encoded."""
    out = [("", value)]
    for quoted in (urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value, safe="")):
        if quoted != value and all(quoted != v for _, v in out):
            out.append((" (percent-encoded)", quoted))
    return out


def in_play(form, raw):
    """Whether the output holds the secret, whole or in part: eight characters of it in a
    row, or one of a passphrase's words."""
    if form.encode() in raw:
        return True
    pieces = [form[i:i + 8] for i in range(len(form) - 7)]
    if " " in form:
        pieces += [w for w in form.split(" ") if len(w) >= 6]
    return any(p.encode() in raw for p in pieces)


def execute(case, workdir):
    os.makedirs(workdir)
    for name, content in case.files.items():
        with open(os.path.join(workdir, name), "w") as f:
            f.write(content)
    env = {
        "PATH": os.path.dirname(sys.executable) + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin:/usr/lib/jvm/default-java/bin",
        "HOME": workdir,
        "LANG": "C.UTF-8",
        "NODE_PATH": NODE_MODULES,
        "TERM": "dumb",
        "GOCACHE": "/tmp/corpus-gocache",
        "GOPATH": "/tmp/corpus-gopath",
        "GOFLAGS": "-mod=mod",
        "GO111MODULE": "off",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    try:
        proc = subprocess.run(["bash", "-c", case.script], cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=case.timeout)
        return proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout or b"", e.stderr or b""


def record(case, status, stdout, stderr, warn):
    raw = stdout + stderr
    kept = []
    for name, value in case.secrets:
        # The secret as given (whole or in part), and an encoded form only where it was
        # printed whole, so that one printing is one credential.
        whole = [(name + suffix, form) for suffix, form in forms(value) if form.encode() in raw]
        found = bool(whole)
        if whole:
            kept += whole
        elif in_play(value, raw):
            kept.append((name, value))
            found = True
        if not found:
            warn(f"{case.id}: secret {name} not in the output")
    if not kept:
        return None
    stdout, cut_out = tail(stdout)
    stderr, cut_err = tail(stderr)
    lines = [f"=== {case.id}", f"program: {case.program}", f"exit: {status}"]
    lines += [f"secret {name}: {escape(value.encode())}" for name, value in kept]
    if cut_out:
        lines.append(f"cut stdout: {cut_out}")
    if cut_err:
        lines.append(f"cut stderr: {cut_err}")
    lines += block("command", case.script.encode())
    lines += block("stdout", stdout)
    lines += block("stderr", stderr)
    return "\n".join(lines)


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "cases.txt")
    only = os.environ.get("CORPUS_ONLY")
    wanted = (lambda cid: any(part in cid for part in only.split(","))) if only else None
    root = tempfile.mkdtemp(prefix="corpus-")
    os.chmod(root, 0o755)
    servers = Servers(root)
    import cases  # the case table, next to this file

    blocks, warnings, programs = [], [], set()
    try:
        for case in cases.all_cases(servers, wanted):
            status, stdout, stderr = execute(case, os.path.join(root, "run", case.id))
            text = record(case, status, stdout, stderr, warnings.append)
            debug = os.environ.get("CORPUS_DEBUG")  # a directory for every case's raw output
            if debug:
                os.makedirs(debug, exist_ok=True)
                with open(os.path.join(debug, case.id), "wb") as f:
                    f.write(case.script.encode() + b"\n--- stdout\n" + stdout + b"\n--- stderr\n" + stderr)
            if text is None:
                print(f"dropped {case.id}: no secret in its output", file=sys.stderr)
                continue
            programs.add(case.program)
            blocks.append(text)
            print(f"ok {case.id}", file=sys.stderr)
    finally:
        servers.stop()
        shutil.rmtree(root, ignore_errors=True)
    for w in warnings:
        print("warning:", w, file=sys.stderr)
    header = HEADER.format(date=time.strftime("%Y-%m-%d", time.gmtime()), tail=TAIL)
    if only and os.environ.get("CORPUS_MERGE"):
        # Replace the cases of this run in the existing file, keep all others.
        with open(out_path) as f:
            old = f.read()
        header, _, rest = old.partition("\n=== ")
        header += "\n"
        kept = ["=== " + b.rstrip("\n") for b in ("\n=== " + rest).split("\n=== ")[1:]
                if not wanted(b.split("\n", 1)[0])]
        blocks = kept + blocks
    with open(out_path, "w") as f:
        f.write(header + "\n" + "\n\n".join(blocks) + "\n")
    print(f"{len(blocks)} cases from {len(programs)} programs written to {out_path}", file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
