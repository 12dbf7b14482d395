//! The lexer for the password flags and operands of command-line tools (the rows are in
//! `tool_flags`), reading a command line as a `set -x` trace or a tool's usage error shows
//! it, or an argument list as a program prints it (`['sshpass', '-p', '…', 'ssh', …]`,
//! `["zip", "-P", "…"]`, `[ 'zip', '-P', '…' ]`).
//!
//! A flag counts only after its tool's name on the same line and before a shell separator,
//! so `grep -w word` and `sort -u` keep their arguments, and for a row with a subcommand
//! only after that word too (`docker login -p`, not `docker run -p 80:80`). A program that
//! runs another (`sshpass`, `sudo`, `env`, `timeout`, …: `RUNNERS`) hands the line over at
//! its first operand, so `sshpass -p PW ssh -p 22 host` keeps ssh's port. The value is the
//! next word (or what follows `=` for a long flag), or for an attached flag what follows it
//! in the same word (`mysql -pPW`: `-p PW` makes PW a database name); whole when it is
//! quoted as a trace quotes it (`'two words'`); for `user%password` forms only what follows
//! the separator goes, for OpenSSL's `pass:PW` only what follows `pass:`. An operand row
//! (`htpasswd -b FILE USER PW`) counts the command's operands, leaving out its flags and
//! their values.
//!
//! One pass over each line finds every flag of every tool named on it, so the cost is
//! linear in the text however many flags it holds.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use super::super::super::marker::REDACTED;
use super::super::super::tool_flags::{Form, OPERANDS, Part, RUNNERS, TOOLS, Tool};
use super::lex::{Span, Text, quoted_end};

/// The programs of `TOOLS` and `OPERANDS`.
static PROGRAMS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    let tools = TOOLS.iter().flat_map(|t| t.programs.iter());
    tools
        .chain(OPERANDS.iter().flat_map(|o| o.programs.iter()))
        .copied()
        .collect()
});

/// The subcommand words of `TOOLS` rows (`login`).
static SUBCOMMANDS: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| TOOLS.iter().filter_map(|t| t.subcommand).collect());

/// Words that end one command and start another on a shell line.
const SEPARATORS: &[&str] = &["|", "||", "&&", ";", "&", "|&"];

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    // One walk over the text's words: is any of them a program with rows?
    let named = text
        .raw
        .split(|c: char| {
            c.is_ascii_whitespace() || matches!(c, '\'' | '"' | '[' | ']' | '(' | ')' | ',')
        })
        .any(|word| PROGRAMS.contains(word.rsplit('/').next().unwrap_or(word)));
    if !named {
        return;
    }
    let mut line_start = 0;
    for line in text.raw.split_inclusive('\n') {
        let mut found = Vec::new();
        let lists = lists(line);
        // A list's words are read as a list only, not as a shell line's too. (Both are in
        // order, so one walk over them sorts the words out.)
        let mut next_list = 0;
        let mut shell: Vec<Span> = Vec::new();
        for (start, end) in words(line) {
            while lists
                .get(next_list)
                .is_some_and(|l| l[l.len() - 1].1 + 1 < start)
            {
                next_list += 1;
            }
            let in_a_list = lists.get(next_list).is_some_and(|l| end >= l[0].0);
            if !in_a_list {
                shell.push((start, end));
            }
        }
        scan(line, &shell, &mut found);
        // A command quoted whole for a shell or ssh (`bash -c 'mysql -p… app'`) is read
        // as a line of its own too.
        for &(start, end) in &shell {
            let quote = line.as_bytes()[start];
            let inner = &line[start..end];
            if matches!(quote, b'\'' | b'"')
                && end - start > 2
                && inner.as_bytes()[inner.len() - 1] == quote
                && inner.contains(' ')
            {
                let inside: Vec<Span> = words(&inner[1..inner.len() - 1])
                    .into_iter()
                    .map(|(s, e)| (start + 1 + s, start + 1 + e))
                    .collect();
                scan(line, &inside, &mut found);
            }
        }
        for list in &lists {
            scan(line, list, &mut found);
        }
        out.extend(
            found
                .into_iter()
                .map(|(s, e)| (line_start + s, line_start + e)),
        );
        line_start += line.len();
    }
}

