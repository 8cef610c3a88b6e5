//! Structured JSON logs (CloudWatch on Lambda, stdout on the server) and,
//! when the `OTEL_*` settings name an endpoint, spans exported over
//! OTLP (`super::traces`; docs/operations.md, Traces).
//!
//! Spans are on the target `traces` (request, store call, hash): the log
//! layer never sees them, so with traces off no span is even created.

use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use super::env::Env;
use super::settings::ConfigError;

/// The target of every span meant for traces.
pub const SPANS: &str = "traces";

/// `RUST_LOG` as targets and levels (`info`, `warn,access=info`); anything
/// it cannot read is `info`. A plain target filter, not `EnvFilter`: that one
/// brings a regex engine into every Lambda binary for span patterns we do
/// not use.
fn filter() -> Targets {
    std::env::var("RUST_LOG")
        .ok()
        .and_then(|spec| spec.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(LevelFilter::INFO))
        .with_target(SPANS, LevelFilter::OFF)
}

fn json_logs<S>() -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_subscriber::fmt::layer()
        .json()
        .with_current_span(false)
        .with_span_list(false)
        .with_target(true)
        .without_time()
        .with_filter(filter())
}

/// JSON lines, level from `RUST_LOG` (default `info`). Safe to call twice.
pub fn init_json() {
    let _ = tracing_subscriber::registry().with(json_logs()).try_init();
}

/// How long an invocation's answer waits for its spans to be sent. A
/// collector that is down or slow must not hold every answer for the
/// export's own timeout (5 s): past this the flush goes on behind the
/// answer (and, if the environment is frozen meanwhile, when it thaws).
pub const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_millis(300);

/// What [`init`] set up: the span exporter, when traces are on.
#[derive(Clone, Default)]
pub struct Telemetry {
    #[cfg(feature = "traces")]
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
    /// A flush is running: the next ones wait for the batch processor's own
    /// schedule rather than pile up behind it.
    #[cfg(feature = "traces")]
    flushing: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").field("traces", &self.traces()).finish()
    }
}

impl Telemetry {
    /// Whether spans are exported.
    pub fn traces(&self) -> bool {
        #[cfg(feature = "traces")]
        return self.provider.is_some();
        #[cfg(not(feature = "traces"))]
        false
    }

    /// Sends every finished span now (Lambda: after each invocation, before
    /// the environment may freeze). Off a runtime thread: the SDK's flush blocks.
    /// At most [`FLUSH_WAIT`] is waited for.
    pub async fn flush(&self) {
        #[cfg(feature = "traces")]
        if let Some(provider) = self.provider.clone() {
            use std::sync::atomic::Ordering;
            if self.flushing.swap(true, Ordering::AcqRel) {
                return;
            }
            let flushing = self.flushing.clone();
            let flushed = tokio::task::spawn_blocking(move || {
                let result = provider.force_flush();
                flushing.store(false, Ordering::Release);
                result
            });
            match tokio::time::timeout(FLUSH_WAIT, flushed).await {
                Ok(Ok(Err(e))) => warn_once(&format!("traces: an export failed: {e}")),
                Err(_) => warn_once("traces: an export took over 300 ms; answers no longer wait for it"),
                Ok(_) => {}
            }
        }
    }

    /// Flushes and stops the exporter (the server, at shutdown).
    pub async fn shutdown(&self) {
        #[cfg(feature = "traces")]
        if let Some(provider) = self.provider.clone() {
            let _ = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        }
    }
}

/// One warning per process: a collector that is down would otherwise log
/// a line per request.
#[cfg(feature = "traces")]
fn warn_once(message: &str) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!(detail = message, "traces: spans may be lost (logged once)");
    }
}

/// JSON logs as [`init_json`], and spans of `service` (a function's name, or
/// `server`) exported where the `OTEL_*` settings say (`super::traces`).
/// A setting that cannot work is an error naming it; the logs are set up
/// either way, so the caller can log it.
pub fn init(service: &str, env: &Env<'_>) -> Result<Telemetry, ConfigError> {
    #[cfg(feature = "traces")]
    {
        let settings = match super::traces::TraceSettings::from_env(env) {
            Ok(settings) => settings,
            Err(e) => {
                init_json();
                return Err(e);
            }
        };
        let Some(settings) = settings else {
            init_json();
            return Ok(Telemetry::default());
        };
        let provider = super::traces::provider(&settings, service).inspect_err(|_| init_json())?;
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "community-boards");
        // Spans of the `traces` target; error events become span events.
        let spans = Targets::new()
            .with_target(SPANS, LevelFilter::TRACE)
            .with_default(LevelFilter::ERROR);
        let _ = tracing_subscriber::registry()
            .with(json_logs())
            .with(
                tracing_opentelemetry::layer()
                    .with_tracer(tracer)
                    // A span starts when it ends or a child needs it, not when
                    // first entered: the request's span is named after its
                    // route once routed (`http::traced`). No other OpenTelemetry
                    // instrumentation reads the active context here.
                    .with_context_activation(false)
                    // Each span carries what it says, not the source file,
                    // thread and busy times of the code that made it.
                    .with_location(false)
                    .with_threads(false)
                    .with_target(false)
                    .with_tracked_inactivity(false)
                    .with_filter(spans),
            )
            .try_init();
        tracing::info!(service, traces = %settings, "traces on");
        Ok(Telemetry {
            provider: Some(provider),
            flushing: Default::default(),
        })
    }
    #[cfg(not(feature = "traces"))]
    {
        let _ = (service, env);
        init_json();
        Ok(Telemetry::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A collector that takes the connection and never answers: an
    /// invocation's answer waits at most FLUSH_WAIT, and a flush asked for
    /// meanwhile does not queue behind it.
    #[cfg(feature = "traces")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_collector_that_never_answers_holds_an_answer_at_most_the_flush_wait() {
        use opentelemetry::trace::{Span as _, Tracer as _, TracerProvider as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((connection, _)) = listener.accept().await {
                held.push(connection);
            }
        });
        let settings = super::super::traces::TraceSettings {
            endpoint,
            xray_region: None,
            timeout: std::time::Duration::from_secs(5),
        };
        let provider = super::super::traces::provider(&settings, "test").unwrap();
        let telemetry = Telemetry {
            provider: Some(provider.clone()),
            flushing: Default::default(),
        };
        provider.tracer("test").start("a span").end();
        let started = std::time::Instant::now();
        telemetry.flush().await;
        let first = started.elapsed();
        provider.tracer("test").start("another").end();
        let again = std::time::Instant::now();
        telemetry.flush().await;
        let second = again.elapsed();
        println!("flush against a silent collector: {first:?}, then {second:?} while it is still stuck");
        assert!(first >= FLUSH_WAIT && first < FLUSH_WAIT * 3, "{first:?}");
        assert!(
            second < FLUSH_WAIT / 3,
            "a flush in flight is not queued behind: {second:?}"
        );
    }

    #[test]
    fn rust_log_reads_as_targets_and_levels() {
        let targets: Targets = "warn,access=info".parse().unwrap();
        assert!(targets.would_enable("access", &tracing::Level::INFO));
        assert!(!targets.would_enable("shared::store", &tracing::Level::INFO));
    }
}
