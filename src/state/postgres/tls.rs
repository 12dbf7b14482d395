//! The TLS side of the connection: what each `sslmode` checks of the server's certificate,
//! where trusted roots come from, the rustls configuration for them, and the certificate
//! verifiers for `verify-ca` (chain only) and `prefer`/`require` (nothing checked).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};

/// What `sslmode` asks of the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verify {
    /// Encrypt, check nothing.
    Nothing,
    /// The certificate chains to a trusted root; its names are not checked.
    Chain,
    /// The chain and that the certificate names the host.
    Full,
}

/// Where trusted roots come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Roots {
    None,
    System,
    File(PathBuf),
}
/// The rustls configuration for a check of the server's certificate.
pub(super) fn tls_config(verify: Verify, roots: &Roots) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = match (verify, roots) {
        (Verify::Full, Roots::None | Roots::System) => crate::report::tls::with_roots(false)?,
        (Verify::Full, Roots::File(path)) => builder(&provider)?
            .with_root_certificates(read_roots(path)?)
            .with_no_client_auth(),
        (Verify::Chain, Roots::File(path)) => {
            let roots = Arc::new(read_roots(path)?);
            let chain = WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
                .build()
                .context("TLS setup failed")?;
            builder(&provider)?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(chain)))
                .with_no_client_auth()
        }
        _ => builder(&provider)?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(
                provider.signature_verification_algorithms,
            )))
            .with_no_client_auth(),
    };
    // PostgreSQL 17 refuses any other protocol name a client offers.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(config)
}

fn builder(
    provider: &Arc<CryptoProvider>,
) -> Result<rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier>> {
    ClientConfig::builder_with_provider(Arc::clone(provider))
        .with_safe_default_protocol_versions()
        .context("TLS setup failed")
}

fn read_roots(path: &std::path::Path) -> Result<RootCertStore> {
    let unreadable = || format!("cannot read sslrootcert {}", path.display());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).with_context(unreadable)? {
        roots
            .add(cert.with_context(unreadable)?)
            .with_context(unreadable)?;
    }
    if roots.is_empty() {
        bail!("sslrootcert {} holds no certificate", path.display());
    }
    Ok(roots)
}

/// `verify-ca`: the chain is checked, the names in the certificate are not.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer` and `require`, as libpq has them: the connection is encrypted, and the server's
/// certificate is not checked (the handshake's signatures still are).
#[derive(Debug)]
struct Unchecked(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_schemes()
    }
}