/// A program's name as a word gives it: without quotes, brackets or a directory.
fn program_name(word: &str) -> &str {
    let bare = word.trim_matches(['\'', '"', '[', ']', '(', ')', ',']);
    bare.rsplit('/').next().unwrap_or(bare)
}

fn is_program(name: &str) -> bool {
    ROWS.contains_key(name)
}

/// The rows of a program's flags, and the flags that take a value if it runs another.
type Rows = (Vec<&'static Tool>, Option<&'static [&'static str]>);

/// Every program of `TOOLS`, `OPERANDS` and `RUNNERS`, with its [`Rows`]: built once, so a
/// line of many words asks one look-up of each, not a walk over the tables.
static ROWS: LazyLock<HashMap<&'static str, Rows>> = LazyLock::new(|| {
    let mut rows: HashMap<&'static str, Rows> = HashMap::new();
    for tool in TOOLS {
        for &program in tool.programs {
            let tools = &mut rows.entry(program).or_default().0;
            if !tools.iter().any(|t| std::ptr::eq(*t, tool)) {
                tools.push(tool);
            }
        }
    }
    for &program in OPERANDS.iter().flat_map(|o| o.programs.iter()) {
        rows.entry(program).or_default();
    }
    for &(runner, valued) in RUNNERS {
        rows.entry(runner).or_default().1.get_or_insert(valued);
    }
    rows
});

/// The rows of program `name`'s flags, and the flags that take a value if it runs another.
fn rows_of(name: &str) -> (&'static [&'static Tool], Option<&'static [&'static str]>) {
    match ROWS.get(name) {
        Some((tools, runner)) => (tools, *runner),
        None => (&[], None),
    }
}

/// Pushes the byte ranges of `line` that are passwords given to the tools in `words`.
fn scan(line: &str, words: &[Span], out: &mut Vec<Span>) {
    // The tool whose command this is, the words of its command so far, and whether the
    // next word is the value of a runner's flag.
    let mut program: Option<&str> = None;
    let mut command: Vec<Span> = Vec::new();
    let mut runner_value = false;
    // The rows of the program's flags, and the flags that take a value if it runs another.
    let mut tools: &[&Tool] = &[];
    let mut runner: Option<&[&str]> = None;
    // The subcommand words of `TOOLS` rows seen in the command (a few at most).
    let mut subcommands: Vec<&str> = Vec::new();
    for (i, &(start, end)) in words.iter().enumerate() {
        let word = &line[start..end];
        if SEPARATORS.contains(&word) {
            operands(line, program, &command, out);
            program = None;
            command.clear();
            continue;
        }
        // A flag (perhaps quoted whole by a trace) is no program's name.
        let flag = word.trim_start_matches(['\'', '"']).starts_with('-');
        let name = program_name(word);
        if !flag && is_program(name) {
            operands(line, program, &command, out);
            program = Some(name);
            (tools, runner) = rows_of(name);
            command.clear();
            subcommands.clear();
            runner_value = false;
            continue;
        }
        if program.is_none() {
            continue;
        }
        if flag {
            let subcommand_given =
                |t: &&&Tool| t.subcommand.is_none_or(|sub| subcommands.contains(&sub));
            for tool in tools.iter().filter(subcommand_given) {
                let value = value_of(tool, word, start, words.get(i + 1).copied());
                if let Some(span) = value.and_then(|v| secret_part(line, v, tool.part)) {
                    out.push(span);
                }
            }
        }
        if let Some(valued) = runner {
            if runner_value {
                runner_value = false;
            } else if word.starts_with('-') {
                runner_value = valued.contains(&word);
            } else {
                // The runner's command starts here.
                program = is_program(name).then_some(name);
                (tools, runner) = rows_of(name);
                command.clear();
                subcommands.clear();
                continue;
            }
        }
        command.push((start, end));
        if SUBCOMMANDS.contains(word) && !subcommands.contains(&word) {
            subcommands.push(word);
        }
        // `ping;` ends the command as `;` alone does.
        if word.ends_with([';', '|', '&']) {
            operands(line, program, &command, out);
            program = None;
            command.clear();
        }
    }
    operands(line, program, &command, out);
}

