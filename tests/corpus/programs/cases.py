"""The case table of gather.py: each template is a real program made to fail with a
credential in play. A template takes the servers, a fresh secret and its shape, and returns
(program, bash script, [(secret name, value)], {file name: content}). Every template runs
once for each of a few shapes (SHAPES rotated, so that every shape meets many programs).
"""

import base64
import shlex

from gather import SHAPES, Case, aws_key_id, b62, b64, secret

q = shlex.quote
TEMPLATES = []


def template(program, shapes=None, count=4):
    def wrap(fn):
        TEMPLATES.append((fn.__name__.replace("_", "-"), program, fn, shapes, count))
        return fn
    return wrap


def pct(value):
    import urllib.parse
    return urllib.parse.quote(value, safe="")


# --- PostgreSQL ------------------------------------------------------------------------

PG_SETX = "set -euxo pipefail\n"


@template("psql")
def psql_setx_pgpassword(s, pw, shape):
    script = PG_SETX + f"PGPASSWORD={q(pw)} psql -h 127.0.0.1 -p {s.pg} -U app -d app -c 'select count(*) from api_keys'\n"
    return script, [("password", pw)]


@template("psql", shapes=["urlhostile", "aws", "urlhostile"], count=3)
def psql_url_password(s, pw, shape):
    # The password pasted into the URL as it is, unescaped, as scripts often do.
    script = f"psql 'postgresql://app:{pw}@127.0.0.1:{s.pg}/app' -c 'select 1'\n"
    return script, [("password", pw)]


@template("psql")
def psql_create_role_echo(s, pw, shape):
    sql = f"CREATE ROLE reporter LOGIN PASSWORD '{pw}' VALID UNTIL 'soon';\n"
    script = f"psql -h {s.pg_sock} -p {s.pg} -U app -d app -v ON_ERROR_STOP=1 --echo-all -f roles.sql\n"
    return script, [("password", pw)], {"roles.sql": sql}


@template("psql")
def psql_alter_identified_by(s, pw, shape):
    # Oracle/MySQL syntax sent to PostgreSQL: the server quotes the statement back.
    sql = f"ALTER USER app IDENTIFIED BY '{pw}';"
    script = f"psql -h {s.pg_sock} -p {s.pg} -U app -d app -v ON_ERROR_STOP=1 -c {q(sql)}\n"
    return script, [("password", pw)]


@template("psql")
def psql_duplicate_token(s, pw, shape):
    sql = (f"INSERT INTO api_keys (owner, api_token) VALUES ('svc', '{pw}');\n"
           f"INSERT INTO api_keys (owner, api_token) VALUES ('svc2', '{pw}');\n")
    script = f"psql -h {s.pg_sock} -p {s.pg} -U app -d app -v ON_ERROR_STOP=1 -f keys.sql\n"
    return script, [("api_token", pw)], {"keys.sql": sql}


@template("psql")
def psql_failing_row(s, pw, shape):
    sql = f"INSERT INTO users (name, password_hash) VALUES ('ops', '{pw}');"
    script = f"psql -h {s.pg_sock} -p {s.pg} -U app -d app -v ON_ERROR_STOP=1 --echo-errors -c {q(sql)}\n"
    return script, [("password", pw)]


@template("pg_dump")
def pg_dump_setx(s, pw, shape):
    script = PG_SETX + (f"export PGPASSWORD={q(pw)}\n"
                        f"pg_dump -h 127.0.0.1 -p {s.pg} -U app app > /tmp/app-$(date +%F).sql\n")
    return script, [("password", pw)]


@template("pg_dump", shapes=["urlhostile", "aws"], count=2)
def pg_dump_url(s, pw, shape):
    script = f"pg_dump --dbname='postgresql://app:{pw}@127.0.0.1:{s.pg}/app' -f backup.sql\n"
    return script, [("password", pw)]


@template("createdb")
def createdb_setx(s, pw, shape):
    script = PG_SETX + f"PGPASSWORD={q(pw)} createdb -h 127.0.0.1 -p {s.pg} -U app reports\n"
    return script, [("password", pw)]


@template("psycopg2")
def psycopg2_dsn(s, pw, shape):
    py = f"""import psycopg2

def main():
    conn = psycopg2.connect("host=127.0.0.1 port={s.pg} dbname=app user=app password='{pw}'")
    conn.close()

main()
"""
    return "python3 job.py\n", [("password", pw)], {"job.py": py}


@template("psycopg2")
def psycopg2_duplicate(s, pw, shape):
    py = f"""import os, psycopg2
conn = psycopg2.connect(host="{s.pg_sock}", port={s.pg}, dbname="app", user="app")
cur = conn.cursor()
token = os.environ["NEW_TOKEN"]
cur.execute("INSERT INTO api_keys (owner, api_token) VALUES (%s, %s)", ("svc", token))
cur.execute("INSERT INTO api_keys (owner, api_token) VALUES (%s, %s)", ("svc", token))
conn.commit()
"""
    return f"NEW_TOKEN={q(pw)} python3 import_keys.py\n", [("api_token", pw)], {"import_keys.py": py}


@template("SQLAlchemy")
def sqlalchemy_integrity(s, pw, shape):
    py = f"""import os
from sqlalchemy import create_engine, text
engine = create_engine("postgresql+psycopg2://app@/app?host={s.pg_sock}&port={s.pg}")
with engine.begin() as conn:
    for _ in range(2):
        conn.execute(text("INSERT INTO api_keys (owner, api_token) VALUES (:owner, :api_token)"),
                     {{"owner": "etl", "api_token": os.environ["SERVICE_TOKEN"]}})
"""
    return f"SERVICE_TOKEN={q(pw)} python3 sync.py\n", [("api_token", pw)], {"sync.py": py}


@template("node-postgres (pg)")
def node_pg_duplicate(s, pw, shape):
    js = f"""const {{ Client }} = require('pg');
(async () => {{
  const c = new Client({{ host: '{s.pg_sock}', port: {s.pg}, user: 'app', database: 'app' }});
  await c.connect();
  const t = process.env.API_TOKEN;
  await c.query('INSERT INTO api_keys (owner, api_token) VALUES ($1, $2)', ['svc', t]);
  await c.query('INSERT INTO api_keys (owner, api_token) VALUES ($1, $2)', ['svc', t]);
}})().catch((e) => {{ console.error(e); process.exit(1); }});
"""
    return f"API_TOKEN={q(pw)} node keys.js\n", [("api_token", pw)], {"keys.js": js}


JAVA_CP = "/usr/share/java/postgresql.jar"


@template("Java JDBC (PostgreSQL)")
def java_jdbc_pg(s, pw, shape):
    java = f"""import java.sql.*;
public class Job {{
    public static void main(String[] a) throws Exception {{
        String url = "jdbc:postgresql://127.0.0.1:{s.pg}/app?user=app&password=" + System.getenv("DB_PASS");
        try (Connection c = DriverManager.getConnection(url)) {{
            c.createStatement().execute("select 1");
        }} catch (SQLException e) {{
            throw new IllegalStateException("cannot open " + url, e);
        }}
    }}
}}
"""
    script = f"javac Job.java && DB_PASS={q(pw)} java -cp {JAVA_CP}:. Job\n"
    return script, [("password", pw)], {"Job.java": java}


@template("Java DriverManager")
def java_no_driver_oracle(s, pw, shape):
    java = """import java.sql.*;
public class Export {
    public static void main(String[] a) throws Exception {
        String url = "jdbc:oracle:thin:scott/" + System.getenv("ORA_PASS") + "@//db.internal:1521/ORCL";
        Connection c = DriverManager.getConnection(url);
        c.close();
    }
}
"""
    script = f"javac Export.java && ORA_PASS={q(pw)} java -cp . Export\n"
    return script, [("password", pw)], {"Export.java": java}


