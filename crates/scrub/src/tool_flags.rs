//! Passwords given to command-line tools as the value of a flag, as a `set -x` trace or a
//! tool's own usage error shows them: `redis-cli -a PW`, `sqlcmd -P PW`, `mongodump -p PW`,
//! `smbclient -U user%PW`, `ldapsearch -w PW`, `lftp -u user,PW`, `mysql -pPW`,
//! `docker login -p PW`, `sshpass -p PW`.
//!
//! One row per tool and flag ([`TOOLS`]), each taken from the tool's own manual (its
//! `doc`). A flag counts only after the tool's name on the same line and before a shell
//! separator, so `grep -w word` and `sort -u` keep their arguments, and for a row with a
//! subcommand only after that word too (`docker login -p`, not `docker run -p 80:80`). The
//! value is the next word (or what follows `=` for a long flag), or for an attached flag
//! what follows it in the same word (`mysql -pPW`: `-p PW` makes PW a database name); whole
//! when it is quoted as a trace quotes it (`'two words'`); for `user%password` forms only
//! what follows the separator goes.
//!
//! One pass over each line finds every flag of every tool named on it, so the cost is
//! linear in the text however many flags it holds.

use std::borrow::Cow;

use super::marker::REDACTED;

/// What of a flag's value is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// All of it.
    Whole,
    /// What follows the first of this character (`user%password`); nothing without it.
    After(char),
}

/// Where a flag's value stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The next word, or after `=` in the same word for a long flag.
    Next,
    /// In the same word, right after the flag (`-pPW`), or after `=` for a long flag
    /// (`--password=PW`); the next word is something else.
    Attached,
}

/// A flag of a tool whose value holds a password.
struct Tool {
    /// The names the program runs under.
    programs: &'static [&'static str],
    /// A word that must come between the program and the flag (`login`), if any.
    subcommand: Option<&'static str>,
    flag: &'static str,
    form: Form,
    part: Part,
    /// The manual that documents the flag.
    #[cfg_attr(not(test), allow(dead_code))]
    doc: &'static str,
}

const MONGO: &[&str] = &[
    "mongo",
    "mongosh",
    "mongodump",
    "mongorestore",
    "mongoexport",
    "mongoimport",
    "mongostat",
    "mongotop",
    "mongofiles",
];
const LDAP: &[&str] = &[
    "ldapsearch",
    "ldapadd",
    "ldapmodify",
    "ldapdelete",
    "ldapmodrdn",
    "ldapcompare",
    "ldapwhoami",
    "ldappasswd",
    "ldapexop",
];
const SAMBA: &[&str] = &["smbclient", "smbget", "smbcacls", "rpcclient"];
const MYSQL: &[&str] = &[
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlcheck",
    "mysqlshow",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
];
const MYSQL_DOC: &str = "https://dev.mysql.com/doc/refman/26.10/en/command-line-options.html";

const TOOLS: &[Tool] = &[
    Tool {
        programs: &["redis-cli"],
        subcommand: None,
        form: Form::Next,
        flag: "-a",
        part: Part::Whole,
        doc: "https://redis.io/docs/latest/develop/tools/cli/",
    },
    Tool {
        programs: &["redis-cli"],
        subcommand: None,
        form: Form::Next,
        flag: "--pass",
        part: Part::Whole,
        doc: "https://redis.io/docs/latest/develop/tools/cli/",
    },
    Tool {
        programs: &["sqlcmd", "bcp"],
        subcommand: None,
        form: Form::Next,
        flag: "-P",
        part: Part::Whole,
        doc: "https://learn.microsoft.com/en-us/sql/tools/sqlcmd/sqlcmd-utility",
    },
    Tool {
        programs: MONGO,
        subcommand: None,
        form: Form::Next,
        flag: "-p",
        part: Part::Whole,
        doc: "https://www.mongodb.com/docs/database-tools/mongodump/",
    },
    Tool {
        programs: MONGO,
        subcommand: None,
        form: Form::Next,
        flag: "--password",
        part: Part::Whole,
        doc: "https://www.mongodb.com/docs/database-tools/mongodump/",
    },
    Tool {
        programs: SAMBA,
        subcommand: None,
        form: Form::Next,
        flag: "-U",
        part: Part::After('%'),
        doc: "https://www.samba.org/samba/docs/current/man-html/smbclient.1.html",
    },
    Tool {
        programs: SAMBA,
        subcommand: None,
        form: Form::Next,
        flag: "--user",
        part: Part::After('%'),
        doc: "https://www.samba.org/samba/docs/current/man-html/smbclient.1.html",
    },
    Tool {
        programs: LDAP,
        subcommand: None,
        form: Form::Next,
        flag: "-w",
        part: Part::Whole,
        doc: "https://www.openldap.org/software/man.cgi?query=ldapsearch",
    },
    Tool {
        programs: &["lftp"],
        subcommand: None,
        form: Form::Next,
        flag: "-u",
        part: Part::After(','),
        doc: "https://lftp.yar.ru/lftp-man.html",
    },
    Tool {
        programs: MYSQL,
        subcommand: None,
        form: Form::Attached,
        flag: "-p",
        part: Part::Whole,
        doc: MYSQL_DOC,
    },
    Tool {
        programs: MYSQL,
        subcommand: None,
        form: Form::Attached,
        flag: "--password",
        part: Part::Whole,
        doc: MYSQL_DOC,
    },
    Tool {
        programs: &["docker"],
        subcommand: Some("login"),
        form: Form::Next,
        flag: "-p",
        part: Part::Whole,
        doc: "https://docs.docker.com/reference/cli/docker/login/",
    },
    Tool {
        programs: &["podman", "buildah"],
        subcommand: Some("login"),
        form: Form::Next,
        flag: "-p",
        part: Part::Whole,
        doc: "https://docs.podman.io/en/latest/markdown/podman-login.1.html",
    },
    Tool {
        programs: &["sshpass"],
        subcommand: None,
        form: Form::Next,
        flag: "-p",
        part: Part::Whole,
        doc: "https://manpages.debian.org/bookworm/sshpass/sshpass.1.en.html",
    },
    // sshpass reads its options with getopt, so the password may also be attached.
    Tool {
        programs: &["sshpass"],
        subcommand: None,
        form: Form::Attached,
        flag: "-p",
        part: Part::Whole,
        doc: "https://manpages.debian.org/bookworm/sshpass/sshpass.1.en.html",
    },
];

