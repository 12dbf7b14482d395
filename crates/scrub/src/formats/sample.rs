//! The template language of the rows' samples and near misses, and the text made from it.
//!
//! A template is literal text with runs of generated characters: `ghp_{b62:36}` is `ghp_`
//! and 36 characters from the `b62` alphabet; `{uuid}` is a UUID in lower case. A
//! template states a vendor's documented format a second time, in words a reader can check
//! against the vendor's page, apart from the regex that finds it: the tests generate
//! tokens from the template and ask the regex to find them.

/// One alphabet of generated characters, by its name in templates.
struct Alphabet {
    name: &'static str,
    chars: &'static str,
    /// How the table in the README says it.
    words: &'static str,
}

const ALPHABETS: &[Alphabet] = &[
    Alphabet {
        name: "b62",
        chars: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        words: "letters and digits",
    },
    Alphabet {
        name: "url",
        chars: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        words: "base64url characters",
    },
    Alphabet {
        name: "b64",
        chars: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        words: "base64 characters",
    },
    Alphabet {
        name: "hex",
        chars: "0123456789abcdef",
        words: "lower-case hex digits",
    },
    Alphabet {
        name: "HEX",
        chars: "0123456789ABCDEF",
        words: "upper-case hex digits",
    },
    Alphabet {
        name: "an",
        chars: "abcdefghijklmnopqrstuvwxyz0123456789",
        words: "lower-case letters and digits",
    },
    Alphabet {
        name: "un",
        chars: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        words: "upper-case letters and digits",
    },
    Alphabet {
        name: "low",
        chars: "abcdefghijklmnopqrstuvwxyz",
        words: "lower-case letters",
    },
    Alphabet {
        name: "dig",
        chars: "0123456789",
        words: "digits",
    },
    Alphabet {
        name: "b32",
        chars: "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
        words: "bech32 characters (upper case)",
    },
];

/// One piece of a template.
enum Piece<'a> {
    Literal(&'a str),
    Run(&'static Alphabet, usize),
    Uuid,
}

/// The pieces of `template`, or what is wrong with it.
fn pieces(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            out.push(Piece::Literal(&rest[..open]));
        }
        let close = open
            + rest[open..]
                .find('}')
                .ok_or_else(|| format!("{template:?}: a {{ without }}"))?;
        let spec = &rest[open + 1..close];
        out.push(if spec == "uuid" {
            Piece::Uuid
        } else {
            let (name, n) = spec
                .split_once(':')
                .ok_or_else(|| format!("{template:?}: {{{spec}}} is not {{alphabet:length}}"))?;
            let alphabet = ALPHABETS
                .iter()
                .find(|a| a.name == name)
                .ok_or_else(|| format!("{template:?}: no alphabet {name:?}"))?;
            let n = n
                .parse()
                .map_err(|_| format!("{template:?}: {n:?} is not a length"))?;
            Piece::Run(alphabet, n)
        });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Literal(rest));
    }
    Ok(out)
}

/// Whether `template` is well formed; the reason when not.
pub(crate) fn check(template: &str) -> Result<(), String> {
    pieces(template).map(drop)
}

/// A small deterministic generator (xorshift64*), so tests and the dictionary are the same
/// on every run for one seed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        let x = &mut self.0;
        *x ^= *x >> 12;
        *x ^= *x << 25;
        *x ^= *x >> 27;
        ((x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n as u64) as usize
    }

    fn run(&mut self, alphabet: &str, n: usize, out: &mut String) {
        let chars = alphabet.as_bytes();
        for _ in 0..n {
            out.push(char::from(chars[self.below(chars.len())]));
        }
    }
}

/// One text made from `template`. A run of letters and digits together always holds at
/// least one of each (real tokens of that length all do, and weak rows ask for both).
///
/// # Panics
/// On a malformed template; the row tests check every template first.
pub(crate) fn render(template: &str, rng: &mut Rng) -> String {
    let mut out = String::new();
    for piece in pieces(template).unwrap_or_else(|e| panic!("{e}")) {
        match piece {
            Piece::Literal(text) => out.push_str(text),
            Piece::Uuid => {
                for (i, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
                    if i > 0 {
                        out.push('-');
                    }
                    rng.run("0123456789abcdef", n, &mut out);
                }
            }
            Piece::Run(alphabet, n) => loop {
                let mut run = String::with_capacity(n);
                rng.run(alphabet.chars, n, &mut run);
                let mixed = alphabet.chars.bytes().any(|c| c.is_ascii_alphabetic())
                    && alphabet.chars.bytes().any(|c| c.is_ascii_digit());
                let letter = run.bytes().any(|c| c.is_ascii_alphabetic());
                let digit = run.bytes().any(|c| c.is_ascii_digit());
                if !mixed || n < 2 || (letter && digit) {
                    out.push_str(&run);
                    break;
                }
            },
        }
    }
    out
}

/// `template` in words, for the README's table: `` `ghp_` + 36 letters and digits ``.
pub(crate) fn describe(template: &str) -> String {
    let mut parts = Vec::new();
    for piece in pieces(template).unwrap_or_else(|e| panic!("{e}")) {
        parts.push(match piece {
            Piece::Literal(text) => format!("`{text}`"),
            Piece::Run(alphabet, n) => format!("{n} {}", alphabet.words),
            Piece::Uuid => "a UUID".to_owned(),
        });
    }
    parts.join(" + ")
}

/// Every literal piece of `template`, for the fuzzing dictionary.
pub(crate) fn literals(template: &str) -> Vec<&str> {
    pieces(template)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Literal(text) => Some(text),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_have_their_length_and_alphabet() {
        let mut rng = Rng::new(1);
        for _ in 0..100 {
            let text = render("ghp_{b62:36}-{hex:8}.{uuid}", &mut rng);
            let (head, uuid) = text.split_once('.').unwrap();
            let (token, hex) = head.split_once('-').unwrap();
            assert_eq!(token.len(), 40);
            assert!(token[4..].bytes().all(|c| c.is_ascii_alphanumeric()));
            assert!(hex.len() == 8 && hex.bytes().all(|c| c.is_ascii_hexdigit()));
            assert!(!hex.bytes().any(|c| c.is_ascii_uppercase()));
            let groups: Vec<usize> = uuid.split('-').map(str::len).collect();
            assert_eq!(groups, [8, 4, 4, 4, 12]);
        }
    }

    #[test]
    fn a_run_of_letters_and_digits_has_both() {
        let mut rng = Rng::new(2);
        for _ in 0..2000 {
            let run = render("{b62:3}", &mut rng);
            assert!(run.bytes().any(|c| c.is_ascii_digit()), "{run}");
            assert!(run.bytes().any(|c| c.is_ascii_alphabetic()), "{run}");
        }
    }

    #[test]
    fn malformed_templates_are_refused() {
        for bad in ["{b62}", "{b62:x}", "{nope:3}", "ghp_{b62:3", "{}"] {
            assert!(check(bad).is_err(), "{bad}");
        }
        assert!(check("plain text").is_ok());
    }

    #[test]
    fn templates_read_as_words() {
        assert_eq!(describe("ghp_{b62:36}"), "`ghp_` + 36 letters and digits");
        assert_eq!(describe("pat-na1-{uuid}"), "`pat-na1-` + a UUID");
        assert_eq!(literals("a{hex:2}b{uuid}"), ["a", "b"]);
    }
}