@template("Java (exception message)")
def java_oracle_message(s, pw, shape):
    java = """public class Nightly {
    static void connect(String url) {
        throw new RuntimeException("connection refused: " + url);
    }
    public static void main(String[] a) {
        connect("jdbc:oracle:thin:scott/" + System.getenv("ORA_PASS") + "@//db.internal:1521/ORCL");
    }
}
"""
    script = f"javac Nightly.java && ORA_PASS={q(pw)} java -cp . Nightly\n"
    return script, [("password", pw)], {"Nightly.java": java}


@template("Java java.net.URI", shapes=["passphrase"], count=2)
def java_uri(s, pw, shape):
    java = """import java.net.URI;
public class Fetch {
    public static void main(String[] a) throws Exception {
        URI u = new URI("https://deploy:" + System.getenv("REPO_PASS") + "@repo.internal/releases/latest");
        System.out.println(u.getHost());
    }
}
"""
    script = f"javac Fetch.java && REPO_PASS={q(pw)} java -cp . Fetch\n"
    return script, [("password", pw)], {"Fetch.java": java}


# --- MariaDB ---------------------------------------------------------------------------


@template("mysql (MariaDB client)")
def mysql_dash_p_setx(s, pw, shape):
    script = f"set -x\nmysql -h 127.0.0.1 -P {s.my} -u app -p{q(pw)} app -e 'select 1'\n"
    return script, [("password", pw)]


@template("mysql (MariaDB client)")
def mysql_pwd_env_setx(s, pw, shape):
    script = f"set -x\nMYSQL_PWD={q(pw)} mysql -h 127.0.0.1 -P {s.my} -u app app -e 'select 1'\n"
    return script, [("password", pw)]


@template("mysql (MariaDB client)")
def mysql_identified_by_syntax(s, pw, shape):
    sql = f"CREATE USER report@'%' IDENTIFIED BY '{pw}' WITH MAX_QUERIES 10 REQUIRE NONE;"
    script = f"mysql --socket={s.my_sock} -uroot -v app -e {q(sql)}\n"
    return script, [("password", pw)]


@template("mysql (MariaDB client)")
def mysql_duplicate(s, pw, shape):
    sql = (f"INSERT INTO api_keys (owner, api_token) VALUES ('a', '{pw}');\n"
           f"INSERT INTO api_keys (owner, api_token) VALUES ('b', '{pw}');\n")
    script = f"mysql --socket={s.my_sock} -uroot app < keys.sql\n"
    return script, [("api_token", pw)], {"keys.sql": sql}


@template("mysqldump")
def mysqldump_setx(s, pw, shape):
    script = f"set -exo pipefail\nmysqldump -h127.0.0.1 -P{s.my} -uapp --password={q(pw)} app | gzip > app.sql.gz\n"
    return script, [("password", pw)]


@template("mysqladmin")
def mysqladmin_setx(s, pw, shape):
    script = f"set -x\nmysqladmin -h 127.0.0.1 -P {s.my} -u app -p{q(pw)} status\n"
    return script, [("password", pw)]


@template("PyMySQL")
def pymysql_duplicate(s, pw, shape):
    py = f"""import os, pymysql
conn = pymysql.connect(unix_socket="{s.my_sock}", user="root", database="app")
with conn.cursor() as cur:
    token = os.environ["TOKEN"]
    for owner in ("a", "b"):
        cur.execute("INSERT INTO api_keys (owner, api_token) VALUES (%s, %s)", (owner, token))
conn.commit()
"""
    return f"TOKEN={q(pw)} python3 keys.py\n", [("api_token", pw)], {"keys.py": py}


@template("PyMySQL")
def pymysql_connect(s, pw, shape):
    py = f"""import pymysql
conn = pymysql.connect(host="127.0.0.1", port={s.my}, user="app", password="{pw}", database="app")
"""
    return "python3 nightly.py\n", [("password", pw)], {"nightly.py": py}


@template("mysql2 (Node)")
def node_mysql2_duplicate(s, pw, shape):
    js = f"""const mysql = require('mysql2/promise');
(async () => {{
  const c = await mysql.createConnection({{ socketPath: '{s.my_sock}', user: 'root', database: 'app' }});
  const t = process.env.TOKEN;
  await c.query("INSERT INTO api_keys (owner, api_token) VALUES ('a', '" + t + "')");
  await c.query("INSERT INTO api_keys (owner, api_token) VALUES ('b', '" + t + "')");
}})().catch((e) => {{ console.error(e); process.exit(1); }});
"""
    return f"TOKEN={q(pw)} node keys.js\n", [("api_token", pw)], {"keys.js": js}


@template("Perl DBI (DBD::MariaDB)")
def perl_dbi_duplicate(s, pw, shape):
    pl = f"""use strict; use DBI;
my $dbh = DBI->connect("DBI:MariaDB:database=app;mariadb_socket={s.my_sock}", "root", "", {{RaiseError => 1}});
my $t = $ENV{{TOKEN}};
$dbh->do("INSERT INTO api_keys (owner, api_token) VALUES ('a', '$t')") for 1..2;
"""
    return f"TOKEN={q(pw)} perl keys.pl\n", [("api_token", pw)], {"keys.pl": pl}


# --- Redis -----------------------------------------------------------------------------


@template("redis-cli")
def redis_cli_a_setx(s, pw, shape):
    script = f"set -x\nredis-cli -h 127.0.0.1 -p {s.redis} -a {q(pw)} --no-auth-warning PING | grep -q PONG\n"
    return script, [("password", pw)]


@template("redis-cli", count=1)
def redis_cli_config_get(s, pw, shape):
    # A job that dumps the server's settings before failing: the reply holds the value.
    script = (f"redis-cli -h 127.0.0.1 -p {s.redis} -a {q(s.redis_password)} --no-auth-warning CONFIG GET requirepass\n"
              f"redis-cli -h 127.0.0.1 -p {s.redis} -a {q(s.redis_password)} --no-auth-warning GET missing-key | grep -q . || {{ echo 'cache is empty' >&2; exit 1; }}\n")
    return script, [("requirepass", s.redis_password)]


@template("redis-server")
def redis_server_bad_config(s, pw, shape):
    conf = f"port 0\nrequirepass {pw} yes\n"
    return "redis-server ./cache.conf\n", [("requirepass", pw)], {"cache.conf": conf}


@template("redis-py", shapes=["urlhostile", "aws"], count=2)
def redis_py_url(s, pw, shape):
    py = f"""import os, redis
r = redis.Redis.from_url(f"redis://default:{{os.environ['REDIS_PASSWORD']}}@127.0.0.1:{s.redis}/0")
r.ping()
"""
    return f"REDIS_PASSWORD={q(pw)} python3 warm.py\n", [("password", pw)], {"warm.py": py}


@template("curl")
def curl_user(s, pw, shape):
    script = f"curl -sS -v --fail -u deploy:{q(pw)} http://127.0.0.1:{s.http}/api/releases\n"
    return script, [("password", pw), ("basic auth", b64("deploy:" + pw))]


@template("curl")
def curl_bearer(s, pw, shape):
    script = f"curl -sS -v --fail -H {q('Authorization: Bearer ' + pw)} http://127.0.0.1:{s.http}/v1/sync\n"
    return script, [("token", pw)]


