//! Where the state store is: a directory on this host (`--state-dir`, `file://`), or a
//! PostgreSQL or Redis server named by `--state-url` for jobs that run on several hosts.
//!
//! A server URL may hold a password, so nothing here ever puts the URL itself in an error:
//! errors name where the URL came from (the option, the variable or the file), and
//! [`Remote::redacted`] is the only form that is printed.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crontap_scrub::url_secrets;

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

/// How errors name a URL given as `--state-url` or `CRONTAP_STATE_URL`.
pub const URL_SOURCE: &str = "--state-url (CRONTAP_STATE_URL)";

/// The variable that names a file holding the URL, as `--state-url-file`'s environment twin.
pub const URL_FILE_VAR: &str = "CRONTAP_STATE_URL_FILE";

/// Parses a state URL; `source` names where it came from in errors (see [`URL_SOURCE`]).
pub fn parse(url: &str, source: &str) -> Result<StateUrl> {
    if url.is_empty() {
        // An empty file, most likely.
        bail!("{source} is empty");
    }
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    let engine = match scheme.as_deref() {
        Some("file") => return file_dir(url, source).map(StateUrl::Dir),
        Some("postgres" | "postgresql") => Engine::Postgres,
        Some("redis" | "rediss") => Engine::Redis,
        _ => bail!(
            "{source} must be a file://, postgres://, postgresql://, redis:// or rediss:// URL"
        ),
    };
    let named = match engine {
        // libpq's form, which a URL parser refuses: `h1:5432,h2:5433`.
        Engine::Postgres => postgres_parts(url).is_some_and(|(_, hosts, _)| {
            hosts.split(',').any(|chunk| {
                let host = match chunk.strip_prefix('[') {
                    Some(v6) => v6.split(']').next().unwrap_or(""),
                    None => chunk.split(':').next().unwrap_or(""),
                };
                !host.is_empty()
            })
        }),
        Engine::Redis => reqwest::Url::parse(url)
            .ok()
            .is_some_and(|u| u.host_str().is_some()),
    };
    match (named, engine) {
        (true, _) => {}
        (false, Engine::Postgres) => bail!(
            "{source} must name the server's host (percent-encode an '@' in the password as %40)"
        ),
        (false, Engine::Redis) => bail!("{source} must name the server's host"),
    }
    Ok(StateUrl::Remote(Remote {
        engine,
        url: url.to_owned(),
    }))
}

fn file_dir(url: &str, source: &str) -> Result<PathBuf> {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .filter(|p| p.is_absolute() && p.as_os_str().len() > 1)
        .with_context(|| format!("{source} must be file:///absolute/path"))
}

/// Whether a state URL holds a password: after the user name in its user part
/// (`postgres://app:PASSWORD@db/jobs`, `redis://:PASSWORD@cache`), or as libpq's `password`
/// parameter (`?password=…`). The user part ends at the first '@', as tokio-postgres reads
/// it; an '@' in the query or fragment does not start one.
pub fn has_password(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let in_user_part = rest
        .split_once('@')
        .filter(|(user_part, _)| !user_part.contains(['?', '#']))
        .and_then(|(user_part, _)| user_part.split_once(':'))
        .is_some_and(|(_, password)| !password.is_empty());
    let query = rest.split_once('?').map_or("", |(_, q)| q);
    let query = query.split('#').next().unwrap_or("");
    let in_query = query.split('&').any(|piece| {
        piece
            .split_once('=')
            .is_some_and(|(key, value)| key == "password" && !value.is_empty())
    });
    in_user_part || in_query
}

