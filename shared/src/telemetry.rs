//! Structured JSON logs (CloudWatch on Lambda, stdout on the server).

use tracing_subscriber::EnvFilter;

/// JSON lines, level from `RUST_LOG` (default `info`). Safe to call twice.
pub fn init_json() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(false)
        .with_target(true)
        .without_time()
        .try_init();
}
