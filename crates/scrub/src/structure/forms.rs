//! Credential forms: the ways databases, servers and tools print a password, one row each
//! in [`FORMS`], each with a lexer of its own that reads the form as its grammar says
//! rather than by a pattern's boundaries.
//!
//! | form | goes | file |
//! |---|---|---|
//! | Oracle logon | `scott/«tiger»@ORCL`, `jdbc:oracle:thin:scott/«tiger»@//db/svc` | `oracle` |
//! | scheme-less DSN | `«user:pw»@tcp(db:3306)/x`, `«user:pw»@db:5432/x` | `dsn` |
//! | connection string | `Pwd=«…»;`, `Password="«…»"`, `pw=«…»` | `connection` |
//! | SQL | `IDENTIFIED BY '«…»'`, `PASSWORD '«…»'`, `Key (api_token)=(«…»)` | `sql` |
//! | SQL inserts | `INSERT INTO users (name, password_hash) VALUES ('ops', '«…»')` | `insert` |
//! | server configuration | `requirepass «…»`, `masterauth «…»` | `server_config` |
//! | tool flags | `sshpass -p «…»`, `['zip', '-P', '«…»']`, `htpasswd -b f u «…»` | `flags` (rows in `tool_flags`) |
//! | sshpass passwords of words | `sshpass -p «one two» ssh host` (a command joined by blanks) | `sshpass` |
//! | tool variables | `SSHPASS=«…»`, `MYSQL_PWD=«…»` | `variables` |
//! | option settings | `Setting --password (password) to «…»` | `settings` |
//! | protocol traces | `PASS «…»`, `AUTH PLAIN «…»`, `A1 LOGIN user «…»` | `protocol` |
//! | quoted back | configparser `found: '%«…»'`, ``Unknown .netrc keyword `«…»'``, pydantic's `input_value='«…»'` of a secret's field, `sed 's/@DB_PASSWORD@/«…»/'`, `"Bearer «…»"`, `/bot«…»/sendMessage`, `nonnumeric port: '«…»'`, `app.env: line 2: «…»: command not found` | `echoes` |
//! | test assertions | pytest's `E  assert '«…»' == '«…»'` under `> assert token == …`, Node's `+ '«…»'` after `[ERR_ASSERTION]: token …` | `assertions` |
//! | ports that are a password's piece | `invalid integer value "«Kq8v»" for connection option "port"`, `Port could not be cast to integer value as '«Kq8v»'`, `invalid port ":«Kq8v»" after host`, Java's `For input string: "«…»"` | `ports` |
//! | PHP frame arguments | `#0 /app/db.php(12): PDO->__construct('mysql:host=db', 'app', '«…»')` | `frames` |
//! | traceback variables | loguru's and better_exceptions' `│   └ '«…»'` under a secret's name, stackprinter's `api_token = '«…»'` and its wrapped lines | `dumped` |
//! | Spring's rejected values | `on field 'password': rejected value [«…»]; codes […]` | `spring` |
//! | host names | `host name "«pw»@db"`, `Could not connect to Redis at «pw»@db:6379` | `host` |
//!
//! A value any form finds goes wherever else it stands in the text too, when it cannot be
//! an ordinary word (`elsewhere`).
//!
//! A row names the words one of which the text must hold (its cues, matched without regard
//! to case) before its lexer reads it, so text without them costs a substring search. The
//! lexers compile no pattern: each is a scan that resumes after what it took, so a line of
//! many cues costs one pass. What they find is replaced in one splice; where two forms
//! claim overlapping text, the one that starts first wins.

mod assertions;
mod connection;
mod dsn;
mod dumped;
mod echoes;
mod elsewhere;
mod flags;
mod frames;
mod host;
mod insert;
mod lex;
mod oracle;
mod ports;
mod protocol;
mod server_config;
mod settings;
mod spring;
mod sql;
mod sshpass;
mod variables;

pub(super) use lex::Span;
use lex::Text;

