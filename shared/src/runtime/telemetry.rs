//! Structured JSON logs (CloudWatch on Lambda, stdout on the server).

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// `RUST_LOG` as targets and levels (`info`, `warn,access=info`); anything
/// it cannot read is `info`. A plain target filter, not `EnvFilter`: that one
/// brings a regex engine into every Lambda binary for span patterns we do
/// not use.
fn filter() -> Targets {
    std::env::var("RUST_LOG")
        .ok()
        .and_then(|spec| spec.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(LevelFilter::INFO))
}

/// JSON lines, level from `RUST_LOG` (default `info`). Safe to call twice.
pub fn init_json() {
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .json()
                .with_current_span(false)
                .with_target(true)
                .without_time(),
        )
        .with(filter())
        .try_init();
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
