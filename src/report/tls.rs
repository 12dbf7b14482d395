//! The rustls configuration for the heartbeat client.
//!
//! Roots come from the system (honouring `SSL_CERT_FILE` and `SSL_CERT_DIR`), or from the
//! bundled Mozilla set when the system has none, so a `FROM scratch` image still verifies
//! certificates. Nothing here runs for an `http` URL except [`without_roots`], an empty
//! placeholder that reqwest requires and that reads no certificate.

use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use rustls::{ClientConfig, RootCertStore};

/// Where the roots a configuration trusts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSource {
    /// This many certificates from the system (or `SSL_CERT_FILE`/`SSL_CERT_DIR`).
    System(usize),
    /// The bundled Mozilla roots: the system had none that could be used.
    Bundled,
}

/// A configuration that trusts the system's roots, else the bundled ones; `named`: the
/// environment names the roots (`SSL_CERT_FILE`, `SSL_CERT_DIR`), so finding none is worth
/// a warning.
pub fn with_roots(named: bool) -> Result<ClientConfig> {
    build(roots(named).0)
}

/// [`with_roots`], read once per process: a run that sends a start and an end reads the
/// system's certificates once.
pub fn shared_with_roots(named: bool) -> Result<ClientConfig> {
    static READ: Mutex<Option<ClientConfig>> = Mutex::new(None);
    let mut read = READ.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(config) = &*read {
        return Ok(config.clone());
    }
    let config = with_roots(named)?;
    *read = Some(config.clone());
    Ok(config)
}

/// The system's roots, else the bundled ones, and which they are; `named` as for
/// [`with_roots`].
pub fn roots(named: bool) -> (RootCertStore, RootSource) {
    // rustls-native-certs reads SSL_CERT_FILE and SSL_CERT_DIR itself, as OpenSSL does.
    let loaded = rustls_native_certs::load_native_certs();
    for err in &loaded.errors {
        tracing::debug!(error = %err, "could not read some system root certificates");
    }
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(loaded.certs);
    if added == 0 {
        // Sources that were there but could not be read (a wrong SSL_CERT_FILE or
        // SSL_CERT_DIR among them) are worth a warning; a host with no certificates at all
        // (a scratch container) is not.
        if named || !loaded.errors.is_empty() {
            tracing::warn!(
                "no usable system root certificates (SSL_CERT_FILE/SSL_CERT_DIR, or the \
                 system's store, could not be read); using the bundled roots"
            );
        } else {
            tracing::debug!("no system root certificates; using the bundled roots");
        }
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        (roots, RootSource::Bundled)
    } else {
        tracing::debug!(count = added, "using system root certificates");
        (roots, RootSource::System(added))
    }
}

/// A configuration that trusts nothing: for clients that only ever speak plain http.
pub fn without_roots() -> Result<ClientConfig> {
    build(RootCertStore::empty())
}

/// A client configuration trusting `roots`, with crontap-run's provider and protocols.
pub fn build(roots: RootCertStore) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS setup failed")?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