@template("curl")
def curl_api_key_header(s, pw, shape):
    script = f"curl -sS -v --fail -H {q('X-Api-Key: ' + pw)} -d '{{}}' http://127.0.0.1:{s.http}/v2/jobs\n"
    return script, [("api key", pw)]


@template("curl")
def curl_url_userinfo(s, pw, shape):
    script = f"curl -sS -v --fail {q(f'http://backup:{pct(pw)}@127.0.0.1:{s.http}/upload')}\n"
    return script, [("password", pw), ("basic auth", b64("backup:" + pw))]


@template("curl")
def curl_query_token_closed(s, pw, shape):
    script = f"set -x\ncurl -sS --fail 'http://127.0.0.1:{s.closed}/hook?token={pct(pw)}'\n"
    return script, [("token", pw)]


@template("wget")
def wget_debug_password(s, pw, shape):
    script = f"wget --debug --user=deploy --password={q(pw)} -O /dev/null http://127.0.0.1:{s.http}/artifact.tgz\n"
    return script, [("password", pw), ("basic auth", b64("deploy:" + pw))]


@template("wget")
def wget_http_password(s, pw, shape):
    script = f"wget -d --http-user=ci --http-password={q(pw)} -O - http://127.0.0.1:{s.http}/status\n"
    return script, [("password", pw), ("basic auth", b64("ci:" + pw))]


@template("git")
def git_clone_token_url(s, pw, shape):
    script = (f"set -x\ngit clone --depth 1 https://x-access-token:{pct(pw)}@127.0.0.1:{s.closed}/org/repo.git\n")
    return script, [("token", pw)]


@template("git")
def git_curl_verbose(s, pw, shape):
    script = (f"GIT_TERMINAL_PROMPT=0 GIT_CURL_VERBOSE=1 GIT_TRACE_REDACT=0 "
              f"git ls-remote http://ci:{pct(pw)}@127.0.0.1:{s.http}/org/repo.git\n")
    return script, [("password", pw), ("basic auth", b64("ci:" + pw))]


@template("git credential")
def git_credential_fill(s, pw, shape):
    script = (f"git config --global credential.helper 'store --file ./creds'\n"
              f"printf 'protocol=https\\nhost=git.internal\\nusername=ci\\npassword=%s\\n' {q(pw)} | git credential approve\n"
              f"printf 'protocol=https\\nhost=git.internal\\n' | git credential fill\n"
              f"git push https://git.internal/org/repo.git main\n")
    return script, [("password", pw)]


@template("pip", shapes=["urlhostile"], count=2)
def pip_index_url(s, pw, shape):
    script = (f"python3 -m pip download --no-deps --retries 0 --timeout 2 -d dl "
              f"--index-url 'http://ci:{pw}@127.0.0.1:{s.http}/simple' corpus-internal-lib\n")
    return script, [("password", pw)]


@template("npm", shapes=["urlhostile"], count=2)
def npm_registry_url(s, pw, shape):
    script = f"npm view corpus-internal-lib --fetch-retries=0 --registry 'http://ci:{pw}@127.0.0.1:{s.http}/'\n"
    return script, [("password", pw)]


@template("requests")
def requests_query_token(s, pw, shape):
    py = f"""import os, requests
resp = requests.get("http://127.0.0.1:{s.http}/api/export", params={{"api_key": os.environ["API_KEY"], "since": "2026-12-01"}}, timeout=5)
resp.raise_for_status()
"""
    return f"API_KEY={q(pw)} python3 export.py\n", [("api key", pw)], {"export.py": py}


@template("httpx")
def httpx_query_token(s, pw, shape):
    py = f"""import os, httpx
r = httpx.get("http://127.0.0.1:{s.http}/v1/report?access_token=" + os.environ["ACCESS_TOKEN"])
r.raise_for_status()
"""
    return f"ACCESS_TOKEN={q(pct(pw))} python3 report.py\n", [("token", pw)], {"report.py": py}


@template("urllib (Python)")
def urllib_userinfo(s, pw, shape):
    py = f"""import os, urllib.request
urllib.request.urlopen("http://admin:" + os.environ["ADMIN_PW"] + "@127.0.0.1:{s.http}/reindex")
"""
    return f"ADMIN_PW={q(pw)} python3 reindex.py\n", [("password", pw)], {"reindex.py": py}


@template("axios")
def axios_basic(s, pw, shape):
    js = f"""const axios = require('axios');
axios.get('http://127.0.0.1:{s.http}/api/items', {{ auth: {{ username: 'etl', password: process.env.ETL_PASSWORD }} }})
  .catch((e) => {{ console.error(e); process.exit(1); }});
"""
    return f"ETL_PASSWORD={q(pw)} node pull.js\n", [("password", pw), ("basic auth", b64("etl:" + pw))], {"pull.js": js}


@template("axios")
def axios_bearer(s, pw, shape):
    js = f"""const axios = require('axios');
axios.post('http://127.0.0.1:{s.http}/v1/events', {{ n: 1 }}, {{ headers: {{ Authorization: 'Bearer ' + process.env.TOKEN }} }})
  .catch((e) => {{ console.error('push failed:', e.toJSON ? e.toJSON() : e); process.exit(1); }});
"""
    return f"TOKEN={q(pw)} node push.js\n", [("token", pw)], {"push.js": js}


@template("Node fetch (undici)")
def node_fetch_credentials(s, pw, shape):
    js = f"""fetch('http://svc:' + process.env.SVC_PW + '@127.0.0.1:{s.http}/health')
  .then((r) => {{ if (!r.ok) throw new Error('status ' + r.status); }});
"""
    return f"SVC_PW={q(pct(pw))} node health.js\n", [("password", pw)], {"health.js": js}


@template("Node URL")
def node_url_parse(s, pw, shape):
    js = """const u = new URL(`amqp://worker:${process.env.MQ_PASS}@mq internal:5672/jobs`);
console.log(u.host);
"""
    return f"MQ_PASS={q(pw)} node queue.js\n", [("password", pw)], {"queue.js": js}


@template("Node child_process")
def node_exec_sshpass(s, pw, shape):
    js = f"""const {{ execFileSync }} = require('child_process');
execFileSync('sshpass', ['-p', process.env.SSH_PW, 'ssh', '-o', 'StrictHostKeyChecking=no', '-p', '{s.closed}', 'backup@127.0.0.1', 'true']);
"""
    return f"SSH_PW={q(pw)} node rotate.js\n", [("password", pw)], {"rotate.js": js}


@template("Node JSON.parse")
def node_json_config(s, pw, shape):
    conf = '{\n  "db": {"user": "app", "password": "' + pw + '",},\n  "port": 5432\n}\n'
    js = "const fs = require('fs');\nconst cfg = JSON.parse(fs.readFileSync('config.json', 'utf8'));\nconsole.log(cfg.db.user);\n"
    return "node load.js\n", [("password", pw)], {"config.json": conf, "load.js": js}


# --- Mail and file transfer protocols --------------------------------------------------


@template("curl (FTP)")
def curl_ftp(s, pw, shape):
    script = f"curl -sS -v --user backup:{q(pw)} ftp://127.0.0.1:{s.ftp}/nightly/ -T /etc/hostname\n"
    return script, [("password", pw)]


@template("lftp")
def lftp_debug(s, pw, shape):
    script = f"lftp -d -u backup,{q(pw)} -e 'set net:max-retries 1; ls; bye' ftp://127.0.0.1:{s.ftp}\n"
    return script, [("password", pw)]


