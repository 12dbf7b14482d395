//! The password flags, operands and variables of command-line tools, one row each with the
//! manual that documents it (`doc`): `redis-cli -a PW`, `sqlcmd -P PW`, `mongodump -p PW`,
//! `smbclient -U user%PW`, `ldapsearch -w PW`, `lftp -u user,PW`, `mysql -pPW`,
//! `docker login -p PW`, `sshpass -p PW`, `zip -P PW`, `7z -pPW`, `openssl -k PW` and
//! `-pass pass:PW`, `keytool -storepass PW`, `jarsigner -storepass PW`, `ssh-keygen -N PW`, `gpg --passphrase PW`,
//! `htpasswd -b FILE USER PW` (an operand), `SSHPASS=PW`, `MYSQL_PWD=PW`.
//!
//! This file is the data; the lexer that reads a command line (or an argument list) with
//! it is `structure/forms/flags.rs`, and the one for the variables
//! `structure/forms/variables.rs`. A flag counts only after its tool's name, so `-p` stays
//! a port for `ssh -p 22` and `psql -p 5432`, and a path for `mkdir -p /x`.

/// What of a flag's value is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// All of it.
    Whole,
    /// What follows the first of this character (`user%password`); nothing without it.
    After(char),
    /// What follows this prefix (`pass:PW` of OpenSSL's `-pass`); nothing without it
    /// (`env:VAR`, `file:path` name where the password is).
    Prefixed(&'static str),
}

/// Where a flag's value stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// The next word, or after `=` in the same word for a long flag.
    Next,
    /// In the same word, right after the flag (`-pPW`), or after `=` for a long flag
    /// (`--password=PW`); the next word is something else.
    Attached,
}

/// A flag of a tool whose value holds a password.
pub(crate) struct Tool {
    /// The names the program runs under.
    pub programs: &'static [&'static str],
    /// A word that must come between the program and the flag (`login`), if any.
    pub subcommand: Option<&'static str>,
    pub flag: &'static str,
    pub form: Form,
    pub part: Part,
    /// The manual that documents the flag.
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static str,
}

const fn tool(
    programs: &'static [&'static str],
    flag: &'static str,
    form: Form,
    part: Part,
    doc: &'static str,
) -> Tool {
    Tool {
        programs,
        subcommand: None,
        flag,
        form,
        part,
        doc,
    }
}

