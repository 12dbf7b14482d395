//! Where the state store is: a directory on this host (`--state-dir`, `file://`), or a
//! PostgreSQL or Redis server named by `--state-url` for jobs that run on several hosts.
//!
//! A server URL may hold a password, so nothing here ever puts the URL itself in an error:
//! errors name the option, and [`Remote::redacted`] is the only form that is printed.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

/// The database engines a `--state-url` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Postgres,
    Redis,
}

impl Engine {
    /// The cargo feature that builds support for the engine in.
    pub fn feature(self) -> &'static str {
        match self {
            Engine::Postgres => "postgres",
            Engine::Redis => "redis",
        }
    }

    /// Whether this build can use the engine.
    pub fn supported(self) -> bool {
        match self {
            Engine::Postgres => cfg!(feature = "postgres"),
            Engine::Redis => cfg!(feature = "redis"),
        }
    }
}

/// A state store on a server.
#[derive(Clone, PartialEq, Eq)]
pub struct Remote {
    pub engine: Engine,
    /// The URL as given, credentials and all; never printed.
    pub url: String,
}

/// What a `--state-url` names.
#[derive(Debug, PartialEq, Eq)]
pub enum StateUrl {
    Dir(PathBuf),
    Remote(Remote),
}

const OPTION: &str = "--state-url (CRONTAP_STATE_URL)";

/// Parses a `--state-url`.
pub fn parse(url: &str) -> Result<StateUrl> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    let engine = match scheme.as_deref() {
        Some("file") => return file_dir(url).map(StateUrl::Dir),
        Some("postgres" | "postgresql") => Engine::Postgres,
        Some("redis" | "rediss") => Engine::Redis,
        _ => bail!(
            "{OPTION} must be a file://, postgres://, postgresql://, redis:// or rediss:// URL"
        ),
    };
    let parsed = reqwest::Url::parse(url).ok();
    if parsed.as_ref().and_then(|u| u.host_str()).is_none() {
        bail!("{OPTION} must name the server's host");
    }
    Ok(StateUrl::Remote(Remote {
        engine,
        url: url.to_owned(),
    }))
}

fn file_dir(url: &str) -> Result<PathBuf> {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .filter(|p| p.is_absolute() && p.as_os_str().len() > 1)
        .with_context(|| format!("{OPTION} must be file:///absolute/path"))
}

impl Remote {
    /// `postgres://db.example:5432/jobs`: scheme, host, port and path only; no user,
    /// password or query.
    pub fn redacted(&self) -> String {
        let Ok(url) = reqwest::Url::parse(&self.url) else {
            return "<state URL>".to_owned();
        };
        // A password with an unencoded '/' or '#' moves the rest of it into the path or the
        // fragment (`postgres://app:4242/s3cr3t@db/jobs` parses as host `app`): an '@' the
        // parser did not take as the end of the user part means the URL cannot be shown.
        let authority_at = url.username().is_empty() && url.password().is_none();
        if authority_at && self.url.contains('@') {
            return format!("{}://<redacted>", url.scheme());
        }
        let host = url.host_str().unwrap_or("?");
        let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
        format!("{}://{host}{port}{}", url.scheme(), url.path())
    }
}

/// Debug output goes to logs: it shows the redacted form only.
impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("engine", &self.engine)
            .field("url", &self.redacted())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            parse("file:///var/lib/jobs").unwrap(),
            StateUrl::Dir(PathBuf::from("/var/lib/jobs"))
        );
        let StateUrl::Remote(pg) =
            parse("postgresql://app:pw-77x@db.example:6432/jobs?sslmode=require").unwrap()
        else {
            panic!("a server")
        };
        assert_eq!(pg.engine, Engine::Postgres);
        assert_eq!(pg.redacted(), "postgresql://db.example:6432/jobs");
        assert!(!format!("{pg:?}").contains("pw-77x"));
        let StateUrl::Remote(redis) = parse("rediss://:pw-77x@cache/0").unwrap() else {
            panic!("a server")
        };
        assert_eq!(redis.engine, Engine::Redis);
        assert_eq!(redis.redacted(), "rediss://cache/0");
        let StateUrl::Remote(slash) = parse("postgres://app:4242/s3cr3t@db.example/jobs").unwrap()
        else {
            panic!("a server")
        };
        assert_eq!(slash.redacted(), "postgres://<redacted>");
        for bad in [
            "mysql://u:pw-77x@db/x",
            "file://relative",
            "file:///",
            "postgres:///x",
            "db",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(
                err.contains("--state-url") && !err.contains("pw-77x"),
                "{bad}: {err}"
            );
        }
    }
}