@template("ftp (tnftp)")
def ftp_netrc(s, pw, shape):
    netrc = f"machine 127.0.0.1 login backup password {pw}\n"
    script = f"chmod 600 .netrc\nset -x\ncat .netrc\nftp -d -p 127.0.0.1 {s.ftp} <<< 'ls' | grep -q nightly\n"
    return script, [("password", pw)], {".netrc": netrc}


@template("wget (FTP)")
def wget_ftp(s, pw, shape):
    script = f"wget -d --tries=1 'ftp://backup:{pct(pw)}@127.0.0.1:{s.ftp}/db.sql.gz'\n"
    return script, [("password", pw)]


@template("smtplib")
def python_smtplib(s, pw, shape):
    py = f"""import os, smtplib
s = smtplib.SMTP("127.0.0.1", {s.smtp})
s.set_debuglevel(1)
s.ehlo()
s.login("alerts@corp.example", os.environ["SMTP_PASSWORD"])
"""
    plain = base64.b64encode(b"\0alerts@corp.example\0" + pw.encode()).decode()
    return (f"SMTP_PASSWORD={q(pw)} python3 notify.py\n",
            [("password", pw), ("AUTH PLAIN", plain), ("AUTH LOGIN password", b64(pw))], {"notify.py": py})


@template("curl (SMTP)")
def curl_smtp(s, pw, shape):
    script = (f"printf 'Subject: nightly\\n\\nfailed\\n' > mail.txt\n"
              f"curl -sS -v smtp://127.0.0.1:{s.smtp} --mail-from alerts@corp.example --mail-rcpt ops@corp.example "
              f"--user alerts:{q(pw)} --upload-file mail.txt\n")
    plain = base64.b64encode(b"\0alerts\0" + pw.encode()).decode()
    return script, [("password", pw), ("AUTH PLAIN", plain), ("AUTH LOGIN password", b64(pw))]


@template("swaks")
def swaks_auth(s, pw, shape):
    script = (f"swaks --server 127.0.0.1:{s.smtp} --from alerts@corp.example --to ops@corp.example "
              f"--auth PLAIN --auth-user alerts --auth-password {q(pw)}\n")
    plain = base64.b64encode(b"\0alerts\0" + pw.encode()).decode()
    return script, [("password", pw), ("AUTH PLAIN", plain)]


@template("imaplib")
def python_imaplib(s, pw, shape):
    py = f"""import imaplib, os
imaplib.Debug = 4
m = imaplib.IMAP4("127.0.0.1", {s.imap})
m.login("reports", os.environ["IMAP_PASSWORD"])
"""
    return f"IMAP_PASSWORD={q(pw)} python3 fetch_mail.py\n", [("password", pw)], {"fetch_mail.py": py}


@template("curl (IMAP)")
def curl_imap(s, pw, shape):
    script = f"curl -sS -v 'imap://reports:{pct(pw)}@127.0.0.1:{s.imap}/INBOX'\n"
    plain = base64.b64encode(b"\0reports\0" + pw.encode()).decode()
    return script, [("password", pw), ("AUTH PLAIN", plain)]


@template("poplib")
def python_poplib(s, pw, shape):
    py = f"""import os, poplib
p = poplib.POP3("127.0.0.1", {s.pop3})
p.set_debuglevel(2)
p.user("reports")
p.pass_(os.environ["POP_PASSWORD"])
"""
    return f"POP_PASSWORD={q(pw)} python3 pop.py\n", [("password", pw)], {"pop.py": py}


@template("curl (POP3)")
def curl_pop3(s, pw, shape):
    script = f"curl -sS -v --user reports:{q(pw)} pop3://127.0.0.1:{s.pop3}/1\n"
    return script, [("password", pw)]


# --- Shell traces of cron scripts ------------------------------------------------------


def setx(body):
    return "#!/bin/bash\nset -euxo pipefail\n" + body


@template("7z")
def sevenzip(s, pw, shape):
    return setx(f"7z a -p{q(pw)} -mhe=on /nonexistent/backups/db.7z ./dump\n"), [("password", pw)]


@template("zip")
def zip_p(s, pw, shape):
    return setx(f"zip -q -P {q(pw)} reports.zip reports/*.csv\n"), [("password", pw)]


@template("unzip")
def unzip_p(s, pw, shape):
    script = setx(f"echo data > f.txt && zip -q -P right-one a.zip f.txt && rm f.txt\nunzip -o -P {q(pw)} a.zip\ntest -s f.txt\n")
    return script, [("password", pw)]


@template("openssl enc")
def openssl_enc(s, pw, shape):
    return setx(f"openssl enc -aes-256-cbc -pbkdf2 -salt -in dump.sql -out dump.sql.enc -k {q(pw)}\n"), [("password", pw)]