const fn login(programs: &'static [&'static str], flag: &'static str, doc: &'static str) -> Tool {
    Tool {
        programs,
        subcommand: Some("login"),
        flag,
        form: Form::Next,
        part: Part::Whole,
        doc,
    }
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
const SEVEN_ZIP: &[&str] = &["7z", "7za", "7zr", "7zz"];
const KEYTOOL_PASSWORDS: &[&str] = &[
    "-storepass",
    "-keypass",
    "-srcstorepass",
    "-deststorepass",
    "-srckeypass",
    "-destkeypass",
    "-new",
];
const OPENSSL_PASSWORDS: &[&str] = &["-pass", "-passin", "-passout", "-password"];

const MYSQL_DOC: &str = "https://dev.mysql.com/doc/refman/8.4/en/connection-options.html";
const REDIS_DOC: &str = "https://redis.io/docs/latest/develop/tools/cli/";
const MONGO_DOC: &str = "https://www.mongodb.com/docs/database-tools/mongodump/";
const SAMBA_DOC: &str = "https://www.samba.org/samba/docs/current/man-html/smbclient.1.html";
const SSHPASS_DOC: &str = "https://manpages.debian.org/bookworm/sshpass/sshpass.1.en.html";
const SEVEN_ZIP_DOC: &str = "https://manpages.debian.org/bookworm/p7zip-full/7z.1.en.html";
const OPENSSL_DOC: &str = "https://docs.openssl.org/3.0/man1/openssl-passphrase-options/";
const KEYTOOL_DOC: &str = "https://docs.oracle.com/en/java/javase/21/docs/specs/man/keytool.html";
const JARSIGNER_DOC: &str =
    "https://docs.oracle.com/en/java/javase/21/docs/specs/man/jarsigner.html";
const CURL_DOC: &str = "https://curl.se/docs/manpage.html";
const SSH_KEYGEN_DOC: &str = "https://man.openbsd.org/ssh-keygen.1";

use Form::{Attached, Next};
use Part::{After, Prefixed, Whole};

pub(crate) const TOOLS: &[Tool] = &[
    tool(&["curl"], "-u", Next, After(':'), CURL_DOC),
    tool(&["curl"], "--user", Next, After(':'), CURL_DOC),
    tool(&["curl"], "--proxy-user", Next, After(':'), CURL_DOC),
    tool(&["redis-cli"], "-a", Next, Whole, REDIS_DOC),
    tool(&["redis-cli"], "--pass", Next, Whole, REDIS_DOC),
    tool(
        &["sqlcmd", "bcp"],
        "-P",
        Next,
        Whole,
        "https://learn.microsoft.com/en-us/sql/tools/sqlcmd/sqlcmd-utility",
    ),
    tool(MONGO, "-p", Next, Whole, MONGO_DOC),
    tool(MONGO, "--password", Next, Whole, MONGO_DOC),
    tool(SAMBA, "-U", Next, After('%'), SAMBA_DOC),
    tool(SAMBA, "--user", Next, After('%'), SAMBA_DOC),
    tool(
        LDAP,
        "-w",
        Next,
        Whole,
        "https://www.openldap.org/software/man.cgi?query=ldapsearch",
    ),
    // ldappasswd: `-a oldPasswd`, `-s newPasswd`.
    tool(
        &["ldappasswd"],
        "-a",
        Next,
        Whole,
        "https://www.openldap.org/software/man.cgi?query=ldappasswd",
    ),
    tool(
        &["ldappasswd"],
        "-s",
        Next,
        Whole,
        "https://www.openldap.org/software/man.cgi?query=ldappasswd",
    ),
    tool(
        &["lftp"],
        "-u",
        Next,
        After(','),
        "https://lftp.yar.ru/lftp-man.html",
    ),
    tool(MYSQL, "-p", Attached, Whole, MYSQL_DOC),
    tool(MYSQL, "--password", Attached, Whole, MYSQL_DOC),
    login(
        &["docker"],
        "-p",
        "https://docs.docker.com/reference/cli/docker/login/",
    ),
    login(
        &["podman", "buildah"],
        "-p",
        "https://docs.podman.io/en/latest/markdown/podman-login.1.html",
    ),
    login(
        &["oc"],
        "-p",
        "https://docs.redhat.com/en/documentation/openshift_container_platform/4.17/html/cli_tools/openshift-cli-oc",
    ),
    tool(&["sshpass"], "-p", Next, Whole, SSHPASS_DOC),
    // sshpass reads its options with getopt, so the password may also be attached.
    tool(&["sshpass"], "-p", Attached, Whole, SSHPASS_DOC),
    // zip: `-P password`, "use password to encrypt zipfile entries".
    tool(
        &["zip", "zipcloak"],
        "-P",
        Next,
        Whole,
        "https://manpages.debian.org/bookworm/zip/zip.1.en.html",
    ),
    tool(
        &["zip"],
        "--password",
        Next,
        Whole,
        "https://manpages.debian.org/bookworm/zip/zip.1.en.html",
    ),
    tool(
        &["unzip", "funzip"],
        "-P",
        Next,
        Whole,
        "https://manpages.debian.org/bookworm/unzip/unzip.1.en.html",
    ),
    // 7-Zip: `-p{Password}`, the password attached to the switch.
    tool(SEVEN_ZIP, "-p", Attached, Whole, SEVEN_ZIP_DOC),
    // OpenSSL: `-k password` of `enc`, and `pass:password` as the argument of `-pass`,
    // `-passin`, `-passout` (`env:`, `file:`, `fd:` and `stdin` name where it is).
    tool(
        &["openssl"],
        "-k",
        Next,
        Whole,
        "https://docs.openssl.org/3.0/man1/openssl-enc/",
    ),
    tool(
        &["openssl"],
        OPENSSL_PASSWORDS[0],
        Next,
        Prefixed("pass:"),
        OPENSSL_DOC,
    ),
    tool(
        &["openssl"],
        OPENSSL_PASSWORDS[1],
        Next,
        Prefixed("pass:"),
        OPENSSL_DOC,
    ),
    tool(
        &["openssl"],
        OPENSSL_PASSWORDS[2],
        Next,
        Prefixed("pass:"),
        OPENSSL_DOC,
    ),
    tool(
        &["openssl"],
        OPENSSL_PASSWORDS[3],
        Next,
        Prefixed("pass:"),
        OPENSSL_DOC,
    ),
    // keytool: `-storepass arg`, `-keypass arg` and their `-src…`/`-dest…` forms, and
    // `-new arg` of `-storepasswd`/`-keypasswd` (`-storepass:env VAR` names a variable).
    tool(&["keytool"], KEYTOOL_PASSWORDS[0], Next, Whole, KEYTOOL_DOC),
    tool(&["keytool"], KEYTOOL_PASSWORDS[1], Next, Whole, KEYTOOL_DOC),
    tool(&["keytool"], KEYTOOL_PASSWORDS[2], Next, Whole, KEYTOOL_DOC),
    tool(&["keytool"], KEYTOOL_PASSWORDS[3], Next, Whole, KEYTOOL_DOC),
    tool(&["keytool"], KEYTOOL_PASSWORDS[4], Next, Whole, KEYTOOL_DOC),
    tool(&["keytool"], KEYTOOL_PASSWORDS[5], Next, Whole, KEYTOOL_DOC),
    tool(&["keytool"], KEYTOOL_PASSWORDS[6], Next, Whole, KEYTOOL_DOC),
    // jarsigner: `-storepass arg` and `-keypass arg`, as keytool's.
    tool(
        &["jarsigner"],
        KEYTOOL_PASSWORDS[0],
        Next,
        Whole,
        JARSIGNER_DOC,
    ),
    tool(
        &["jarsigner"],
        KEYTOOL_PASSWORDS[1],
        Next,
        Whole,
        JARSIGNER_DOC,
    ),
    // ssh-keygen: `-N new_passphrase`, `-P passphrase` (the old one).
    tool(&["ssh-keygen"], "-N", Next, Whole, SSH_KEYGEN_DOC),
    tool(&["ssh-keygen"], "-P", Next, Whole, SSH_KEYGEN_DOC),
    tool(
        &["gpg", "gpg2"],
        "--passphrase",
        Next,
        Whole,
        "https://www.gnupg.org/documentation/manuals/gnupg/GPG-Esoteric-Options.html",
    ),
    // mosquitto_pub/sub: `-P password`; cqlsh: `-p password`; ipmitool: `-P password`.
    tool(
        &["mosquitto_pub", "mosquitto_sub", "mosquitto_rr"],
        "-P",
        Next,
        Whole,
        "https://mosquitto.org/man/mosquitto_pub-1.html",
    ),
    tool(
        &["cqlsh"],
        "-p",
        Next,
        Whole,
        "https://cassandra.apache.org/doc/latest/cassandra/managing/tools/cqlsh.html",
    ),
    tool(
        &["ipmitool"],
        "-P",
        Next,
        Whole,
        "https://manpages.debian.org/bookworm/ipmitool/ipmitool.1.en.html",
    ),
    tool(
        &["twine"],
        "-p",
        Next,
        Whole,
        "https://twine.readthedocs.io/en/stable/#twine-upload",
    ),
];

/// A password given as an operand, not a flag's value: with `flag` among the short flags
/// (alone or bundled, `-bc`), the operand at `index` (counted from 0 after the program and
/// the subcommand, flags and their values left out) is the password, or the one at
/// `short_index` when `short_flag` is given too (`htpasswd -nb user pw`, no file).
pub(crate) struct Operand {
    pub programs: &'static [&'static str],
    pub subcommand: Option<&'static str>,
    /// The short flag that makes the operand a password (`b`), if one must be given.
    pub flag: Option<char>,
    pub index: usize,
    pub short_flag: Option<(char, usize)>,
    /// Flags whose value is the next word, which is then no operand.
    pub valued: &'static [&'static str],
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static str,
}

