//! The hash timing events (docs/DESIGN.md, Tiered hashing): one per hash
//! and verify that the service runs, with duration, queue wait, tier,
//! algorithm and cost, never a password (on Lambda the same record is EMF:
//! hashing/src/timing.rs, tests/concurrency.rs of guest-comment).
//! A test binary of its own: it installs the global subscriber.

use std::sync::{Arc, Mutex};

use hashing::timing::TimingSink;
use hashing::{Batching, Hashing, HashingConfig, Overrides, Pepper, PepperRing, Policy, Tier};
use secrecy::SecretString;

const PEPPER: &str = "test-pepper-0123456789-abcdefghijklmnop";

fn secret(s: &str) -> SecretString {
    SecretString::from(s)
}

/// A tracing writer that keeps what was written.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn every_hash_and_verify_logs_duration_queue_wait_tier_algorithm_and_cost_and_never_the_password() {
    let captured = Captured::default();
    let writer = captured.clone();
    // Global: hashes run on the hashing threads, not this one.
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt()
            .json()
            .with_writer(move || writer.clone())
            .finish(),
    )
    .unwrap();
    let policy = |spec: &str| Policy {
        algorithm: spec.parse().unwrap(),
        peppered: true,
    };
    let hashing = Hashing::new(HashingConfig {
        member: policy("bcrypt:5"),
        guest: policy("argon2id:64:1:1"),
        peppers: PepperRing::new(Some(Pepper::parse("PEPPER", secret(PEPPER)).unwrap()), Vec::new()),
        workers: 1,
        queue: hashing::DEFAULT_QUEUE,
        weights: [1, 1],
        batching: Batching::Off,
        overrides: Overrides {
            below_floor: true,
            downgrade: false,
        },
        timing: TimingSink::Log,
    })
    .unwrap();
    let stored = hashing.hash(Tier::Guest, secret("s3cret-guest-pw")).await.unwrap();
    hashing
        .verify(Tier::Guest, secret("s3cret-guest-pw"), stored)
        .await
        .unwrap();
    hashing.hash(Tier::Member, secret("s3cret-member-pw")).await.unwrap();

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(!text.contains("s3cret"), "a password reached the log");
    assert!(!text.contains(PEPPER));
    let events: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let fields: Vec<_> = events
        .iter()
        .filter(|e| e["target"] == "password_hash")
        .map(|e| &e["fields"])
        .collect();
    assert_eq!(fields.len(), 3, "{text}");
    assert_eq!(fields[0]["op"], "hash");
    assert_eq!(fields[0]["tier"], "guest");
    assert_eq!(fields[0]["algorithm"], "argon2id");
    assert_eq!(fields[0]["cost"], "64:1:1");
    assert_eq!(fields[1]["op"], "verify");
    assert_eq!(
        fields[1]["algorithm"], "argon2id",
        "a verify names the stored hash's algorithm"
    );
    assert_eq!(fields[2]["tier"], "member");
    assert_eq!(fields[2]["algorithm"], "bcrypt");
    assert_eq!(fields[2]["cost"], "5");
    for f in &fields {
        assert!(f["duration_ms"].as_f64().unwrap() > 0.0, "{f}");
        assert!(f["queue_wait_ms"].as_f64().unwrap() >= 0.0, "{f}");
        assert_eq!(f["running"], 1, "one at a time here: {f}");
    }
}