/// A credential form and the lexer that finds it.
struct Form {
    #[cfg_attr(not(test), allow(dead_code))]
    name: &'static str,
    /// Lower-case strings one of which the text must hold for the lexer to run.
    cues: &'static [&'static str],
    /// Pushes the byte ranges of the secrets the form holds in the text.
    lex: fn(&Text<'_>, &mut Vec<Span>),
    /// A line with the form, the secret between `«` and `»`.
    #[cfg_attr(not(test), allow(dead_code))]
    takes: &'static str,
    /// A look-alike of the form that holds no secret and stays whole.
    #[cfg_attr(not(test), allow(dead_code))]
    keeps: &'static str,
}

const FORMS: &[Form] = &[
    Form {
        name: "Oracle logon",
        cues: &[
            "@", "sqlplus", "sqlldr", "expdp", "impdp", "exp ", "imp ", "rman", "connect", "conn ",
            "sql ", "dgmgrl", "tkprof", "orapwd",
        ],
        lex: oracle::secrets,
        takes: "+ sqlplus -s scott/«tiger99»@ORCL",
        keeps: "jdbc:oracle:thin:@db:1521:ORCL uses actions/checkout@v4",
    },
    Form {
        name: "scheme-less DSN",
        cues: &["@"],
        lex: dsn::secrets,
        takes: "dsn «app:pa55»@tcp(db:3306)/shop",
        keeps: "git@github.com:org/repo.git at 12:30 on db:5432",
    },
    Form {
        name: "connection string",
        cues: &["pwd", "password", "pw="],
        lex: connection::secrets,
        takes: "Driver={ODBC Driver 18};Server=db;UID=sa;PWD={«a;b}}c»};Encrypt=yes",
        keeps: "the password policy; see below",
    },
    Form {
        name: "SQL",
        cues: &[
            "identified",
            "password",
            "key (",
            "duplicate entry",
            "dup key",
            "failing row",
        ],
        lex: sql::secrets,
        takes: "STATEMENT:  CREATE ROLE app LOGIN PASSWORD '«Xq7 w$9»';",
        keeps: "ERROR:  syntax error at or near \"IDENTIFIED\"",
    },
    Form {
        name: "SQL inserts",
        cues: &["insert into "],
        lex: insert::secrets,
        takes: "STATEMENT:  INSERT INTO users (name, password_hash) VALUES ('ops', '«Xq7 w$9»');",
        keeps: "INSERT INTO users (name, email) VALUES ('ops', 'ops')",
    },
    Form {
        name: "server configuration",
        cues: &["requirepass", "masterauth", "primaryauth", "auth-pass"],
        lex: server_config::secrets,
        takes: "redis.conf: requirepass «Xq7w9Lm2»",
        keeps: "requirepass is not set",
    },
    Form {
        name: "tool flags",
        cues: &[""],
        lex: flags::secrets,
        takes: "+ 7z a -p«S3cret» x.7z",
        keeps: "+ ssh -p 2222 host && mkdir -p /x && psql -p 5432",
    },
    Form {
        name: "sshpass passwords of words",
        cues: &["sshpass"],
        lex: sshpass::secrets,
        takes: "Command failed: sshpass -p «Xq7w9» «Lm2 pear» ssh backup@db true",
        keeps: "+ sshpass -e ssh -p 22 backup@db",
    },
    Form {
        name: "tool variables",
        cues: &[
            "sshpass",
            "mysql_pwd",
            "rsync_password",
            "pgpassword",
            "rediscli_auth",
            "sqlcmdpassword",
            "lftp_password",
        ],
        lex: variables::secrets,
        takes: "+ SSHPASS=«Xq7w9Lm2» sshpass -e ssh backup@db",
        keeps: "SSHPASS unset; sshpass -e exits 3",
    },
    Form {
        name: "option settings",
        cues: &["setting --"],
        lex: settings::secrets,
        takes: "Setting --http-password (httppassword) to «Xq7 w9»",
        keeps: "Setting --user (user) to bob",
    },
    Form {
        name: "protocol traces",
        cues: &["pass ", "auth", "login ", "ftp> user "],
        lex: protocol::secrets,
        takes: "*cmd* 'PASS «Xq7w9Lm2»'",
        keeps: "--- PASS: TestLogin (0.01s)",
    },
    Form {
        name: "configparser's interpolation error",
        cues: &["must be followed by '%'"],
        lex: echoes::configparser,
        takes: "'%' must be followed by '%' or '(', found: '%«Xq7 w9»'",
        keeps: "'%' must be followed by '%' or '(', found: '%'",
    },
    Form {
        name: ".netrc",
        cues: &[".netrc keyword", "machine ", "default "],
        lex: echoes::netrc,
        takes: "ftp: Unknown .netrc keyword `«Xq7w9»'",
        keeps: "machine db login backup",
    },
    Form {
        name: "pydantic input values",
        cues: &["input_value="],
        lex: echoes::pydantic,
        takes: "api_key\n  too long [type=string_too_long, input_value='«Xq7w9»', input_type=str]",
        keeps: "db_host\n  too long [type=string_too_long, input_value='db', input_type=str]",
    },
    Form {
        name: "authorization schemes in strings",
        cues: &["bearer ", "token ", "basic "],
        lex: echoes::auth_schemes,
        takes: "    sock.sendall(b\"Token «Xq7 w9» \" + payload)",
        keeps: "raise AuthError(\"Token expired\")",
    },
    Form {
        name: "commands in a settings file",
        cues: &[": command not found"],
        lex: echoes::env_file_commands,
        takes: "./app.env: line 2: «wombat»: command not found",
        keeps: "./run.sh: line 2: wombat: command not found",
    },
    Form {
        name: "ports that are passwords",
        cues: &["nonnumeric port: '"],
        lex: echoes::nonnumeric_port,
        takes: "http.client.InvalidURL: nonnumeric port: '«Sup3r!5yit»'",
        keeps: "http.client.InvalidURL: nonnumeric port: ''",
    },
    Form {
        name: "Telegram bot paths",
        cues: &["/bot"],
        lex: echoes::telegram,
        takes: "401 for url: https://api.telegram.org/bot«Xq7w9Lm2pe»/sendMessage",
        keeps: "GET /bots/sendMessage",
    },
    Form {
        name: "sed templates",
        cues: &["sed "],
        lex: echoes::sed,
        takes: "+ sed -i 's/@DB_PASSWORD@/«Xq7w9»/' app.conf",
        keeps: "+ sed -i 's/@DB_HOST@/db/' app.conf",
    },
    Form {
        name: "test assertions",
        cues: &["assert"],
        lex: assertions::secrets,
        takes: ">       assert token == expected\nE       AssertionError: assert '«Xq7w9»' == '«Lm2p»'",
        keeps: ">       assert count == 3\nE       AssertionError: assert 2 == 3",
    },
    Form {
        name: "Node assertions",
        cues: &["err_assertion"],
        lex: assertions::node,
        takes: "AssertionError [ERR_ASSERTION]: token rotated?\n+ '«Xq7w9»'\n- '«Lm2p»'",
        keeps: "AssertionError [ERR_ASSERTION]: count differs\n+ 3\n- 4",
    },
    Form {
        name: "ports that are a password's piece",
        cues: &[
            "invalid integer value \"",
            "port could not be cast",
            "invalid port \":",
            "numberformatexception: for input string",
        ],
        lex: ports::secrets,
        takes: "psql: error: invalid integer value \"«Kq8vN2xL»\" for connection option \"port\"",
        keeps: "psql: error: invalid integer value \"99999\" for connection option \"port\"",
    },
    Form {
        name: "PHP frame arguments",
        cues: &["): ", "[internal function]: "],
        lex: frames::secrets,
        takes: "#0 /app/db.php(12): PDO->__construct('mysql:host=db', 'app', '«Xk29fjQmLr»')",
        keeps: "#1 /app/run.php(8): import('customers.csv', 'app', 'daily')",
    },
    Form {
        name: "variable trees",
        cues: &["└ "],
        lex: dumped::trees,
        takes: "    login(user, smtp_password)\n    │           └ «'Xq7w9Lm2'»",
        keeps: "    login(user, smtp_password)\n    │     └ 'alerts'",
    },
    Form {
        name: "stackprinter variables",
        cues: &["     "],
        lex: dumped::stackprinter,
        takes: "    ..........\n     api_token = «'Xq7w9Lm2pe»\n                  «Rt5pQ9'»",
        keeps: "    ..........\n     host = '127.0.0.1'",
    },
    Form {
        name: "Spring's rejected values",
        cues: &["': rejected value ["],
        lex: spring::secrets,
        takes: "Field error in object 'mail' on field 'password': rejected value [«Xq7w9Lm2»]; codes [x]",
        keeps: "Field error in object 'mail' on field 'port': rejected value [smtp]; codes [x]",
    },
    Form {
        name: "host names",
        cues: &["host", "lookup", "enotfound", "eai_again", "redis at "],
        lex: host::secrets,
        takes: "could not translate host name \"«Xq7w9»@127.0.0.1\" to address",
        keeps: "could not translate host name \"db.internal\" to address",
    },
];