const RABBITMQCTL_DOC: &str = "https://www.rabbitmq.com/docs/man/rabbitmqctl.8";

pub(crate) const OPERANDS: &[Operand] = &[
    // htpasswd -b[cmB25dpsDv] [-C cost] [-r rounds] passwordfile username password;
    // htpasswd -nb[mB25dps] [-C cost] [-r rounds] username password.
    Operand {
        programs: &["htpasswd"],
        subcommand: None,
        flag: Some('b'),
        index: 2,
        short_flag: Some(('n', 1)),
        valued: &["-C", "-r"],
        doc: "https://httpd.apache.org/docs/2.4/programs/htpasswd.html",
    },
    // rabbitmqctl add_user username password; change_password username newpassword.
    Operand {
        programs: &["rabbitmqctl"],
        subcommand: Some("add_user"),
        flag: None,
        index: 1,
        short_flag: None,
        valued: &["-n", "--node", "-t", "--timeout"],
        doc: RABBITMQCTL_DOC,
    },
    Operand {
        programs: &["rabbitmqctl"],
        subcommand: Some("change_password"),
        flag: None,
        index: 1,
        short_flag: None,
        valued: &["-n", "--node", "-t", "--timeout"],
        doc: RABBITMQCTL_DOC,
    },
];

/// Programs that run the command given as their first operand, and their flags that take
/// a value: after that operand the words are the command's, not theirs (so
/// `sshpass -p PW ssh -p 22 host` keeps ssh's port).
pub(crate) const RUNNERS: &[(&str, &[&str])] = &[
    ("sshpass", &["-p", "-f", "-d", "-P"]),
    (
        "sudo",
        &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"],
    ),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("env", &["-u", "-C", "-S", "--unset", "--chdir"]),
    ("nice", &["-n", "--adjustment"]),
    ("nohup", &[]),
    ("exec", &["-a"]),
    ("xargs", &["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s"]),
];

