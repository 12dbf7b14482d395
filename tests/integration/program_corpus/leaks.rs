//! What counts as a credential getting out: the credential whole, a run of `RUN` of its
//! characters, or one of a passphrase's words of `WORD` characters or more, found in a text
//! in one pass for all of a case's credentials.

/// A run of this many characters of a credential in the text is a leak.
const RUN: usize = 6;
/// A passphrase's word of this many characters in the text is a leak.
const WORD: usize = 5;

/// Whether `text` holds `secret` whole, `RUN` of its characters in a row, or one of its
/// words of `WORD` characters or more when it has spaces.
pub fn leaks(text: &str, secret: &str) -> bool {
    Runs::of(&[secret]).found(text)[0]
}

/// The runs of `RUN` characters of a case's credentials, to find in a text in one pass (the
/// test runs unoptimised, where a substring search per run would cost most of its time).
/// A run of ASCII characters is `RUN` bytes, packed into a number and found with a rolling
/// window; a credential with other characters, or shorter than `RUN`, and a passphrase's
/// words are searched as text.
pub struct Runs {
    /// (packed run, index of its credential), sorted.
    packed: Vec<(u64, usize)>,
    /// Credentials searched as text: (index, the runs, or the credential when it is short).
    other: Vec<(usize, Vec<String>)>,
    /// A bit per hash of a packed run: most windows of a text are rejected by one lookup.
    filter: Vec<u64>,
    count: usize,
}

const MASK: u64 = (1 << (8 * RUN)) - 1;

fn bucket(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) as usize
}

impl Runs {
    pub fn of(secrets: &[&str]) -> Runs {
        let mut runs = Runs {
            packed: Vec::new(),
            other: Vec::new(),
            filter: vec![0; 1 << 10],
            count: secrets.len(),
        };
        for (i, secret) in secrets.iter().enumerate() {
            let words: Vec<String> = match secret.contains(' ') {
                true => secret
                    .split(' ')
                    .filter(|w| w.chars().count() >= WORD)
                    .map(str::to_owned)
                    .collect(),
                false => Vec::new(),
            };
            if !words.is_empty() {
                runs.other.push((i, words));
            }
            let chars: Vec<char> = secret.chars().collect();
            if chars.len() < RUN {
                runs.other.push((i, vec![secret.to_string()]));
            } else if !secret.is_ascii() {
                let all = chars.windows(RUN).map(|w| w.iter().collect()).collect();
                runs.other.push((i, all));
            } else {
                for w in secret.as_bytes().windows(RUN) {
                    let key = w.iter().fold(0u64, |k, &b| (k << 8) | u64::from(b));
                    runs.packed.push((key, i));
                    let b = bucket(key);
                    runs.filter[b / 64] |= 1 << (b % 64);
                }
            }
        }
        runs.packed.sort_unstable();
        runs
    }

    /// For each credential, whether `text` holds one of its runs.
    pub fn found(&self, text: &str) -> Vec<bool> {
        let mut found = vec![false; self.count];
        let mut key = 0u64;
        for (n, &byte) in text.as_bytes().iter().enumerate() {
            key = ((key << 8) | u64::from(byte)) & MASK;
            let b = bucket(key);
            if n + 1 < RUN || self.filter[b / 64] & (1 << (b % 64)) == 0 {
                continue;
            }
            let start = self.packed.partition_point(|&(k, _)| k < key);
            for &(_, i) in self.packed[start..].iter().take_while(|(k, _)| *k == key) {
                found[i] = true;
            }
        }
        for (i, all) in &self.other {
            found[*i] |= all.iter().any(|run| text.contains(run.as_str()));
        }
        found
    }
}

/// Bytes of a credential in a row that, spelled in hex, are a leak.
const HEX_RUN: usize = 6;

/// Whether `text` spells `HEX_RUN` bytes of `secret` in a row in hex (either case), with
/// any blanks or colons between the digits (`53 75 70`, xxd's `5375 7033`, `53:75`).
pub fn in_hex(text: &str, secret: &str) -> bool {
    if secret.len() < HEX_RUN {
        return false;
    }
    let joined: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | ':'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    (0..=secret.len() - HEX_RUN).any(|i| joined.contains(&hex[2 * i..2 * (i + HEX_RUN)]))
}
