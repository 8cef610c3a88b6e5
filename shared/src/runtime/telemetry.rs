//! Structured JSON logs (CloudWatch on Lambda, stdout on the server) and,
//! when the `OTEL_*` settings name an endpoint, (v3) spans exported over
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

/// What [`init`] set up: the span exporter, when traces are on.
#[derive(Clone, Default)]
pub struct Telemetry {
    #[cfg(feature = "traces")]
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
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
    pub async fn flush(&self) {
        #[cfg(feature = "traces")]
        if let Some(provider) = self.provider.clone() {
            let flushed = tokio::task::spawn_blocking(move || provider.force_flush()).await;
            if let Ok(Err(e)) = flushed {
                tracing::warn!(error = %e, "traces: flush failed");
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

    #[test]
    fn rust_log_reads_as_targets_and_levels() {
        let targets: Targets = "warn,access=info".parse().unwrap();
        assert!(targets.would_enable("access", &tracing::Level::INFO));
        assert!(!targets.would_enable("shared::store", &tracing::Level::INFO));
    }
}