/// Pushes the passwords that are operands of `program`'s `command` (its words after its
/// name), by the rows of `OPERANDS`.
fn operands(line: &str, program: Option<&str>, command: &[Span], out: &mut Vec<Span>) {
    let Some(program) = program else { return };
    for row in OPERANDS.iter().filter(|o| o.programs.contains(&program)) {
        let mut found = Vec::new();
        let mut letters = String::new();
        let mut skip = false;
        let mut subcommand_seen = row.subcommand.is_none();
        for &(start, end) in command {
            let word = line[start..end].trim_matches(['\'', '"']);
            if skip {
                skip = false;
            } else if !subcommand_seen {
                subcommand_seen = row.subcommand == Some(word);
            } else if word.starts_with('-') && word.len() > 1 {
                skip = row.valued.contains(&word);
                if !word.starts_with("--") && !skip {
                    letters.push_str(&word[1..]);
                }
            } else {
                found.push((start, end));
            }
        }
        if !subcommand_seen || row.flag.is_some_and(|f| !letters.contains(f)) {
            continue;
        }
        let index = match row.short_flag {
            Some((flag, index)) if letters.contains(flag) => index,
            _ => row.index,
        };
        if let Some(&span) = found.get(index)
            && let Some(secret) = secret_part(line, unquoted(line, span), Part::Whole)
        {
            out.push(secret);
        }
    }
}

/// `span` without the quotes a trace puts around a whole word.
fn unquoted(line: &str, (start, end): Span) -> Span {
    let word = &line[start..end];
    let quoted = word.len() >= 2 && word.starts_with(['\'', '"']) && word.ends_with(&word[..1]);
    if quoted {
        (start + 1, end - 1)
    } else {
        (start, end)
    }
}

/// Where the value of `tool`'s flag is, when the word at `start` is that flag: in the
/// word itself or the `next` one, as the tool's form says.
fn value_of(tool: &Tool, word: &str, start: usize, next: Option<Span>) -> Option<Span> {
    // A trace quotes a whole word that holds a blank or a shell character: `'-pS3 cr$t'`.
    let (inner_start, inner_end) = unquoted(word, (0, word.len()));
    let word = &word[inner_start..inner_end];
    let start = start + inner_start;
    let end = start + word.len();
    let long = tool.flag.starts_with("--");
    let rest = word.strip_prefix(tool.flag)?;
    match (tool.form, long) {
        (_, true) if rest.starts_with('=') && rest.len() > 1 => {
            Some((start + tool.flag.len() + 1, end))
        }
        (Form::Next, _) if rest.is_empty() => next,
        // A short option's value may be glued on, as getopt reads it (`-w'Ldap9Passw'`).
        (Form::Next, false) if tool.flag.len() == 2 && !rest.is_empty() => {
            Some((start + tool.flag.len(), end))
        }
        (Form::Attached, false) if !rest.is_empty() => Some((start + tool.flag.len(), end)),
        _ => None,
    }
}

