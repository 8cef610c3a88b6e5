//! Traces over OTLP/HTTP protobuf (docs/operations.md, Traces).
//!
//! Off unless the standard settings name an endpoint:
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (plus `/v1/traces`); `OTEL_SDK_DISABLED=true`
//! or `OTEL_TRACES_EXPORTER=none` turn them off again. An endpoint on
//! `xray.<region>.amazonaws.com` is X-Ray's OTLP endpoint: each export is
//! signed with SigV4 (service `xray`) with the process's AWS credentials.
//! Anything else is a collector (`OTEL_EXPORTER_OTLP_HEADERS` for its
//! authorization, read by the exporter).
//!
//! The SDK's batch processor runs on a thread of its own and exports from
//! there; the HTTP client it calls runs its request on a one-thread tokio
//! runtime of its own too, so a flush that blocks a request's thread never
//! waits for that same thread.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::{ProvideCredentials as _, SharedCredentialsProvider};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use opentelemetry::KeyValue;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;

use super::env::Env;
use super::settings::ConfigError;

/// Where spans go, read from the `OTEL_*` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSettings {
    /// The full OTLP/HTTP traces URL.
    pub endpoint: String,
    /// X-Ray's endpoint: the region its requests are signed for.
    pub xray_region: Option<String>,
    /// How long one export may take.
    pub timeout: Duration,
}

impl TraceSettings {
    /// `None` when no endpoint is set, or traces are turned off.
    pub fn from_env(env: &Env<'_>) -> Result<Option<Self>, ConfigError> {
        if env
            .get("OTEL_SDK_DISABLED")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || env
                .get("OTEL_TRACES_EXPORTER")
                .is_some_and(|v| v.eq_ignore_ascii_case("none"))
        {
            return Ok(None);
        }
        let endpoint = match (
            env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            env.get("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(traces), _) => traces,
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        let not_a_url = || {
            ConfigError::invalid(format!(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT) must be an http or https URL, not {endpoint:?}"
            ))
        };
        let uri: http::Uri = endpoint.parse().map_err(|_| not_a_url())?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(not_a_url());
        }
        let xray_region = uri
            .host()
            .and_then(|host| host.strip_prefix("xray."))
            .and_then(|rest| rest.strip_suffix(".amazonaws.com"))
            .filter(|region| !region.is_empty() && !region.contains('.'))
            .map(str::to_owned);
        let timeout = env
            .millis("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")?
            .or(env.millis("OTEL_EXPORTER_OTLP_TIMEOUT")?)
            .unwrap_or(Duration::from_secs(5));
        Ok(Some(TraceSettings {
            endpoint,
            xray_region,
            timeout,
        }))
    }
}

impl fmt::Display for TraceSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.xray_region {
            Some(region) => write!(f, "otlp {} (X-Ray, SigV4 {region})", self.endpoint),
            None => write!(f, "otlp {}", self.endpoint),
        }
    }
}

/// The tracer provider for `settings`: spans of `service` (the function's
/// name, or `server`), batched, exported by [`OtlpClient`].
pub fn provider(settings: &TraceSettings, service: &str) -> Result<SdkTracerProvider, ConfigError> {
    let client = OtlpClient::new(settings)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(settings.endpoint.clone())
        .with_timeout(settings.timeout)
        .with_http_client(client)
        .build()
        .map_err(|e| ConfigError::invalid(format!("OTLP traces exporter: {e}")))?;
    let resource = Resource::builder_empty()
        .with_service_name(format!("community-boards-{service}"))
        .with_attributes([
            KeyValue::new("faas.name", service.to_owned()),
            KeyValue::new("service.namespace", "community-boards"),
        ])
        .build();
    Ok(SdkTracerProvider::builder()
        .with_resource(resource)
        .with_batch_exporter(exporter)
        .build())
}

/// The exporter's HTTP client: hyper with rustls (the AWS SDK's TLS stack,
/// system roots for a collector, AWS roots for X-Ray), on a runtime of its own.
#[derive(Clone)]
pub struct OtlpClient {
    http: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
    signer: Option<Signer>,
    runtime: tokio::runtime::Handle,
    timeout: Duration,
}

