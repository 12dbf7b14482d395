//! The texts `tests/linear.rs` times at two sizes and `benches/scrub.rs` times at 1 MiB:
//! every delimiter and prefix a rule keys on, repeated, as one line and as many. Written
//! here, not taken from the rules: the separators of tokens and values, vendor-style
//! prefixes (the rows' literal starts that are shared by many rows), the names and cues of
//! the structure and form rules, and the cues of the forms read across lines.

/// Delimiters and prefixes the rules key on.
pub const UNITS: &[&str] = &[
    // The brief's own list.
    "ab-",
    "sk_",
    ":",
    "=",
    "/",
    "@",
    "-",
    "_",
    ".",
    "\"",
    "'",
    " ",
    "%",
    "\\",
    // Glued: a letter pair and a delimiter, so every delimiter sits between token bytes.
    "ab:",
    "ab=",
    "ab/",
    "ab@",
    "ab_",
    "ab.",
    "ab%",
    "a:b:",
    "x1-",
    "ab-\n",
    // Vendor-style prefixes shared by many format rows.
    "ghp_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "AKIA",
    "eyJ",
    "AIza",
    "sk-",
    "pk_live_",
    "SG.",
    "hf_",
    "npm_",
    "pat",
    "key-",
    "AC",
    "SK",
    "s.",
    "00D",
    // Names and cues of the structure rules and the forms.
    "password=",
    "password: ",
    "\"password\": \"",
    "token ",
    "--password ",
    "-p ",
    "Authorization: Bearer ",
    "PASS ",
    "IDENTIFIED BY '",
    "user:pw@",
    "http://u:p@h/",
    "Pwd=",
    "?token=",
    "<password>",
    "setPassword(\"",
    "${DB_PASSWORD:-",
    "jdbc:oracle:thin:a/b@",
    "sshpass -p a ",
    "host name \"a@",
    "Key (api_token)=(",
    // Cues of the forms read across lines.
    "password:\n  ",
    "password: |\n ",
    "Property: a.password\nValue: \"",
    "334 UGFzc3dvcmQ6\n -> ",
    "'[REDACTED]\n",
    "│   └ '",
    // More cues the rules key on: schemes and ARNs, flags and their tools, prose names,
    // `.netrc` lines, XML settings, markers already there, escapes and encodings, the
    // credential words of other languages, connection strings, hex dumps.
    "Bearer ",
    "://",
    "arn:",
    "-p",
    "mysql -pa ",
    "redis-cli -a ",
    "api key ",
    "machine h login u password ",
    "key=\"k\" value=\"",
    "[REDACTED]",
    "%40",
    "\\u0040",
    "mot de passe: ",
    "пароль=",
    "Pwd=a;",
    "user:pw@tcp(",
    "AUTH LOGIN\n334 UGFzc3dvcmQ6\n",
    "0000: 70 61 73 73  pass\n",
    // Random-looking runs, with and without a password's punctuation.
    "Qm3vXr9TtLw2ZpK8sNb4",
    "Pa55#9hb!",
    "dGVzdA==",
];

/// `unit` repeated to `size` bytes, as one line or as lines of about 100 bytes.
pub fn text(unit: &str, size: usize, many_lines: bool) -> String {
    let mut out = String::with_capacity(size + 128);
    while out.len() < size {
        out.push_str(unit);
        if many_lines && out.len() % 128 >= 100 - unit.len().min(99) {
            out.push('\n');
        }
    }
    while !out.is_char_boundary(size.min(out.len())) {
        out.pop();
    }
    out.truncate(size.min(out.len()));
    out
}
