//! Reading the state URL: libpq's `sslmode` and `sslrootcert` are taken out and turned
//! into the TLS configuration, the rest goes to tokio-postgres, and the user and
//! `application_name` get libpq's and crontap-run's defaults.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use rustls::ClientConfig;
use tokio_postgres::Config;
use tokio_postgres::config::SslMode;

use super::error::PgError;
use super::tls::{Roots, Verify, tls_config};

/// The URL once per host, when its authority names several (`h1:5432,h2/jobs`), so that each
/// host can be given its own deadline; the URL itself otherwise. Split as tokio-postgres
/// splits: the credentials end at the first '@' after "://", the hosts at the next '/' or
/// '?'.
pub(super) fn per_host(url: &str) -> Vec<String> {
    let Some(scheme_end) = url.find("://").map(|at| at + 3) else {
        return vec![url.to_owned()];
    };
    let rest = &url[scheme_end..];
    let hosts_start = scheme_end + rest.find('@').map_or(0, |at| at + 1);
    let hosts_len = url[hosts_start..]
        .find(['/', '?'])
        .unwrap_or(url.len() - hosts_start);
    let hosts = &url[hosts_start..hosts_start + hosts_len];
    if !hosts.contains(',') {
        return vec![url.to_owned()];
    }
    hosts
        .split(',')
        .map(|host| {
            format!(
                "{}{host}{}",
                &url[..hosts_start],
                &url[hosts_start + hosts_len..]
            )
        })
        .collect()
}

/// The connection settings in `url`: the client's configuration, and the TLS configuration
/// its `sslmode` and `sslrootcert` ask for. Those two are read here, as libpq reads them; the
/// rest of the URL goes to tokio-postgres. No error holds the URL.
pub(super) fn settings(url: &str) -> Result<(Config, ClientConfig)> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut sslmode = None;
    let mut rootcert = None;
    let mut rest = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
        };
        match decode(key).as_deref() {
            Ok("sslmode") => sslmode = Some(decode(value).context("sslmode is not UTF-8")?),
            Ok("sslrootcert") => {
                rootcert = Some(decode(value).context("sslrootcert is not UTF-8")?)
            }
            _ => rest.push(pair),
        }
    }
    let rest = match rest.is_empty() {
        true => base.to_owned(),
        false => format!("{base}?{}", rest.join("&")),
    };
    let mut config: Config = rest
        .parse()
        .map_err(|err: tokio_postgres::Error| PgError::new(&err))
        .context("the state URL is not a valid PostgreSQL URL")?;
    let (mode, verify) = match sslmode.as_deref().unwrap_or("prefer") {
        "disable" => (SslMode::Disable, Verify::Nothing),
        // libpq's allow tries without TLS first; TLS whenever offered is no weaker.
        "allow" | "prefer" => (SslMode::Prefer, Verify::Nothing),
        "require" => (SslMode::Require, Verify::Nothing),
        "verify-ca" => (SslMode::Require, Verify::Chain),
        "verify-full" => (SslMode::Require, Verify::Full),
        _ => bail!(
            "sslmode in the state URL must be disable, allow, prefer, require, verify-ca or \
             verify-full"
        ),
    };
    config.ssl_mode(mode);
    let roots = match rootcert.as_deref() {
        None | Some("") => Roots::None,
        Some("system") => Roots::System,
        Some(path) => Roots::File(PathBuf::from(path)),
    };
    let verify = match (verify, &roots) {
        (Verify::Nothing, Roots::File(_)) if mode == SslMode::Require => Verify::Chain,
        (Verify::Chain | Verify::Nothing, Roots::System) => {
            bail!("sslrootcert=system in the state URL needs sslmode=verify-full, as with libpq")
        }
        (Verify::Chain, Roots::None) => {
            bail!("sslmode=verify-ca in the state URL needs sslrootcert=<file of PEM roots>")
        }
        (verify, _) => verify,
    };
    if config.get_user().is_none() {
        // libpq's default: the user crontap-run runs as.
        if let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
            config.user(user.name);
        }
    }
    if config.get_application_name().is_none() {
        config.application_name("crontap-run");
    }
    Ok((config, tls_config(verify, &roots)?))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const PW: &str = "pw-77x";

    #[test]
    fn one_url_per_host() {
        assert_eq!(
            per_host("postgres://u:p@h1:5432,h2,[::1]:6/jobs?sslmode=require"),
            [
                "postgres://u:p@h1:5432/jobs?sslmode=require",
                "postgres://u:p@h2/jobs?sslmode=require",
                "postgres://u:p@[::1]:6/jobs?sslmode=require",
            ]
        );
        assert_eq!(
            per_host("postgres://h1,h2"),
            ["postgres://h1", "postgres://h2"]
        );
        assert_eq!(per_host("postgres://u@db/x"), ["postgres://u@db/x"]);
    }

    #[test]
    fn sslmodes_and_roots() {
        let ok = |url: &str| settings(url).unwrap_or_else(|e| panic!("{url}: {e:#}")).0;
        let config = ok("postgres://app:pw-77x@db.example:6432/jobs");
        assert_eq!(config.get_ssl_mode(), SslMode::Prefer);
        assert_eq!(config.get_user(), Some("app"));
        assert_eq!(config.get_password(), Some(PW.as_bytes()));
        assert_eq!(config.get_dbname(), Some("jobs"));
        assert_eq!(config.get_application_name(), Some("crontap-run"));
        assert_eq!(
            ok("postgresql://db/x?sslmode=disable").get_ssl_mode(),
            SslMode::Disable
        );
        assert_eq!(
            ok("postgres://db/x?sslmode=allow").get_ssl_mode(),
            SslMode::Prefer
        );
        // sslmode and sslrootcert are taken out; other parameters still reach the client.
        let config = ok(
            "postgres://db/x?connect_timeout=2&sslmode=verify-full&sslrootcert=system\
             &application_name=nightly",
        );
        assert_eq!(config.get_ssl_mode(), SslMode::Require);
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(2)));
        assert_eq!(config.get_application_name(), Some("nightly"));
        assert_eq!(
            ok("postgres://db/x?sslmode=verify-full").get_ssl_mode(),
            SslMode::Require
        );
    }

    #[test]
    fn bad_urls_are_refused_without_the_password() {
        for (url, says) in [
            ("postgres://u:pw-77x@db/x?sslmode=sometimes", "sslmode"),
            ("postgres://u:pw-77x@db/x?sslmode=verify-ca", "sslrootcert"),
            (
                "postgres://u:pw-77x@db/x?sslmode=require&sslrootcert=system",
                "verify-full",
            ),
            (
                "postgres://u:pw-77x@db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
                "sslrootcert",
            ),
            ("postgres://u:pw-77x@db/x?frobnicate=1", "frobnicate"),
            ("postgres://u:pw-77x@db:port/x", "port"),
        ] {
            let err = format!("{:#}", settings(url).map(drop).unwrap_err());
            assert!(err.contains(says), "{url}: {err}");
            assert!(!err.contains(PW), "{url}: {err}");
            assert!(!err.contains('\n'), "{url}: {err}");
        }
    }
}
