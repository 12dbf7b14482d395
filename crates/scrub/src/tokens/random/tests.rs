use super::*;

const BASE62: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const BASE36: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const HEX: &[u8] = b"0123456789abcdef";

fn token(rng: &mut fastrand::Rng, alphabet: &[u8], len: usize) -> String {
    (0..len)
        .map(|_| char::from(alphabet[rng.usize(..alphabet.len())]))
        .collect()
}

/// Share of 2,000 random tokens that `judge` calls credentials.
fn caught(alphabet: &[u8], len: usize, prefix: &str) -> f64 {
    let mut rng = fastrand::Rng::with_seed(len as u64 * 7919 + alphabet.len() as u64);
    let hits = (0..2000)
        .filter(|_| is_credential(&format!("{prefix}{}", token(&mut rng, alphabet, len))))
        .count();
    hits as f64 / 2000.0
}

#[test]
fn random_tokens_of_every_alphabet_go() {
    for (alphabet, name, len, least) in [
        (BASE62, "base62", 20, 0.97),
        (BASE62, "base62", 32, 0.99),
        (BASE64URL, "base64url", 22, 0.95),
        (BASE64URL, "base64url", 40, 0.99),
        (LETTERS, "letters", 24, 0.97),
        (BASE36, "base36", 24, 0.9),
        (BASE36, "base36", 40, 0.98),
    ] {
        let share = caught(alphabet, len, "");
        assert!(share >= least, "{name} at {len}: {share}");
    }
}

#[test]
fn a_vendor_prefix_before_a_random_body_goes() {
    for (prefix, alphabet, len, least) in [
        ("hf_", LETTERS, 34, 0.99),
        ("da2-", BASE36, 26, 0.9),
        ("sq0atp-", BASE64URL, 22, 0.95),
        ("xyz_", BASE62, 16, 0.9),
        ("abc-", BASE62, 24, 0.98),
        ("sk-or-v1-", BASE62, 24, 0.98),
        ("sk_", HEX, 48, 1.0),
        ("acme_live_", BASE62, 20, 0.97),
    ] {
        let share = caught(alphabet, len, prefix);
        assert!(share >= least, "{prefix}: {share}");
    }
}

#[test]
fn the_issues_examples() {
    for token in [
        "Qm3vXr9TtLw2ZpK8sNb4Yc",
        "sq0atp-3Kx9vQ2mLp7ZrT5wYb8nHc",
        "da2-k7w3q9x2m5v8z4p1r6t0y3b7nc",
        "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",
        "sk_5359d9ccb1c3f55a0a602d78c8831b3ca7d321ede4b021c9",
    ] {
        assert!(is_credential(token), "{token}");
    }
}

#[test]
fn names_words_and_ids_stay() {
    for token in [
        "TokenService",
        "AccessDeniedExceptionWhileAssumingRole",
        "x86_64-unknown-linux-musl",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "nginx-deployment-66b6c48dd5-4jw2j",
        "MultiPathXMLRPCServer",
        "getHTTPSProxyURLFromEnvironment",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        "abcdefghijklmnopqrstuvwxyz0123456789",
        "ip-172-31-5-10.eu-west-1.compute.internal",
        "com.example.billing.InvoiceGenerator",
        "PostgreSQLConnectionPoolExhausted",
        "Donaudampfschifffahrtsgesellschaft",
        "anticonstitutionnellement",
        "internationalization",
        "org.springframework.jdbc.CannotGetJdbcConnectionException",
        "550e8400-e29b-41d4-a716-446655440000",
        "3f2a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c",
        "sha256-47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
        "20261204T153000Z-backup-nightly",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "1.2.3-rc.4+build.5678901234567",
        "run-28374650-abcde",
        "commit_3f2a1b2c4d5e6f708192a3b4c5d6e7f8",
        "ERR_CONNECTION_REFUSED_BY_UPSTREAM",
        "kube-system_coredns-5d78c9869d-qwfb8",
        "01HF8Z3K9Q7W2M5N4B6V8C0X1Y",
        "SKc84976fe63ee1af42531557013b81931",
        "pubkey-f007aa68a18c044ef6efe90677a29cfe",
        "deps-linux-9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ] {
        assert!(!is_credential(token), "{token}");
    }
}

#[test]
fn short_tokens_are_not_judged() {
    assert!(!looks_random("Qm3vXr9TtLw2ZpK8", MIN_RANDOM_LEN));
    assert!(looks_random("Qm3vXr9TtLw2ZpK8", 16));
}