/// A PostgreSQL URL's scheme, hosts (`h1:5432,h2`) and path (`/jobs`), split as
/// tokio-postgres splits them: the credentials end at the first '@', the hosts at the next
/// '/' or '?'. `None` when what would be shown still holds an '@' (a password with an
/// unencoded '@' would show its end there) or has no "://".
fn postgres_parts(url: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let rest = rest.split_once('@').map_or(rest, |(_, after)| after);
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (hosts, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
    if rest.contains('@') || rest.chars().any(char::is_whitespace) {
        return None;
    }
    Some((scheme, hosts, path))
}

impl Remote {
    /// `postgres://db.example:5432/jobs`: scheme, host(s), port(s) and path only; no user,
    /// password or query (so not the hosts a `host=` parameter adds).
    pub fn redacted(&self) -> String {
        if self.engine == Engine::Postgres {
            return match postgres_parts(&self.url) {
                Some((scheme, hosts, path)) => format!("{scheme}://{hosts}{path}"),
                None => "postgres://<redacted>".to_owned(),
            };
        }
        let Ok(url) = reqwest::Url::parse(&self.url) else {
            return "<state URL>".to_owned();
        };
        // A password with an unencoded '/' or '#' moves the rest of it into the path or the
        // fragment (`postgres://app:4242/s3cr3t@db/jobs` parses as host `app`): an '@' the
        // parser did not take as the end of the user part means the URL cannot be shown.
        if url_secrets(&url).is_empty() && self.url.contains('@') {
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
            parse("file:///var/lib/jobs", URL_SOURCE).unwrap(),
            StateUrl::Dir(PathBuf::from("/var/lib/jobs"))
        );
        let StateUrl::Remote(pg) = parse(
            "postgresql://app:pw-77x@db.example:6432/jobs?sslmode=require",
            URL_SOURCE,
        )
        .unwrap() else {
            panic!("a server")
        };
        assert_eq!(pg.engine, Engine::Postgres);
        assert_eq!(pg.redacted(), "postgresql://db.example:6432/jobs");
        assert!(!format!("{pg:?}").contains("pw-77x"));
        let StateUrl::Remote(redis) = parse("rediss://:pw-77x@cache/0", URL_SOURCE).unwrap() else {
            panic!("a server")
        };
        assert_eq!(redis.engine, Engine::Redis);
        assert_eq!(redis.redacted(), "rediss://cache/0");
        let StateUrl::Remote(slash) =
            parse("postgres://app:4242/s3cr3t@db.example/jobs", URL_SOURCE).unwrap()
        else {
            panic!("a server")
        };
        // As tokio-postgres reads it: user app, password 4242/s3cr3t.
        assert_eq!(slash.redacted(), "postgres://db.example/jobs");
        // libpq's several hosts, IPv6 among them; the query is never shown.
        let StateUrl::Remote(several) = parse(
            "postgres://u:pw-77x@h1:5432,[::1]:5433,h3/jobs?host=h4&sslmode=require",
            URL_SOURCE,
        )
        .unwrap() else {
            panic!("a server")
        };
        assert_eq!(several.redacted(), "postgres://h1:5432,[::1]:5433,h3/jobs");
        // An unencoded '@' in a password: the end of it would be shown as a host, so the URL
        // is refused (and, were it not, shown as postgres://<redacted>).
        let err = parse("postgres://u:pw@77x@db/jobs", URL_SOURCE)
            .unwrap_err()
            .to_string();
        assert!(err.contains("%40") && !err.contains("77x"), "{err}");
        let at = Remote {
            engine: Engine::Postgres,
            url: "postgres://u:pw@77x@db/jobs".into(),
        };
        assert_eq!(at.redacted(), "postgres://<redacted>");
        for bad in [
            "mysql://u:pw-77x@db/x",
            "file://relative",
            "file:///",
            "postgres:///x",
            "postgres://u:pw-77x@/x",
            "postgres://u:pw-77x@:5432,/x",
            "db",
        ] {
            let err = parse(bad, URL_SOURCE).unwrap_err().to_string();
            assert!(
                err.contains("--state-url") && !err.contains("pw-77x"),
                "{bad}: {err}"
            );
        }
        let err = parse("db", "--state-url-file /run/secrets/state-url")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--state-url-file /run/secrets/state-url must be"),
            "{err}"
        );
        let err = parse("", "--state-url-file /run/secrets/state-url")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "--state-url-file /run/secrets/state-url is empty");
    }

    #[test]
    fn passwords() {
        for url in [
            "postgres://app:pw-77x@db.example/jobs",
            "postgres://app:4242/s3cr3t@db.example/jobs",
            "rediss://:pw-77x@cache/0",
            "redis://user:pw-77x@cache",
            "postgres://app@db.example/jobs?sslmode=require&password=pw-77x",
        ] {
            assert!(has_password(url), "{url}");
        }
        for url in [
            "file:///var/lib/jobs",
            "postgres://db.example/jobs",
            "postgres://app@db.example:5432/jobs",
            "postgres://app:@db.example/jobs",
            "redis://cache:6379/0",
            "postgres://db.example:5432/jobs?application_name=a:b@c",
            "postgres://db.example/jobs?password=",
            "db",
        ] {
            assert!(!has_password(url), "{url}");
        }
    }
}