@template("openssl pkcs12")
def openssl_pkcs12(s, pw, shape):
    return setx(f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{q(pw)}\n"), [("password", pw)]


@template("htpasswd")
def htpasswd_b(s, pw, shape):
    return setx(f"htpasswd -b -B /etc/nginx/missing/.htpasswd monitor {q(pw)}\n"), [("password", pw)]


@template("keytool")
def keytool_storepass(s, pw, shape):
    return setx(f"keytool -list -keystore /opt/app/missing.jks -storepass {q(pw)}\n"), [("password", pw)]


@template("keytool")
def keytool_wrong(s, pw, shape):
    script = (f"keytool -genkeypair -alias app -keyalg RSA -dname CN=app -keystore app.p12 -storetype PKCS12 "
              f"-storepass right-pass-1 -validity 1 >/dev/null 2>&1\n"
              + setx(f"keytool -list -keystore app.p12 -storepass {q(pw)}\n").replace("#!/bin/bash\n", ""))
    return script, [("password", pw)]


@template("sshpass")
def sshpass_p(s, pw, shape):
    return setx(f"sshpass -p {q(pw)} ssh -o StrictHostKeyChecking=no -p {s.closed} backup@127.0.0.1 'ls /srv'\n"), [("password", pw)]


@template("sshpass")
def sshpass_e(s, pw, shape):
    return setx(f"export SSHPASS={q(pw)}\nsshpass -e scp -P {s.closed} dump.sql backup@127.0.0.1:/srv/\n"), [("password", pw)]


@template("rsync")
def rsync_password(s, pw, shape):
    return setx(f"RSYNC_PASSWORD={q(pw)} rsync -av ./data/ rsync://backup@127.0.0.1:{s.closed}/nightly/\n"), [("password", pw)]


@template("gpg")
def gpg_passphrase(s, pw, shape):
    return setx(f"gpg --batch --yes --pinentry-mode loopback --passphrase {q(pw)} -c missing-dump.sql\n"), [("passphrase", pw)]


@template("ldapsearch")
def ldapsearch_w(s, pw, shape):
    return setx(f"ldapsearch -x -H ldap://127.0.0.1:{s.closed} -D cn=admin,dc=corp,dc=example -w {q(pw)} -b dc=corp,dc=example uid=jdoe\n"), [("password", pw)]


@template("mosquitto_pub")
def mosquitto_pub(s, pw, shape):
    return setx(f"mosquitto_pub -h 127.0.0.1 -p {s.closed} -u sensor -P {q(pw)} -t backups/done -m ok\n"), [("password", pw)]


@template("bash", shapes=["passphrase"], count=3)
def bash_unquoted_env(s, pw, shape):
    # A passphrase unquoted in a sourced env file: bash runs its second word as a command.
    env = f"DB_USER=app\nDB_PASSWORD={pw}\n"
    return "set -e\nsource ./app.env\n./run-report\n", [("password", pw)], {"app.env": env}


@template("bash")
def bash_vendor_key(s, pw, shape):
    return setx(f"ACME_KEY={q(pw)} ./bin/run-report --since yesterday\n"), [("api key", pw)]


@template("sed")
def sed_template(s, pw, shape):
    script = setx(f"DB_PASSWORD={q(pw)}\nsed -i \"s/@DB_PASSWORD@/$DB_PASSWORD/\" app.conf\nsystemctl restart app\n")
    return script, [("password", pw)], {"app.conf": "password = @DB_PASSWORD@\n"}


@template("make")
def make_recipe(s, pw, shape):
    mk = f"deploy:\n\tcurl -sS --fail -u deploy:{pw} -T build.tgz http://127.0.0.1:{s.closed}/releases/\n"
    return "make deploy\n", [("password", pw)], {"Makefile": mk}


@template("ssh-keygen")
def ssh_keygen(s, pw, shape):
    return setx(f"ssh-keygen -q -t ed25519 -N {q(pw)} -f /nonexistent/keys/deploy_ed25519\n"), [("passphrase", pw)]


# --- Python tracebacks -----------------------------------------------------------------


@template("subprocess (Python)")
def python_called_process_error(s, pw, shape):
    py = f"""import os, subprocess
subprocess.run(["sshpass", "-p", os.environ["SSH_PASSWORD"], "rsync", "-a", "-e", "ssh -p {s.closed} -o StrictHostKeyChecking=no", "out/", "backup@127.0.0.1:/srv/"], check=True)
"""
    return f"SSH_PASSWORD={q(pw)} python3 sync.py\n", [("password", pw)], {"sync.py": py}


@template("subprocess (Python)")
def python_mysqldump_list(s, pw, shape):
    py = f"""import os, subprocess
cmd = ["mysqldump", "-h", "127.0.0.1", "-P", "{s.my}", "-u", "app", "-p" + os.environ["DB_PASSWORD"], "app"]
out = subprocess.check_output(cmd)
"""
    return f"DB_PASSWORD={q(pw)} python3 dump.py\n", [("password", pw)], {"dump.py": py}


@template("rich (traceback locals)")
def rich_locals(s, pw, shape):
    py = f"""import os
from rich.traceback import install
install(show_locals=True, width=100)
import psycopg2

def connect():
    password = os.environ["DB_PASSWORD"]
    dsn = f"host=127.0.0.1 port={s.pg} user=app dbname=app password={{password}}"
    return psycopg2.connect(dsn)

connect()
"""
    return f"DB_PASSWORD={q(pw)} python3 job.py\n", [("password", pw)], {"job.py": py}


@template("better_exceptions")
def better_exceptions_locals(s, pw, shape):
    py = f"""import os
import better_exceptions
better_exceptions.hook()
import requests

def push(rows):
    token = os.environ["PUSH_TOKEN"]
    r = requests.post("http://127.0.0.1:{s.closed}/v1/rows", headers={{"Authorization": "Bearer " + token}}, json=rows)
    return r.status_code

push([1, 2, 3])
"""
    return f"BETTER_EXCEPTIONS=1 PUSH_TOKEN={q(pw)} python3 push.py\n", [("token", pw)], {"push.py": py}


@template("traceback (Python, source line)")
def python_hardcoded_source(s, pw, shape):
    py = f"""import socket

API_TOKEN = "{pw}"

def send(payload):
    socket.create_connection(("127.0.0.1", {s.closed}), timeout=2).sendall(b"Token {pw} " + payload)

send(b"ping")
"""
    return "python3 beacon.py\n", [("token", pw)], {"beacon.py": py}


@template("configparser")
def python_configparser(s, pw, shape):
    # A `%` in a password, which configparser takes for interpolation.
    pw = pw[:4] + "%" + pw[4:]
    ini = f"[db]\nuser = app\npassword = {pw}\n"
    py = "import configparser\nc = configparser.ConfigParser()\nc.read('app.ini')\nprint(c['db']['password'])\n"
    return "python3 cfg.py\n", [("password", pw)], {"app.ini": ini, "cfg.py": py}


@template("PyYAML")
def python_yaml(s, pw, shape):
    yml = f"database:\n  user: app\n  password: @{pw}\n  host: db\n"
    py = "import yaml\nprint(yaml.safe_load(open('settings.yml').read()))\n"
    return "python3 settings.py\n", [("password", pw)], {"settings.yml": yml, "settings.py": py}


@template("pydantic")
def python_pydantic(s, pw, shape):
    py = """import os
from pydantic import BaseModel, Field

class Settings(BaseModel):
    db_url: str = Field(pattern=r"^postgres(ql)?://[^:]+:[^@]+@[^/]+/\\w+$")
    api_key: str = Field(max_length=8)

Settings(db_url="postgresql://app:" + os.environ["DB_PASSWORD"] + "@db/app x", api_key=os.environ["API_KEY"])
"""
    key = secret("base62")
    return (f"DB_PASSWORD={q(pw)} API_KEY={q(key)} python3 settings.py\n",
            [("password", pw), ("api key", key)], {"settings.py": py})


@template("logging (Python)")
def python_logging_dict(s, pw, shape):
    py = """import logging, os
logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
cfg = {"host": "127.0.0.1", "user": "etl", "password": os.environ["DB_PASSWORD"], "retries": 3}
logging.getLogger("etl").error("cannot connect with %r", cfg)
raise SystemExit(2)
"""
    return f"DB_PASSWORD={q(pw)} python3 etl.py\n", [("password", pw)], {"etl.py": py}


# --- AWS (moto on loopback) ------------------------------------------------------------


@template("awscli")
def awscli_debug(s, pw, shape):
    key_id = aws_key_id()
    sec = secret("aws")
    script = (f"AWS_ACCESS_KEY_ID={key_id} AWS_SECRET_ACCESS_KEY={q(sec)} AWS_DEFAULT_REGION=eu-west-1 "
              f"aws --endpoint-url http://127.0.0.1:{s.moto} s3 ls s3://nightly-backups --debug 2>&1 | tail -n 40\n"
              f"set -x\nAWS_ACCESS_KEY_ID={key_id} AWS_SECRET_ACCESS_KEY={q(sec)} aws --region eu-west-1 "
              f"--endpoint-url http://127.0.0.1:{s.moto} s3 cp dump.sql s3://nightly-backups/\n")
    return script, [("access key id", key_id), ("secret access key", sec)]


GO_RUN = "go run main.go\n"


@template("Go net (dial)")
def go_dial(s, pw, shape):
    go = """package main

import (
	"log"
	"net"
	"os"
	"time"
)

func main() {
	addr := "postgres://app:" + os.Getenv("PG_PASSWORD") + "@db:5432"
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		log.Fatalf("database unreachable: %v", err)
	}
	conn.Close()
}
"""
    return f"PG_PASSWORD={q(pw)} {GO_RUN}", [("password", pw)], {"main.go": go}


@template("Go net/url", shapes=["passphrase"], count=3)
def go_url_parse(s, pw, shape):
    go = """package main

import (
	"fmt"
	"net/url"
	"os"
)

func main() {
	u, err := url.Parse("redis://svc:" + os.Getenv("REDIS_PW") + "@cache:6379/0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(1)
	}
	fmt.Println(u.Host)
	os.Exit(3)
}
"""
    return f"REDIS_PW={q(pw)} {GO_RUN}", [("password", pw)], {"main.go": go}


@template("Go net/http")
def go_http(s, pw, shape):
    go = f"""package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {{
	req, _ := http.NewRequest("GET", "http://127.0.0.1:{s.http}/v1/jobs", nil)
	req.Header.Set("Authorization", "Bearer "+os.Getenv("TOKEN"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {{
		panic(err)
	}}
	if resp.StatusCode != 200 {{
		panic(fmt.Sprintf("unexpected %s for %v (headers %v)", resp.Status, req.URL, req.Header))
	}}
}}
"""
    return f"TOKEN={q(pw)} {GO_RUN}", [("token", pw)], {"main.go": go}


@template("Go database DSN")
def go_lookup(s, pw, shape):
    go = """package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	dsn := "app:" + os.Getenv("MYSQL_PASSWORD") + "@tcp(db.invalid:3306)/app"
	if _, err := net.LookupHost(dsn); err != nil {
		fmt.Fprintf(os.Stderr, "open %s: %v\\n", dsn, err)
		os.Exit(1)
	}
}
"""
    return f"MYSQL_PASSWORD={q(pw)} {GO_RUN}", [("password", pw)], {"main.go": go}


# --- More programs ---------------------------------------------------------------------


@template("psql")
def psql_echo_alter_role(s, pw, shape):
    sql = f"ALTER ROLE postgres WITH PASSWORD '{pw}';"
    script = f"psql -h {s.pg_sock} -p {s.pg} -U app -d app -e -v ON_ERROR_STOP=1 -c {q(sql)}\n"
    return script, [("password", pw)]


@template("mysql (MariaDB client)")
def mysql_print_defaults(s, pw, shape):
    cnf = f"[client]\nuser=app\npassword={pw}\nhost=127.0.0.1\nport={s.my}\n"
    script = "chmod 600 .my.cnf\nmysql --print-defaults\nmysql app -e 'select 1'\n"
    return script, [("password", pw)], {".my.cnf": cnf}


@template("mysql (MariaDB client)")
def mysql_set_password_syntax(s, pw, shape):
    sql = f"SET PASSWORD FOR app@'%' = PASSWORD('{pw}') WHERE 1;"
    script = f"mysql --socket={s.my_sock} -uroot -e {q(sql)}\n"
    return script, [("password", pw)]


@template("Perl DBI (DBD::MariaDB)")
def perl_dbi_connect(s, pw, shape):
    pl = f"""use strict; use DBI;
my $dsn = "DBI:MariaDB:database=app;host=127.0.0.1;port={s.my};password=$ENV{{DB_PASSWORD}}";
my $dbh = DBI->connect($dsn, "app", undef, {{RaiseError => 1, PrintError => 0}});
"""
    return f"DB_PASSWORD={q(pw)} perl report.pl\n", [("password", pw)], {"report.pl": pl}


@template("jarsigner")
def jarsigner_storepass(s, pw, shape):
    return setx(f"jarsigner -keystore /opt/release/missing.jks -storepass {q(pw)} build/app.jar release\n"), [("password", pw)]


@template("Node assert")
def node_assert(s, pw, shape):
    js = """const assert = require('assert');
const token = process.env.API_TOKEN;
assert.strictEqual(token, process.env.EXPECTED_TOKEN, 'token rotated?');
"""
    other = secret("base62")
    return (f"API_TOKEN={q(pw)} EXPECTED_TOKEN={q(other)} node check.js\n",
            [("token", pw), ("expected token", other)], {"check.js": js})


@template("pytest")
def pytest_assert(s, pw, shape):
    py = """import os

def test_token_matches_vault():
    token = os.environ["API_TOKEN"]
    assert token == os.environ["VAULT_TOKEN"]
"""
    other = secret("hex")
    return (f"API_TOKEN={q(pw)} VAULT_TOKEN={q(other)} python3 -m pytest -q -p no:cacheprovider test_tokens.py\n",
            [("token", pw), ("vault token", other)], {"test_tokens.py": py})


@template("jq")
def jq_fromjson(s, pw, shape):
    script = f"jq -n --arg token {q(pw)} '$token | fromjson | .exp'\n"
    return script, [("token", pw)]


@template("msmtp")
def msmtp_debug(s, pw, shape):
    rc = (f"account default\nhost 127.0.0.1\nport {s.smtp}\nauth plain\ntls off\nuser alerts\n"
          f"password {pw}\nfrom alerts@corp.example\n")
    script = "chmod 600 msmtprc\nprintf 'Subject: x\\n\\nbackup failed\\n' | msmtp --debug -C msmtprc ops@corp.example\n"
    plain = base64.b64encode(b"\0alerts\0" + pw.encode()).decode()
    return script, [("password", pw), ("AUTH PLAIN", plain)], {"msmtprc": rc}


@template("wget")
def wget_header(s, pw, shape):
    script = f"wget -d --header={q('X-Api-Key: ' + pw)} -O /dev/null http://127.0.0.1:{s.http}/v1/export\n"
    return script, [("api key", pw)]


@template("Go os/exec")
def go_exec(s, pw, shape):
    go = f"""package main

import (
	"log"
	"os"
	"os/exec"
)

func main() {{
	cmd := exec.Command("sshpass", "-p", os.Getenv("SSH_PASSWORD"), "ssh", "-p", "{s.closed}", "backup@127.0.0.1", "true")
	if out, err := cmd.CombinedOutput(); err != nil {{
		log.Fatalf("%s: %v: %s", cmd, err, out)
	}}
}}
"""
    return f"SSH_PASSWORD={q(pw)} {GO_RUN}", [("password", pw)], {"main.go": go}


@template("java -XshowSettings")
def java_show_settings(s, pw, shape):
    script = f"java -Ddb.user=app -Ddb.password={q(pw)} -XshowSettings:properties -cp . NightlyExport\n"
    return script, [("password", pw)]


@template("javac")
def javac_source_line(s, pw, shape):
    java = f"""public class Config {{
    static final String API_TOKEN = "{pw}"
    public static void main(String[] a) {{ System.out.println(API_TOKEN.length()); }}
}}
"""
    return "javac Config.java\n", [("token", pw)], {"Config.java": java}


@template("python (SyntaxError)")
def python_syntax_error(s, pw, shape):
    py = f"""import requests
HEADERS = {{"Authorization": "Bearer {pw}"
requests.get("http://127.0.0.1:{s.http}/", headers=HEADERS)
"""
    return "python3 ping.py\n", [("token", pw)], {"ping.py": py}


@template("node (SyntaxError)")
def node_syntax_error(s, pw, shape):
    js = f"""const cfg = {{ user: 'etl' password: '{pw}' }};
module.exports = cfg;
"""
    return "node cfg.js\n", [("password", pw)], {"cfg.js": js}


@template("bash (syntax error)")
def bash_syntax_error(s, pw, shape):
    sh = f"#!/bin/bash\nif [ -d /srv ]; then\n  curl -sS -u admin:{q(pw)} http://127.0.0.1:{s.closed}/reindex )\nfi\n"
    return "bash reindex.sh\n", [("password", pw)], {"reindex.sh": sh}


@template("env (coreutils)")
def env_dump(s, pw, shape):
    script = (f"export STRIPE_API_KEY={q(pw)} DB_HOST=db.internal\n"
              "echo 'import failed; environment:' >&2\nenv | grep -E '^(STRIPE|DB)_' | sort >&2\nexit 1\n")
    return script, [("api key", pw)]


@template("curl")
def curl_setx_bearer(s, pw, shape):
    script = setx(f'TOKEN={q(pw)}\ncurl -sS --fail -H "Authorization: Bearer $TOKEN" http://127.0.0.1:{s.http}/v1/import\n')
    return script, [("token", pw)]


@template("http.client (Python)")
def python_http_client_debug(s, pw, shape):
    py = f"""import base64, http.client, os
conn = http.client.HTTPConnection("127.0.0.1", {s.http})
conn.set_debuglevel(1)
auth = base64.b64encode(("backup:" + os.environ["BACKUP_PW"]).encode()).decode()
conn.request("PUT", "/snapshots/today", body=b"{{}}", headers={{"Authorization": "Basic " + auth}})
resp = conn.getresponse()
if resp.status != 200:
    raise SystemExit(f"upload failed: {{resp.status}} {{resp.reason}}")
"""
    return (f"BACKUP_PW={q(pw)} python3 snapshot.py\n", [("basic auth", b64("backup:" + pw))],
            {"snapshot.py": py})


@template("git")
def git_extra_header(s, pw, shape):
    script = (f"GIT_TERMINAL_PROMPT=0 GIT_TRACE_CURL=1 GIT_TRACE_REDACT=0 git "
              f"-c http.extraHeader={q('Authorization: Bearer ' + pw)} ls-remote http://127.0.0.1:{s.http}/org/tools.git\n")
    return script, [("token", pw)]


@template("Go net (host from config)")
def go_host_is_url(s, pw, shape):
    go = """package main

import (
	"log"
	"net"
	"os"
	"time"
)

func main() {
	// DB_HOST was meant to hold a host name, and holds the whole URL.
	addr := net.JoinHostPort(os.Getenv("DB_HOST"), "5432")
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	conn.Close()
}
"""
    return f"DB_HOST={q('postgres://app:' + pw + '@db')} {GO_RUN}", [("password", pw)], {"main.go": go}


@template("requests")
def requests_token_in_path(s, pw, shape):
    py = f"""import os, requests
url = "http://127.0.0.1:{s.http}/bot" + os.environ["BOT_TOKEN"] + "/sendMessage"
r = requests.post(url, json={{"chat_id": 42, "text": "backup failed"}}, timeout=5)
r.raise_for_status()
"""
    return f"BOT_TOKEN={q(pct(pw))} python3 alert.py\n", [("token", pw)], {"alert.py": py}


@template("Ruby URI", shapes=["passphrase"], count=2)
def ruby_uri(s, pw, shape):
    rb = """require 'uri'
db = URI.parse("postgres://app:#{ENV['DB_PASSWORD']}@db.internal:5432/app")
puts db.host
"""
    return f"DB_PASSWORD={q(pw)} ruby config.rb\n", [("password", pw)], {"config.rb": rb}


@template("Ruby Net::HTTP")
def ruby_net_http(s, pw, shape):
    rb = f"""require 'net/http'
require 'uri'
uri = URI("http://deploy:#{{ENV['DEPLOY_PW']}}@127.0.0.1:{s.http}/releases")
req = Net::HTTP::Get.new(uri)
req.basic_auth(uri.user, uri.password)
res = Net::HTTP.start(uri.host, uri.port) {{ |http| http.request(req) }}
raise "release list failed: #{{res.code}} #{{uri}}" unless res.is_a?(Net::HTTPSuccess)
"""
    return f"DEPLOY_PW={q(pct(pw))} ruby releases.rb\n", [("password", pw)], {"releases.rb": rb}


@template("restic")
def restic_setx(s, pw, shape):
    return setx(f"export RESTIC_PASSWORD={q(pw)}\nrestic -r /srv/missing-repo snapshots\n"), [("password", pw)]


# --- Issue 43: values quoted back, frames, dumps, variable dumps, AUTH LOGIN --------------


def slashed(pw, at=8):
    """The password with a `/` at `at` (as `openssl rand -base64` makes them): a URL parser
    then ends the authority there and reads the piece after the user's `:` as the port."""
    head = "".join(c for c in pw if c.isalnum())[:at]
    return head + "/" + pw


@template("psql (port)", shapes=["aws", "base62", "hex"], count=3)
def psql_port_piece(s, pw, shape):
    pw = slashed(pw)
    script = f"psql 'postgresql://app:{pw}@127.0.0.1:{s.closed}/app' -c 'select 1'\n"
    return script, [("password", pw)]


@template("urllib.parse (port)", shapes=["base62", "hex", "aws"], count=3)
def python_urllib_port(s, pw, shape):
    pw = slashed(pw)
    py = """import os, urllib.parse

def db_settings(url):
    parts = urllib.parse.urlsplit(url)
    return {"host": parts.hostname, "port": parts.port or 5432, "user": parts.username}

print(db_settings(os.environ["DATABASE_URL"]))
"""
    url = f"postgresql://app:{pw}@db.internal:5432/app"
    return f"DATABASE_URL={q(url)} python3 settings.py\n", [("password", pw)], {"settings.py": py}


@template("Go net/url (port)", shapes=["base62", "aws", "hex"], count=3)
def go_url_port(s, pw, shape):
    pw = slashed(pw)
    go = """package main

import (
	"fmt"
	"net/url"
	"os"
)

func main() {
	u, err := url.Parse("redis://svc:" + os.Getenv("REDIS_PW") + "@cache:6379/0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(1)
	}
	fmt.Println(u.Host)
}
"""
    return f"REDIS_PW={q(pw)} {GO_RUN}", [("password", pw)], {"main.go": go}


PHP_ARGS = "php -d display_errors=stderr -d zend.exception_ignore_args=0 -d zend.exception_string_param_max_len=40"


@template("PHP PDO (frames)", shapes=["base62", "punct", "wordpunct", "hex"], count=4)
def php_pdo_frames(s, pw, shape):
    php = f"""<?php
function connect(string $dsn, string $user, string $password): PDO {{
    return new PDO($dsn, $user, $password, [PDO::ATTR_TIMEOUT => 2]);
}}

function db(): PDO {{
    return connect(getenv('DB_DSN'), 'app', getenv('DB_PASSWORD'));
}}

db()->query('SELECT 1');
"""
    dsn = f"mysql:host=127.0.0.1;port={s.closed};dbname=app"
    return (f"DB_DSN={q(dsn)} DB_PASSWORD={q(pw)} {PHP_ARGS} job.php\n", [("password", pw)],
            {"job.php": php})


@template("PHP mysqli (frames)", shapes=["base62", "aws"], count=2)
def php_mysqli_frames(s, pw, shape):
    php = f"""<?php
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
class Db {{
    public static function open(string $host, string $user, string $password): mysqli {{
        $link = mysqli_init();
        $link->real_connect($host, $user, $password, 'app', {s.closed});
        return $link;
    }}
}}
Db::open('127.0.0.1', 'app', getenv('DB_PASSWORD'));
"""
    return f"DB_PASSWORD={q(pw)} {PHP_ARGS} job.php\n", [("password", pw)], {"job.php": php}


@template("redis-cli (host)", shapes=["base62", "hex", "base62"], count=3)
def redis_cli_at_host(s, pw, shape):
    # An unescaped `@` in the password: redis-cli resolves the rest of it as the host.
    pw = pw[:6] + "@" + pw[6:]
    script = f"redis-cli -u 'redis://default:{pw}@127.0.0.1:{s.closed}/0' ping\n"
    return script, [("password", pw)]


@template("smtplib (AUTH LOGIN)")
def python_smtplib_login(s, pw, shape):
    py = f"""import os, smtplib
s = smtplib.SMTP("127.0.0.1", {s.smtp_login})
s.set_debuglevel(1)
s.ehlo()
s.login("alerts@corp.example", os.environ["SMTP_PASSWORD"])
"""
    return (f"SMTP_PASSWORD={q(pw)} python3 notify.py\n",
            [("password", pw), ("AUTH LOGIN password", b64(pw))], {"notify.py": py})


@template("swaks (AUTH LOGIN)")
def swaks_auth_login(s, pw, shape):
    script = (f"swaks --server 127.0.0.1:{s.smtp_login} --from alerts@corp.example --to ops@corp.example "
              f"--auth LOGIN --auth-user alerts --auth-password {q(pw)}\n")
    return script, [("password", pw), ("AUTH LOGIN password", b64(pw))]


@template("ldapsearch (-d)", shapes=["base62", "punct", "hex", "wordpunct"], count=4)
def ldapsearch_debug(s, pw, shape):
    level = 2 if shape in ("base62", "hex") else 16
    script = (f"ldapsearch -x -d {level} -H ldap://127.0.0.1:{s.ldap} -D cn=admin,dc=corp,dc=example "
              f"-w \"$LDAP_PASSWORD\" -b dc=corp,dc=example uid=jdoe\n")
    return f"export LDAP_PASSWORD={q(pw)}\n" + script, [("password", pw)]


@template("loguru (variables)")
def loguru_locals(s, pw, shape):
    py = f"""import os, socket
from loguru import logger

def connect(host, port, user, password):
    return socket.create_connection((host, port), timeout=2)

@logger.catch(reraise=False)
def main():
    db_password = os.environ["DB_PASSWORD"]
    connect("127.0.0.1", {s.closed}, "app", db_password)

main()
"""
    return f"DB_PASSWORD={q(pw)} python3 job.py\n", [("password", pw)], {"job.py": py}


@template("better_exceptions (variables)")
def better_exceptions_password(s, pw, shape):
    py = f"""import os, socket
import better_exceptions
better_exceptions.hook()

def login(host, user, password):
    sock = socket.create_connection((host, {s.closed}), timeout=2)
    sock.sendall(user.encode() + b":" + password.encode())

smtp_password = os.environ["SMTP_PASSWORD"]
login("127.0.0.1", "alerts", smtp_password)
"""
    return f"BETTER_EXCEPTIONS=1 SMTP_PASSWORD={q(pw)} python3 job.py\n", [("password", pw)], {"job.py": py}


@template("stackprinter (variables)")
def stackprinter_locals(s, pw, shape):
    py = f"""import os, socket
import stackprinter
stackprinter.set_excepthook(style="plaintext")

def upload(url, api_token):
    return socket.create_connection(("127.0.0.1", {s.closed}), timeout=2)

def main():
    api_token = os.environ["API_TOKEN"]
    upload("http://127.0.0.1:{s.closed}/v1/rows", api_token)

main()
"""
    return f"env -i PATH=\"$PATH\" API_TOKEN={q(pw)} python3 job.py\n", [("token", pw)], {"job.py": py}



# --- Spring Framework 4.3, as Debian packages it (libspring-*-java; Spring Boot is not in
# Debian). Its jars are named spring3-*.jar there whatever their version.

SPRING_CP = ":".join(f"/usr/share/java/{jar}.jar" for jar in (
    "spring3-context", "spring3-beans", "spring3-core", "spring3-expression", "spring3-aop",
    "commons-logging"))

SPRING_SENDER = """public class MailSender {
    private final String host;
    private final int port;
    private final String user;
    private final String password;
    public MailSender(String host, int port, String user, String password) {
        this.host = host; this.port = port; this.user = user; this.password = password;
    }
    public void send(String to) { throw new IllegalStateException("not connected to " + host + ":" + port); }
}
"""

SPRING_JOB = """import org.springframework.context.support.ClassPathXmlApplicationContext;
public class Job {
    public static void main(String[] a) {
        try (ClassPathXmlApplicationContext ctx = new ClassPathXmlApplicationContext("context.xml")) {
            ctx.getBean(MailSender.class).send("ops@corp.example");
        }
    }
}
"""

# The constructor's arguments in the wrong order: the password is given for the port.
SPRING_CONTEXT = """<?xml version="1.0" encoding="UTF-8"?>
<beans xmlns="http://www.springframework.org/schema/beans"
       xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
       xmlns:context="http://www.springframework.org/schema/context"
       xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
                           http://www.springframework.org/schema/context http://www.springframework.org/schema/context/spring-context.xsd">
    <context:property-placeholder location="file:mail.properties"/>
    <bean id="mailSender" class="MailSender">
        <constructor-arg value="${mail.host}"/>
        <constructor-arg value="${mail.password}"/>
        <constructor-arg value="${mail.user}"/>
        <constructor-arg value="${mail.port}"/>
    </bean>
</beans>
"""


@template("Spring Framework 4.3 from Debian (XML bean, constructor arguments)")
def spring_constructor_args(s, pw, shape):
    props = f"mail.host=127.0.0.1\nmail.port={s.closed}\nmail.user=alerts\nmail.password={pw}\n"
    script = (f"javac -cp {SPRING_CP} MailSender.java Job.java && java -cp {SPRING_CP}:. Job\n")
    return script, [("password", pw)], {"MailSender.java": SPRING_SENDER, "Job.java": SPRING_JOB,
                                        "context.xml": SPRING_CONTEXT, "mail.properties": props}


# Settings bound from a properties file by Spring's DataBinder, then validated: the
# BindException names the field and its `rejected value […]` (every shape of secret is
# longer than the 12 characters the validator allows).
SPRING_SETTINGS = """import java.io.FileReader;
import java.util.Properties;
import org.springframework.beans.MutablePropertyValues;
import org.springframework.validation.*;
public class Settings {
    private String host; private int port; private String user; private String password;
    public void setHost(String v) { host = v; } public String getHost() { return host; }
    public void setPort(int v) { port = v; } public int getPort() { return port; }
    public void setUser(String v) { user = v; } public String getUser() { return user; }
    public void setPassword(String v) { password = v; } public String getPassword() { return password; }
    public static void main(String[] a) throws Exception {
        Properties p = new Properties();
        p.load(new FileReader("mail.properties"));
        DataBinder binder = new DataBinder(new Settings(), "mail");
        binder.setValidator(new Validator() {
            public boolean supports(Class<?> c) { return c == Settings.class; }
            public void validate(Object o, Errors e) {
                String pw = ((Settings) o).getPassword();
                if (pw != null && pw.length() > 12)
                    e.rejectValue("password", "password.length", "at most 12 characters (the relay's limit)");
            }
        });
        binder.bind(new MutablePropertyValues(p));
        binder.validate();
        binder.close();
    }
}
"""


@template("Spring Framework 4.3 from Debian (DataBinder, rejected value)")
def spring_databinder(s, pw, shape):
    props = f"host=127.0.0.1\nport={s.closed}\nuser=alerts\npassword={pw}\n"
    script = f"javac -cp {SPRING_CP} Settings.java && java -cp {SPRING_CP}:. Settings\n"
    return script, [("password", pw)], {"Settings.java": SPRING_SETTINGS, "mail.properties": props}


# ---------------------------------------------------------------------------------------


def all_cases(servers, wanted=None):
    """Every case, or those whose id `wanted` accepts (only their servers then start)."""
    for n, (name, program, fn, shapes, count) in enumerate(TEMPLATES):
        pool = shapes or SHAPES
        picked = [pool[(n * 2 + k) % len(pool)] for k in range(count)]
        for k, shape in enumerate(picked):
            cid = f"{name}.{shape}" + (f"-{k + 1}" if picked.count(shape) > 1 else "")
            if wanted and not wanted(cid):
                continue
            pw = secret(shape)
            got = fn(servers, pw, shape)
            script, secrets = got[0], got[1]
            files = got[2] if len(got) > 2 else {}
            yield Case(cid, program, script, secrets, files)