/// The part of the value at `span` that is the secret, if there is one.
fn secret_part(line: &str, (start, end): Span, part: Part) -> Option<Span> {
    let value = &line[start..end];
    let empty_quotes = matches!(value, "''" | "\"\"");
    // A value an earlier layer cut short (`tOmi…@[REDACTED]:WSz`) still goes whole.
    let done = value.trim_matches(['\'', '"']) == REDACTED;
    if value.is_empty() || value.starts_with('-') || done || empty_quotes {
        return None;
    }
    let quote = value.starts_with(['\'', '"']) as usize;
    let close = (quote == 1 && value.len() > 1 && value.ends_with(&value[..1])) as usize;
    match part {
        Part::Whole => Some((start, end)),
        Part::After(separator) => {
            let at = value.find(separator)?;
            let close =
                (quote == 1 && value.len() > at + 1 && value.ends_with(['\'', '"'])) as usize;
            let secret = (start + at + 1, end - close);
            (secret.0 < secret.1).then_some(secret)
        }
        Part::Prefixed(prefix) => {
            let inner = &value[quote..];
            let secret = (start + quote + prefix.len(), end - close);
            (inner.starts_with(prefix) && secret.0 < secret.1).then_some(secret)
        }
    }
}

/// The words of `line` as byte ranges: runs of non-blank characters, a quoted stretch
/// (`'…'` or `"…"`, as `set -x` and shells quote) counting as part of its word, and the
/// shell's operators `|`, `||`, `;` and `&&` outside quotes.
fn words(line: &str) -> Vec<Span> {
    let b = line.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        // A shell's `|`, `||`, `;` and `&&` end a word, and are words of their own
        // (`-pMy9Passwd|tee`: a shell trace quotes a password that holds one).
        let operator = |i: usize| match (b[i], b.get(i + 1)) {
            (b'|', Some(b'|')) | (b'&', Some(b'&')) => 2,
            (b'|' | b';', _) => 1,
            _ => 0,
        };
        if operator(i) > 0 {
            i += operator(i);
            words.push((start, i));
            continue;
        }
        while i < b.len() && !b[i].is_ascii_whitespace() && operator(i) == 0 {
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

/// The argument lists in `line`, each as the byte ranges inside its strings: `[` (or a
/// tuple's `(`) then quoted strings separated by `,` (blanks around them allowed).
fn lists(line: &str) -> Vec<Vec<Span>> {
    let b = line.as_bytes();
    let mut lists = Vec::new();
    let mut from = 0;
    while let Some(open) = line[from..].find(['[', '(']).map(|n| from + n) {
        let mut i = open + 1;
        let mut items = Vec::new();
        loop {
            while matches!(b.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
            let Some(&quote @ (b'\'' | b'"')) = b.get(i) else {
                break;
            };
            let close = quoted_end(line, i + 1, quote);
            if b.get(close) != Some(&quote) {
                break;
            }
            items.push((i + 1, close));
            i = close + 1;
            while matches!(b.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
            if b.get(i) != Some(&b',') {
                break;
            }
            i += 1;
        }
        if items.len() > 1 {
            lists.push(items);
        }
        from = i.max(open + 1);
    }
    lists
}

#[cfg(test)]
mod tests {

    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
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
            // Real `bash -x` lines.
            (
                "+ 7z a -pbhVhCOixkajBBg /tmp/t1.7z /etc/hostname",
                "+ 7z a -p[REDACTED] /tmp/t1.7z /etc/hostname",
            ),
            (
                "+ zip -P GjAkNEnDkIpaaT /tmp/t1.zip /etc/hostname",
                "+ zip -P [REDACTED] /tmp/t1.zip /etc/hostname",
            ),
            (
                "+ openssl enc -aes-256-cbc -pbkdf2 -k d3M6Fedx2ZvTUN -in /etc/hostname -out /tmp/t1.enc",
                "+ openssl enc -aes-256-cbc -pbkdf2 -k [REDACTED] -in /etc/hostname -out /tmp/t1.enc",
            ),
            (
                "+ openssl enc -aes-256-cbc -pbkdf2 -pass pass:d3M6Fedx2ZvTUN -in /etc/hostname",
                "+ openssl enc -aes-256-cbc -pbkdf2 -pass pass:[REDACTED] -in /etc/hostname",
            ),
            (
                "+ openssl pkcs12 -export -passout 'pass:two words' -in c.pem",
                "+ openssl pkcs12 -export -passout 'pass:[REDACTED]' -in c.pem",
            ),
            (
                "+ htpasswd -b /tmp/ht admin c41Y7W8UDcoATC",
                "+ htpasswd -b /tmp/ht admin [REDACTED]",
            ),
            (
                "+ htpasswd -nbB admin c41Y7W8UDcoATC",
                "+ htpasswd -nbB admin [REDACTED]",
            ),
            (
                "+ htpasswd -c -C 12 -b /tmp/ht admin 'two words'",
                "+ htpasswd -c -C 12 -b /tmp/ht admin '[REDACTED]'",
            ),
            (
                "+ keytool -list -keystore /tmp/ks -storepass jOJg0K7TH4czrV -keypass jOJg0K7TH4czrW",
                "+ keytool -list -keystore /tmp/ks -storepass [REDACTED] -keypass [REDACTED]",
            ),
            (
                "+ ssh-keygen -t ed25519 -N Xq7w9Lm2 -f /tmp/k",
                "+ ssh-keygen -t ed25519 -N [REDACTED] -f /tmp/k",
            ),
            (
                "+ gpg --batch --passphrase Xq7w9Lm2 -c f",
                "+ gpg --batch --passphrase [REDACTED] -c f",
            ),
            (
                "+ rabbitmqctl add_user etl Xq7w9Lm2",
                "+ rabbitmqctl add_user etl [REDACTED]",
            ),
            (
                "+ sudo -u app sshpass -p Xq7w9Lm2 ssh -p 2222 h",
                "+ sudo -u app sshpass -p [REDACTED] ssh -p 2222 h",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn argument_lists_lose_their_passwords() {
        let cases = [
            (
                "subprocess.CalledProcessError: Command '['sshpass', '-p', 'd3M6Fedx2ZvTUN', 'ssh', '-o', 'ConnectTimeout=1', '-p', '2222', 'bob@127.0.0.1', 'true']' returned non-zero exit status 255.",
                "subprocess.CalledProcessError: Command '['sshpass', '-p', '[REDACTED]', 'ssh', '-o', 'ConnectTimeout=1', '-p', '2222', 'bob@127.0.0.1', 'true']' returned non-zero exit status 255.",
            ),
            (
                r#"cmd: ["zip", "-P", "Xq7 w9", "o.zip"]"#,
                r#"cmd: ["zip", "-P", "[REDACTED]", "o.zip"]"#,
            ),
            (
                "spawnargs: [ '7z', 'a', '-pXq7w9', 'x.7z' ]",
                "spawnargs: [ '7z', 'a', '-p[REDACTED]', 'x.7z' ]",
            ),
            (
                "['htpasswd', '-b', '/tmp/ht', 'admin', 'Xq7w9']",
                "['htpasswd', '-b', '/tmp/ht', 'admin', '[REDACTED]']",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
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
            "sshpass -f /run/pw ssh -p 22 host",
            "+ ssh -p 2222 host && mkdir -p /x && psql -p 5432",
            "+ openssl enc -pass env:ZIP_PW -in a && openssl enc -pass file:/run/pw",
            "+ keytool -list -storepass:env KS_PW",
            "+ ssh-keygen -N '' -f /tmp/k",
            "+ htpasswd -c /tmp/ht admin",
            "+ htpasswd -b /tmp/ht",
            "+ 7z x -o/tmp/out a.7z",
            "['ssh', '-p', '2222', 'host']",
        ] {
            assert_eq!(r(text), text);
        }
    }

    /// Every flag of a tool named once is found in one pass, however many there are.
    #[test]
    fn every_flag_on_a_long_line_goes_in_one_pass() {
        let line = "mysql -pmysql ".repeat(2000);
        let once = r(&line);
        assert_eq!(once.matches(super::REDACTED).count(), 2000);
        assert_eq!(r(&once), once);
    }
}