impl fmt::Debug for OtlpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpClient")
            .field("signed", &self.signer.is_some())
            .finish()
    }
}

impl OtlpClient {
    fn new(settings: &TraceSettings) -> Result<Self, ConfigError> {
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| ConfigError::invalid(format!("TLS for the OTLP exporter: {e}")))?
            .with_root_certificates(roots(settings)?)
            .with_no_client_auth();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .build();
        let http = Client::builder(hyper_util::rt::TokioExecutor::new()).build(https);
        Ok(OtlpClient {
            http,
            signer: settings.xray_region.clone().map(Signer::from_environment),
            runtime: export_runtime()?,
            timeout: settings.timeout,
        })
    }

    async fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let mut request = request;
        if let Some(signer) = &self.signer {
            signer.sign(&mut request, SystemTime::now()).await?;
        }
        let response = self.http.request(request.map(Full::new)).await?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await?.to_bytes();
        Ok(Response::from_parts(parts, body))
    }
}

#[async_trait::async_trait]
impl HttpClient for OtlpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.clone();
        let timeout = self.timeout;
        let sent = self
            .runtime
            .spawn(async move { tokio::time::timeout(timeout, client.send(request)).await });
        match sent.await? {
            Ok(answer) => answer,
            Err(_) => Err(format!("the OTLP export took over {} ms", timeout.as_millis()).into()),
        }
    }
}

/// The exporter's one-thread runtime, started on first use.
fn export_runtime() -> Result<tokio::runtime::Handle, ConfigError> {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Handle> = std::sync::OnceLock::new();
    if let Some(handle) = RUNTIME.get() {
        return Ok(handle.clone());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ConfigError::invalid(format!("the OTLP exporter's runtime: {e}")))?;
    let handle = runtime.handle().clone();
    std::thread::Builder::new()
        .name("otlp-export".into())
        .spawn(move || runtime.block_on(std::future::pending::<()>()))
        .map_err(|e| ConfigError::invalid(format!("the OTLP exporter's thread: {e}")))?;
    Ok(RUNTIME.get_or_init(|| handle).clone())
}

/// X-Ray: the AWS roots (as every AWS client here, `crate::aws`); a
/// collector over https: the system's; over plain http (a local collector
/// or sidecar): none, so a cold start does not read the system store.
fn roots(settings: &TraceSettings) -> Result<rustls::RootCertStore, ConfigError> {
    let mut store = rustls::RootCertStore::empty();
    let certificates = if settings.xray_region.is_some() {
        crate::aws::certificates(crate::aws::AWS_ROOTS_PEM).map_err(ConfigError::invalid)?
    } else if settings.endpoint.starts_with("https:") {
        rustls_native_certs::load_native_certs().certs
    } else {
        Vec::new()
    };
    store.add_parsable_certificates(certificates);
    Ok(store)
}

/// SigV4 for X-Ray's OTLP endpoint.
#[derive(Clone, Debug)]
pub struct Signer {
    region: String,
    credentials: Arc<tokio::sync::OnceCell<SharedCredentialsProvider>>,
}

impl Signer {
    /// Credentials from the AWS SDK's default chain (on Lambda, the
    /// function role's, from the environment), loaded at the first export.
    fn from_environment(region: String) -> Self {
        Signer {
            region,
            credentials: Arc::new(tokio::sync::OnceCell::new()),
        }
    }

    /// With fixed credentials (tests).
    pub fn with_credentials(region: &str, credentials: Credentials) -> Self {
        Signer {
            region: region.to_owned(),
            credentials: Arc::new(tokio::sync::OnceCell::new_with(Some(SharedCredentialsProvider::new(
                credentials,
            )))),
        }
    }

