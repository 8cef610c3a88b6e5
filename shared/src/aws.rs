//! How every AWS SDK client here is configured: DynamoDB and Secrets Manager
//! load their settings through [`loader`].
//!
//! AWS endpoints present certificates that chain to the Amazon Trust
//! Services roots, so the HTTPS client trusts those five (`certs/aws-roots.pem`:
//! Amazon Root CA 1-4 and Starfield Services Root CA G2, which cross-signs
//! them) instead of the system store. Loading the system store read and
//! parsed ~150 certificates at every cold start, most of a function's init
//! beyond a hello-world one (docs/benchmarks.md, Cold start). A network that
//! re-signs TLS (an inspecting proxy) adds its CA with `AWS_CA_BUNDLE`, the
//! name the AWS CLI uses. A local endpoint (DynamoDB Local, moto) keeps the
//! system store: it may be anything.

use aws_config::{BehaviorVersion, ConfigLoader};
use aws_sdk_dynamodb::config::{Credentials, Region};
use aws_smithy_http_client::tls::{self, TlsContext, TrustStore, rustls_provider::CryptoMode};
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject as _;

/// Amazon Root CA 1-4 and Starfield Services Root CA G2, as Mozilla's store
/// ships them (SHA-256 fingerprints in `certs/README.md`).
pub const AWS_ROOTS_PEM: &str = include_str!("../certs/aws-roots.pem");

/// The setting naming extra trusted roots (a PEM file).
pub const CA_BUNDLE_SETTING: &str = "AWS_CA_BUNDLE";

/// Client settings that cannot work; the message names the setting.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AwsError(String);

/// Where and how an SDK client connects, checked once at start-up.
#[derive(Clone, Debug)]
pub struct AwsSettings {
    /// A local stand-in for an AWS service (DynamoDB Local, moto).
    endpoint: Option<String>,
    /// For AWS itself: the AWS-roots HTTPS client.
    https: Option<SharedHttpClient>,
}

impl AwsSettings {
    /// For AWS itself (`endpoint` unset): the AWS roots and `ca_bundle`'s
    /// certificates (the contents of `AWS_CA_BUNDLE`), refused here when malformed.
    pub fn new(endpoint: Option<&str>, ca_bundle: Option<&str>) -> Result<Self, AwsError> {
        Ok(match endpoint {
            Some(endpoint) => AwsSettings {
                endpoint: Some(endpoint.to_owned()),
                https: None,
            },
            None => AwsSettings {
                endpoint: None,
                https: Some(https_client(ca_bundle)?),
            },
        })
    }

    pub fn is_local(&self) -> bool {
        self.endpoint.is_some()
    }

    /// The SDK defaults with the AWS-roots HTTPS client; for a local
    /// endpoint, that endpoint with dummy credentials, the system roots and,
    /// unless the environment names one, region us-east-1.
    pub fn loader(&self) -> ConfigLoader {
        let loader = aws_config::defaults(BehaviorVersion::latest());
        let Some(endpoint) = &self.endpoint else {
            return match &self.https {
                Some(https) => loader.http_client(https.clone()),
                None => loader,
            };
        };
        let region =
            aws_config::meta::region::RegionProviderChain::default_provider().or_else(Region::new("us-east-1"));
        loader
            .endpoint_url(endpoint)
            .region(region)
            .credentials_provider(Credentials::new("local", "local", None, None, "local-endpoint"))
    }
}

/// An HTTPS client (rustls on aws-lc, as the SDK's default) trusting the AWS
/// roots and `ca_bundle`'s certificates.
pub fn https_client(ca_bundle: Option<&str>) -> Result<SharedHttpClient, AwsError> {
    let mut roots = TrustStore::empty().with_native_roots(false);
    roots.add_pem_certificate(AWS_ROOTS_PEM.as_bytes());
    if let Some(bundle) = ca_bundle {
        // The SDK parses these when it first connects and panics on a bad
        // one: check them here, where the error can name the setting.
        let certificates = certificates(bundle).map_err(|e| AwsError(format!("{CA_BUNDLE_SETTING}: {e}")))?;
        if certificates.is_empty() {
            return Err(AwsError(format!(
                "{CA_BUNDLE_SETTING}: the file holds no PEM certificate"
            )));
        }
        roots.add_pem_certificate(bundle.as_bytes());
    }
    let context = TlsContext::builder()
        .with_trust_store(roots)
        .build()
        .map_err(|e| AwsError(format!("TLS settings for AWS: {e}")))?;
    Ok(aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::AwsLc))
        .tls_context(context)
        .build_https())
}

/// The DER certificates of a PEM text; an error names what is malformed.
pub fn certificates(pem: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not a valid PEM certificate list: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aws_trust_store_holds_exactly_the_five_amazon_trust_services_roots() {
        let roots = certificates(AWS_ROOTS_PEM).unwrap();
        assert_eq!(roots.len(), 5);
        // Each parses into a trust anchor, the form rustls checks chains against.
        for root in &roots {
            webpki::anchor_from_trusted_cert(root).expect("a usable trust anchor");
        }
        for name in [
            "Amazon Root CA 1",
            "Amazon Root CA 2",
            "Amazon Root CA 3",
            "Amazon Root CA 4",
            "Starfield Services Root Certificate Authority - G2",
        ] {
            assert!(
                roots
                    .iter()
                    .any(|der| der.windows(name.len()).any(|w| w == name.as_bytes())),
                "{name} is missing"
            );
        }
    }

    #[test]
    fn an_https_client_builds_with_and_without_an_extra_ca_bundle() {
        https_client(None).unwrap();
        https_client(Some(AWS_ROOTS_PEM)).unwrap();
    }

    #[test]
    fn a_ca_bundle_that_is_not_pem_certificates_is_refused_naming_the_setting() {
        for bad in [
            "not a certificate",
            "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n",
        ] {
            let error = https_client(Some(bad)).unwrap_err().to_string();
            assert!(error.contains(CA_BUNDLE_SETTING), "{error}");
        }
    }
}