/// An environment variable through which a tool takes a password.
pub(crate) struct Variable {
    pub name: &'static str,
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static str,
}

pub(crate) const VARIABLES: &[Variable] = &[
    Variable {
        name: "SSHPASS",
        doc: SSHPASS_DOC,
    },
    Variable {
        name: "MYSQL_PWD",
        doc: "https://dev.mysql.com/doc/refman/8.4/en/environment-variables.html",
    },
    Variable {
        name: "RSYNC_PASSWORD",
        doc: "https://download.samba.org/pub/rsync/rsync.1",
    },
    Variable {
        name: "PGPASSWORD",
        doc: "https://www.postgresql.org/docs/current/libpq-envars.html",
    },
    Variable {
        name: "REDISCLI_AUTH",
        doc: REDIS_DOC,
    },
    Variable {
        name: "SQLCMDPASSWORD",
        doc: "https://learn.microsoft.com/en-us/sql/tools/sqlcmd/sqlcmd-utility",
    },
    Variable {
        name: "LFTP_PASSWORD",
        doc: "https://lftp.yar.ru/lftp-man.html",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_names_its_manual() {
        for tool in TOOLS {
            assert!(tool.doc.starts_with("https://"), "{}", tool.flag);
            assert!(!tool.programs.is_empty());
            assert!(tool.flag.starts_with('-'));
        }
        for operand in OPERANDS {
            assert!(operand.doc.starts_with("https://"));
            assert!(operand.valued.iter().all(|f| f.starts_with('-')));
        }
        for variable in VARIABLES {
            assert!(variable.doc.starts_with("https://"), "{}", variable.name);
            // The forms table's cues are in lower case.
            assert!(
                variable
                    .name
                    .bytes()
                    .all(|c| c.is_ascii_uppercase() || c == b'_')
            );
        }
    }
}