    /// Adds `Authorization`, `X-Amz-Date` (and the session token) to `request`.
    pub async fn sign(&self, request: &mut Request<Bytes>, at: SystemTime) -> Result<(), HttpError> {
        use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
        let provider = self
            .credentials
            .get_or_try_init(|| async {
                let settings = crate::aws::AwsSettings::new(None, None).map_err(|e| e.to_string())?;
                settings
                    .loader()
                    .load()
                    .await
                    .credentials_provider()
                    .ok_or_else(|| "no AWS credentials provider for signing X-Ray exports".to_owned())
            })
            .await?;
        let identity = provider.provide_credentials().await?.into();
        let params = aws_sigv4::sign::v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name("xray")
            .time(at)
            .settings(SigningSettings::default())
            .build()?
            .into();
        let headers: Vec<(&str, &str)> = request
            .headers()
            .iter()
            .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
            .collect();
        let uri = request.uri().to_string();
        let signable = SignableRequest::new(
            request.method().as_str(),
            &uri,
            headers.into_iter(),
            SignableBody::Bytes(request.body()),
        )?;
        let (instructions, _signature) = sign(signable, &params)?.into_parts();
        instructions.apply_to_request_http1x(request);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<Option<TraceSettings>, ConfigError> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        TraceSettings::from_env(&Env::new(|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        }))
    }

    #[test]
    fn no_endpoint_means_no_traces() {
        assert_eq!(settings(&[]).unwrap(), None);
        assert_eq!(
            settings(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_SDK_DISABLED", "true")
            ])
            .unwrap(),
            None
        );
        assert_eq!(
            settings(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_TRACES_EXPORTER", "none")
            ])
            .unwrap(),
            None
        );
    }

    #[test]
    fn the_generic_endpoint_gets_the_traces_path_and_the_traces_endpoint_wins() {
        let base = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")])
            .unwrap()
            .unwrap();
        assert_eq!(base.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(base.xray_region, None);
        assert_eq!(base.timeout, Duration::from_secs(5));
        let own = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://other:4318/custom"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1500"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(own.endpoint, "https://other:4318/custom");
        assert_eq!(own.timeout, Duration::from_millis(1500));
    }

    #[test]
    fn the_xray_endpoint_is_signed_for_its_region() {
        let xray = settings(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "https://xray.ap-northeast-2.amazonaws.com/v1/traces",
        )])
        .unwrap()
        .unwrap();
        assert_eq!(xray.xray_region.as_deref(), Some("ap-northeast-2"));
        let lookalike = settings(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "https://xray.example.com/v1/traces",
        )])
        .unwrap()
        .unwrap();
        assert_eq!(lookalike.xray_region, None);
    }

    #[test]
    fn an_endpoint_that_is_not_an_http_url_is_refused_naming_the_setting() {
        for bad in ["collector:4318", "ftp://collector/v1/traces", "not a url"] {
            let error = settings(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", bad)]).unwrap_err();
            assert!(
                error.to_string().contains("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
                "{error}"
            );
        }
    }

    /// X-Ray itself cannot run here: the signature is checked for its shape
    /// and its determinism (the same request, key and time sign alike, and
    /// another body does not).
    #[tokio::test]
    async fn an_xray_export_is_signed_with_sigv4_for_the_xray_service() {
        let signer = Signer::with_credentials(
            "ap-northeast-2",
            Credentials::new(
                "AKIDEXAMPLE",
                "wJalrXUtnFEMI/K7MDENG",
                Some("session".into()),
                None,
                "test",
            ),
        );
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_169_600); // 2026-12-02T00:00:00Z
        let request = |body: &'static [u8]| {
            http::Request::post("https://xray.ap-northeast-2.amazonaws.com/v1/traces")
                .header("content-type", "application/x-protobuf")
                .body(Bytes::from_static(body))
                .unwrap()
        };
        let (mut a, mut b, mut c) = (request(b"spans"), request(b"spans"), request(b"other"));
        for r in [&mut a, &mut b, &mut c] {
            signer.sign(r, at).await.unwrap();
        }
        let auth = |r: &Request<Bytes>| r.headers()["authorization"].to_str().unwrap().to_owned();
        assert!(
            auth(&a).starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261202/ap-northeast-2/xray/aws4_request"),
            "{}",
            auth(&a)
        );
        assert!(auth(&a).contains("SignedHeaders=content-type;host;x-amz-date;x-amz-security-token"));
        assert_eq!(a.headers()["x-amz-date"], "20261202T000000Z");
        assert_eq!(a.headers()["x-amz-security-token"], "session");
        assert_eq!(auth(&a), auth(&b));
        assert_ne!(auth(&a), auth(&c));
    }
}
