//! The rustls configuration for the heartbeat client.
//!
//! Roots come from the system (honouring `SSL_CERT_FILE` and `SSL_CERT_DIR`), or from the
//! bundled Mozilla set when the system has none, so a `FROM scratch` image still verifies
//! certificates. Nothing here runs for an `http` URL except [`without_roots`], an empty
//! placeholder that reqwest requires and that reads no certificate.

use std::sync::Arc;

use anyhow::{Context, Result};
use rustls::{ClientConfig, RootCertStore};

/// A configuration that trusts the system's roots, else the bundled ones.
pub fn with_roots() -> Result<ClientConfig> {
    let loaded = rustls_native_certs::load_native_certs();
    for err in &loaded.errors {
        tracing::debug!(error = %err, "could not read some system root certificates");
    }
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(loaded.certs);
    if added == 0 {
        if std::env::var_os("SSL_CERT_FILE").is_some() || std::env::var_os("SSL_CERT_DIR").is_some()
        {
            tracing::warn!(
                "no usable certificates in SSL_CERT_FILE/SSL_CERT_DIR; using the bundled roots"
            );
        } else {
            tracing::debug!("no system root certificates; using the bundled roots");
        }
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    } else {
        tracing::debug!(count = added, "using system root certificates");
    }
    build(roots)
}

/// A configuration that trusts nothing: for clients that only ever speak plain http.
pub fn without_roots() -> Result<ClientConfig> {
    build(RootCertStore::empty())
}

fn build(roots: RootCertStore) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS setup failed")?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
