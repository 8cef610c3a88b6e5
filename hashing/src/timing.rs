//! How each hash's timing leaves the process: one record per hash or verify,
//! from which `calibrate from-logs` rebuilds the timing table on the
//! deployment's own CPUs. On Lambda a record is a CloudWatch Embedded
//! Metric Format (EMF) line, which CloudWatch turns into metrics without a
//! metric filter; on the server it is a log event.

use std::io::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::policy::{Algorithm, Tier};

/// The CloudWatch namespace of the hash metrics (the template's dashboard
/// and alarms read it).
pub const NAMESPACE: &str = "CommunityBoards";
/// The log event's target on the server.
pub const TARGET: &str = "password_hash";
pub const MESSAGE: &str = "password hash timing";

/// One hash or verify that ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HashTiming {
    /// `hash` or `verify`.
    pub op: &'static str,
    pub tier: Tier,
    pub algorithm: Algorithm,
    /// The hash's own time, on its thread.
    pub hash: Duration,
    /// From the request asking to hash to the hash starting (the gate's queue).
    pub queue_wait: Duration,
    /// Hash workers of this process busy when it started, its own included.
    pub running: usize,
    /// Hashes that ran together with it, itself included (1: alone; more:
    /// a batch, docs/DESIGN.md, Batch hashing). `hash` is then the batch's time.
    pub batch: usize,
}

/// Where records go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimingSink {
    /// A `password_hash` log event (the server, tests).
    Log,
    /// An EMF line on stdout, with the function's name as a dimension.
    Emf { function: String },
}

impl TimingSink {
    pub fn record(&self, timing: &HashTiming) {
        match self {
            TimingSink::Log => tracing::info!(
                target: TARGET,
                op = timing.op,
                tier = timing.tier.as_str(),
                algorithm = timing.algorithm.name(),
                cost = %timing.algorithm.cost_label(),
                duration_ms = millis(timing.hash),
                queue_wait_ms = millis(timing.queue_wait),
                running = timing.running,
                batch = timing.batch,
                "{MESSAGE}"
            ),
            TimingSink::Emf { function } => {
                let mut line = emf(function, timing, SystemTime::now()).to_string();
                line.push('\n');
                // One write of a whole line: stdout's lock keeps it apart
                // from the log lines other threads write.
                let _ = std::io::stdout().lock().write_all(line.as_bytes());
            }
        }
    }
}

/// The EMF record of `timing` (the specification:
/// docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
/// Dimensions: function, tier, algorithm (`bcrypt:10`, the tier spec syntax).
pub fn emf(function: &str, timing: &HashTiming, at: SystemTime) -> serde_json::Value {
    let timestamp = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    json!({
        "_aws": {
            "Timestamp": timestamp,
            "CloudWatchMetrics": [{
                "Namespace": NAMESPACE,
                "Dimensions": [["function", "tier", "algorithm"]],
                "Metrics": [
                    {"Name": "hash_ms", "Unit": "Milliseconds"},
                    {"Name": "queue_wait_ms", "Unit": "Milliseconds"},
                    {"Name": "running", "Unit": "Count"},
                    {"Name": "batch", "Unit": "Count"}
                ]
            }]
        },
        "function": function,
        "tier": timing.tier.as_str(),
        "algorithm": timing.algorithm.to_string(),
        "op": timing.op,
        "hash_ms": millis(timing.hash),
        "queue_wait_ms": millis(timing.queue_wait),
        "running": timing.running,
        "batch": timing.batch,
    })
}

fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emf_record_names_its_metrics_dimensions_and_values_at_the_top_level() {
        let timing = HashTiming {
            op: "verify",
            tier: Tier::Guest,
            algorithm: Algorithm::Bcrypt { cost: 8 },
            hash: Duration::from_micros(14_625),
            queue_wait: Duration::from_micros(1_500),
            running: 3,
            batch: 8,
        };
        let at = UNIX_EPOCH + Duration::from_millis(1_796_014_680_123);
        let record = emf("guest-comment", &timing, at);
        let directive = &record["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(record["_aws"]["Timestamp"], 1_796_014_680_123u64);
        assert_eq!(directive["Namespace"], NAMESPACE);
        // Every dimension and metric the directive names is a top-level member.
        for name in directive["Dimensions"][0].as_array().unwrap() {
            assert!(record[name.as_str().unwrap()].is_string(), "{name}");
        }
        for metric in directive["Metrics"].as_array().unwrap() {
            assert!(record[metric["Name"].as_str().unwrap()].is_number(), "{metric}");
        }
        assert_eq!(record["algorithm"], "bcrypt:8");
        assert_eq!(record["hash_ms"], 14.625);
        assert_eq!(record["queue_wait_ms"], 1.5);
        assert_eq!(record["running"], 3);
        assert_eq!(record["batch"], 8);
    }
}
