//! The hash timing events (docs/DESIGN.md, Tiered hashing): one per hash
//! and verify, with duration, tier, algorithm and cost, never a password.
//! A test binary of its own: its scoped subscriber must not race other
//! tests hitting the same callsites on other threads with no subscriber.

use std::sync::{Arc, Mutex};

use secrecy::SecretString;
use shared::hashing::{Algorithm, PasswordEngine, Pepper, PepperRing, Policy, Tier};

const PEPPER: &str = "test-pepper-0123456789-abcdefghijklmnop";

fn secret(s: &str) -> SecretString {
    SecretString::from(s)
}

fn policy(spec: &str, peppered: bool) -> Policy {
    Policy {
        algorithm: spec.parse::<Algorithm>().unwrap(),
        peppered,
    }
}

fn engine(member: Policy, guest: Policy) -> PasswordEngine {
    let ring = PepperRing::new(Some(Pepper::parse("PEPPER", secret(PEPPER)).unwrap()), Vec::new());
    PasswordEngine::new(member, guest, ring).unwrap()
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

#[test]
fn every_hash_and_verify_logs_duration_tier_algorithm_and_cost_and_never_the_password() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_writer(move || writer.clone())
        .finish();
    let engine = engine(policy("bcrypt:5", true), policy("argon2id:64:1:1", true));
    tracing::subscriber::with_default(subscriber, || {
        let stored = engine.hash(Tier::Guest, &secret("s3cret-guest-pw")).unwrap();
        engine.verify(Tier::Guest, &secret("s3cret-guest-pw"), &stored).unwrap();
        engine.hash(Tier::Member, &secret("s3cret-member-pw")).unwrap();
    });
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(!text.contains("s3cret"), "a password reached the log");
    assert!(!text.contains(PEPPER));
    let events: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let fields: Vec<_> = events.iter().map(|e| &e["fields"]).collect();
    assert_eq!(fields.len(), 3);
    assert_eq!(fields[0]["op"], "hash");
    assert_eq!(fields[0]["tier"], "guest");
    assert_eq!(fields[0]["algorithm"], "argon2id");
    assert_eq!(fields[0]["cost"], "64:1:1");
    assert_eq!(fields[1]["op"], "verify");
    assert_eq!(fields[2]["tier"], "member");
    assert_eq!(fields[2]["algorithm"], "bcrypt");
    assert_eq!(fields[2]["cost"], "5");
    assert!(fields.iter().all(|f| f["duration_ms"].as_f64().unwrap() > 0.0));
}