/// Byte ranges of the secrets every form finds in `text`, sorted, perhaps overlapping.
/// What the lexer `lex` leaves of `text`: each span it finds replaced by the marker, as
/// `structure` splices them. The one test helper of every form's tests.
#[cfg(test)]
fn lexed(lex: fn(&Text<'_>, &mut Vec<Span>), text: &str) -> String {
    let mut spans = Vec::new();
    lex(&Text::new(text), &mut spans);
    super::splice(text, spans).into_owned()
}

/// Asserts that `lex` turns each case's text into its wanted text.
#[cfg(test)]
fn assert_lexed(lex: fn(&Text<'_>, &mut Vec<Span>), cases: &[(&str, &str)]) {
    for (text, want) in cases {
        assert_eq!(lexed(lex, text), *want, "{text}");
    }
}

pub(super) fn secrets(text: &str) -> Vec<Span> {
    let text = Text::new(text);
    let mut spans = Vec::new();
    for form in FORMS {
        if form.cues.iter().any(|cue| text.lower.contains(cue)) {
            (form.lex)(&text, &mut spans);
        }
    }
    elsewhere::spread(&text, &mut spans);
    spans.sort_unstable();
    spans
}

#[cfg(test)]
mod tests {
    use super::super::super::marker::REDACTED;
    use super::*;

    /// `line` without its marks, and with the marked parts replaced by the marker.
    fn unmark(line: &str) -> (String, String) {
        let plain = line.replace(['«', '»'], "");
        let mut want = String::new();
        let mut rest = line;
        while let Some(open) = rest.find('«') {
            want.push_str(&rest[..open]);
            want.push_str(REDACTED);
            let close = rest.find('»').expect("every « has a »");
            rest = &rest[close + '»'.len_utf8()..];
        }
        want.push_str(rest);
        (plain, want)
    }

    fn redacted(text: &str) -> String {
        super::super::splice(text, secrets(text)).into_owned()
    }

    #[test]
    fn every_form_takes_its_example_and_keeps_its_look_alike() {
        for form in FORMS {
            let (plain, want) = unmark(form.takes);
            assert_eq!(redacted(&plain), want, "{}", form.name);
            assert_eq!(redacted(form.keeps), form.keeps, "{}", form.name);
            assert!(
                form.cues
                    .iter()
                    .any(|cue| plain.to_ascii_lowercase().contains(cue)),
                "{}: its example holds none of its cues",
                form.name
            );
        }
    }

    #[test]
    fn a_form_found_again_is_left_alone() {
        for form in FORMS {
            let (_, once) = unmark(form.takes);
            assert_eq!(redacted(&once), once, "{}", form.name);
        }
    }
}