/// Words that end one command and start another on a shell line.
const SEPARATORS: &[&str] = &["|", "||", "&&", ";", "&", "|&"];

/// Replaces the passwords of [`TOOLS`] flags with [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let named = TOOLS
        .iter()
        .any(|tool| tool.programs.iter().any(|p| text.contains(p)));
    if !named {
        return Cow::Borrowed(text);
    }
    let mut spans = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        spans.extend(
            secrets_in(line)
                .into_iter()
                .map(|(s, e)| (line_start + s, line_start + e)),
        );
        line_start += line.len();
    }
    super::marker::splice(text, &spans)
}

/// The byte ranges of `line` that are passwords, in order.
fn secrets_in(line: &str) -> Vec<(usize, usize)> {
    let words = words(line);
    let mut found = Vec::new();
    // The tool whose command this is, and the subcommand words seen since its name.
    let mut program: Option<&str> = None;
    let mut after: Vec<&str> = Vec::new();
    for (i, &(start, end)) in words.iter().enumerate() {
        let word = &line[start..end];
        if SEPARATORS.contains(&word) {
            program = None;
            continue;
        }
        let name = word
            .trim_matches(['\'', '"'])
            .rsplit('/')
            .next()
            .unwrap_or("");
        if TOOLS.iter().any(|t| t.programs.contains(&name)) {
            program = Some(name);
            after.clear();
            continue;
        }
        let Some(current) = program else { continue };
        // `ping;` ends the command as `;` alone does.
        if word.ends_with([';', '|', '&']) {
            program = None;
        }
        let tools = TOOLS.iter().filter(|t| {
            t.programs.contains(&current) && t.subcommand.is_none_or(|sub| after.contains(&sub))
        });
        for tool in tools {
            let value = value_of(tool, word, start, words.get(i + 1).copied());
            if let Some(span) = value.and_then(|v| secret_part(line, v, tool.part)) {
                found.push(span);
            }
        }
        after.push(word);
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Where the value of `tool`'s flag is, when the word at `start` is that flag: in the
/// word itself or the `next` one, as the tool's form says.
fn value_of(
    tool: &Tool,
    word: &str,
    start: usize,
    next: Option<(usize, usize)>,
) -> Option<(usize, usize)> {
    // A trace quotes a whole word that holds a blank or a shell character: `'-pS3 cr$t'`.
    let quoted = word.len() >= 2 && word.starts_with(['\'', '"']) && word.ends_with(&word[..1]);
    let (word, start) = if quoted {
        (&word[1..word.len() - 1], start + 1)
    } else {
        (word, start)
    };
    let end = start + word.len();
    let long = tool.flag.starts_with("--");
    let rest = word.strip_prefix(tool.flag)?;
    match (tool.form, long) {
        (_, true) if rest.starts_with('=') && rest.len() > 1 => {
            Some((start + tool.flag.len() + 1, end))
        }
        (Form::Next, _) if rest.is_empty() => next,
        (Form::Attached, false) if !rest.is_empty() => Some((start + tool.flag.len(), end)),
        _ => None,
    }
}

/// The part of the value at `span` that is the secret, if there is one.
fn secret_part(line: &str, (start, end): (usize, usize), part: Part) -> Option<(usize, usize)> {
    let value = &line[start..end];
    if value.is_empty() || value.starts_with('-') || value.contains(REDACTED) {
        return None;
    }
    match part {
        Part::Whole => Some((start, end)),
        Part::After(separator) => {
            let quote = value.starts_with(['\'', '"']) as usize;
            let at = value.find(separator)?;
            let close =
                (quote == 1 && value.len() > at + 1 && value.ends_with(['\'', '"'])) as usize;
            let secret = (start + at + 1, end - close);
            (secret.0 < secret.1).then_some(secret)
        }
    }
}

/// The words of `line` as byte ranges: runs of non-blank characters, a quoted stretch
/// (`'…'` or `"…"`, as `set -x` and shells quote) counting as part of its word.
fn words(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            if matches!(b[i], b'\'' | b'"') {
                let quote = b[i];
                i += 1;
                while i < b.len() && b[i] != quote {
                    i += 1;
                }
            }
            i += 1;
        }
        words.push((start, i.min(b.len())));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        redact(text).into_owned()
    }

    #[test]
    fn every_tool_flag_in_a_trace_loses_its_password() {
        let cases = [
            (
                "+ redis-cli -h cache -a s3cr3tPW ping",
                "+ redis-cli -h cache -a [REDACTED] ping",
            ),
            (
                "redis-cli --pass s3cr3tPW ping",
                "redis-cli --pass [REDACTED] ping",
            ),
            (
                "redis-cli --pass=s3cr3tPW ping",
                "redis-cli --pass=[REDACTED] ping",
            ),
            (
                "+ /opt/mssql-tools/bin/sqlcmd -S db -U sa -P 'Str0ng P@ss' -Q 'SELECT 1'",
                "+ /opt/mssql-tools/bin/sqlcmd -S db -U sa -P [REDACTED] -Q 'SELECT 1'",
            ),
            (
                "mongodump -u admin -p s3cr3tPW --out /b",
                "mongodump -u admin -p [REDACTED] --out /b",
            ),
            (
                "mongosh --password=s3cr3tPW db",
                "mongosh --password=[REDACTED] db",
            ),
            (
                "smbclient //fs/share -U backup%s3cr3tPW",
                "smbclient //fs/share -U backup%[REDACTED]",
            ),
            (
                "smbclient //fs/share --user='backup%two words'",
                "smbclient //fs/share --user='backup%[REDACTED]'",
            ),
            (
                "ldapsearch -x -D cn=admin -w s3cr3tPW -b dc=x",
                "ldapsearch -x -D cn=admin -w [REDACTED] -b dc=x",
            ),
            (
                "lftp -u deploy,s3cr3tPW sftp://host",
                "lftp -u deploy,[REDACTED] sftp://host",
            ),
            (
                "+ mysqldump -u app -ps3cr3tPW shop",
                "+ mysqldump -u app -p[REDACTED] shop",
            ),
            (
                "mysql --password=s3cr3tPW -h db",
                "mysql --password=[REDACTED] -h db",
            ),
            (
                "+ docker login -u ci -p s3cr3tPW registry.example.com",
                "+ docker login -u ci -p [REDACTED] registry.example.com",
            ),
            (
                "podman login --username ci -p s3cr3tPW quay.io",
                "podman login --username ci -p [REDACTED] quay.io",
            ),
            (
                "sshpass -p s3cr3tPW ssh backup@host",
                "sshpass -p [REDACTED] ssh backup@host",
            ),
            ("+ sshpass -ps3cr3tPW ssh h", "+ sshpass -p[REDACTED] ssh h"),
            // bash's xtrace quotes a word with a blank or a shell character whole.
            (
                "+ mysql -uroot '-pSup3r S3cret' db",
                "+ mysql -uroot '-p[REDACTED]' db",
            ),
            ("+ mysql '-phunt$er2'", "+ mysql '-p[REDACTED]'"),
            (
                "+ redis-cli '--pass=two words' ping",
                "+ redis-cli '--pass=[REDACTED]' ping",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(r(text), want, "{text}");
        }
    }

    #[test]
    fn the_same_flags_of_other_programs_keep_their_values() {
        for text in [
            "grep -w word file",
            "sort -u -a file",
            "redis-cli ping; sort -a names",
            "echo redis-cli | grep -a text",
            "smbclient //fs/share -U backup",
            "lftp -u deploy sftp://host",
            "ldapsearch -x -W -b dc=x",
            "redis-cli -a",
            "mongodump -p --out /b",
            "mysql -u app -p shop",
            "mysql --password -h db",
            "docker run -p 8080:80 nginx",
            "docker login -u ci --password-stdin",
            "sshpass -f /run/pw ssh host",
        ] {
            assert_eq!(r(text), text);
        }
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }

    /// Every flag of a tool named once is found in one pass, however many there are: the
    /// cost stays linear (each pass found only one, with a regex per tool, before).
    #[test]
    fn every_flag_on_a_long_line_goes_in_one_pass() {
        let line = "mysql -pmysql ".repeat(2000);
        let once = r(&line);
        assert_eq!(once.matches(REDACTED).count(), 2000);
        assert_eq!(r(&once), once);
    }

    #[test]
    fn scrubbing_again_changes_nothing() {
        let once = r("redis-cli -a s3cr3tPW && smbclient -U u%pw //x");
        assert_eq!(r(&once), once);
    }

    #[test]
    fn every_row_names_its_manual() {
        for tool in TOOLS {
            assert!(tool.doc.starts_with("https://"), "{}", tool.flag);
            assert!(!tool.programs.is_empty());
            assert!(tool.flag.starts_with('-'));
        }
    }
}
