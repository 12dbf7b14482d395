//! `crontap-run heartbeat create|verify|pings` and `plan --crontab --create` against
//! stand-ins of Healthchecks' Management API and Crontap's REST API on 127.0.0.1
//! ([`stand_in`]): what the services received, the URL files written (0600, in a 0700
//! directory, never through a link), every error path as one line and exit 125, and no key
//! and no ping URL in anything printed.

mod careless;
mod create_crontap;
mod create_healthchecks;
mod errors;
mod hostile;
mod keys_kept;
mod plan_create;
mod stand_in;
mod verify_pings;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::harness::{Crontap, Output};

/// The keys of one test: random, so that finding one in the output means it leaked.
pub struct Keys {
    pub client_id: String,
    pub crontap: String,
    pub healthchecks: String,
}

impl Keys {
    pub fn new() -> Keys {
        Keys {
            client_id: format!("cid-{}", stand_in::token(16)),
            crontap: format!("ck-{}", stand_in::token(32)),
            healthchecks: format!("hk-{}", stand_in::token(32)),
        }
    }

    fn all(&self) -> [&str; 3] {
        [&self.client_id, &self.crontap, &self.healthchecks]
    }
}

/// `crontap-run ARGS` with every key of `keys` in its variable.
pub fn run(keys: &Keys, args: &[&str]) -> Output {
    let mut c = Crontap::new();
    c.env("CRONTAP_CLIENT_ID", &keys.client_id)
        .env("CRONTAP_API_KEY", &keys.crontap)
        .env("HEALTHCHECKS_API_KEY", &keys.healthchecks)
        .args(args);
    let out = c.run();
    assert_clean(&out, keys, &[]);
    out
}

/// No key and none of `secrets` (ping URLs, their tokens) in what was printed.
pub fn assert_clean(out: &Output, keys: &Keys, secrets: &[String]) {
    let printed = format!("{}\n{}", out.stdout, out.stderr);
    for secret in keys
        .all()
        .iter()
        .copied()
        .chain(secrets.iter().map(String::as_str))
    {
        assert!(
            !printed.contains(secret),
            "a secret was printed:\n{printed}"
        );
    }
}

/// A crontap-run error: exit 125 and one line on stderr, nothing on stdout.
pub fn assert_one_line_error(out: &Output) {
    assert_eq!(out.code, 125, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}

pub fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// The URL a URL file holds.
pub fn url_in(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_owned()
}
