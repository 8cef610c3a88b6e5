//! [`Hashing`]: the engine behind the gate, built once per process.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use secrecy::SecretString;
use tracing::Instrument as _;
use tracing::field::Empty;

use crate::config::{ConfigError, HashingConfig, check_floors};
use crate::engine::{HashError as EngineError, Job, PasswordEngine, StoredHash, Verification};
use crate::gate::{HashingGate, Overloaded, QueueOwner};
use crate::policy::{Algorithm, Tier};
use crate::timing::{HashTiming, TimingSink};

/// What can go wrong when a request hashes or verifies a password.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HashError {
    /// The gate's queue is full: answer 503 with `Retry-After`.
    #[error(transparent)]
    Overloaded(#[from] Overloaded),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// The hashing service a process builds once at start and shares.
#[derive(Debug, Clone)]
pub struct Hashing {
    engine: Arc<PasswordEngine>,
    gate: HashingGate,
    /// Hashes and verifies run so far (tests and load runs read it).
    runs: Arc<AtomicU64>,
    /// Of those, the ones that ran in a batch of two or more.
    batched: Arc<AtomicU64>,
    timing: Arc<TimingSink>,
    /// Whose hashes these are, for the gate's per-client share.
    owner: Option<QueueOwner>,
}

impl Hashing {
    pub fn new(config: HashingConfig) -> Result<Self, ConfigError> {
        let (member, guest) = (config.member.algorithm, config.guest.algorithm);
        check_floors(config.member, config.guest, config.overrides)?;
        let engine = PasswordEngine::new(config.member, config.guest, config.peppers)?
            .allowing_downgrade(config.overrides.downgrade);
        Ok(Hashing {
            engine: Arc::new(engine),
            gate: HashingGate::for_algorithms(config.workers, config.queue, member, guest)
                .weighted(config.weights)
                .batching(config.batching),
            runs: Arc::default(),
            batched: Arc::default(),
            timing: Arc::new(config.timing),
            owner: None,
        })
    }

    /// The same service, its hashes queued as the client's (`client_key`,
    /// the client address key): one client holds at most a fair share of a
    /// tier's queue (docs/API.md, Throttling and quotas).
    pub fn for_client(&self, client_key: &str) -> Hashing {
        Hashing {
            owner: Some(QueueOwner::of(client_key)),
            ..self.clone()
        }
    }

    pub fn engine(&self) -> &PasswordEngine {
        &self.engine
    }

    pub fn gate(&self) -> &HashingGate {
        &self.gate
    }

    /// How many hashes and verifies have run (not counting refused ones).
    pub fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }

    /// How many of them ran in a batch of two or more.
    pub fn batched(&self) -> u64 {
        self.batched.load(Ordering::Relaxed)
    }

    /// Runs `job` behind the gate (alone or in a batch) and records its
    /// timing (`op` on `algorithm`) when it succeeds.
    async fn run<T: Send + 'static>(
        &self,
        tier: Tier,
        op: &'static str,
        algorithm: Algorithm,
        job: Result<Job<T>, EngineError>,
    ) -> Result<T, HashError> {
        let asked = Instant::now();
        // Traces: from asking to the answer, so the queue wait shows
        // (docs/operations.md, Traces); never created with traces off.
        let span = tracing::info_span!(
            target: "traces",
            "hash",
            otel.name = %format_args!("hash {op}"),
            otel.status_code = Empty,
            hash.op = op,
            hash.tier = %tier,
            hash.algorithm = algorithm.name(),
            hash.cost = %algorithm.cost_label(),
            hash.queue_wait_ms = Empty,
            hash.run_ms = Empty,
            hash.batch = Empty,
            hash.workers_busy = Empty,
            error.type = Empty,
        );
        let ran = match self.gate.run_job(tier, self.owner, job?).instrument(span.clone()).await {
            Ok(ran) => ran,
            Err(overloaded) => {
                span.record("otel.status_code", "error");
                span.record("error.type", "queue_full");
                return Err(overloaded.into());
            }
        };
        self.runs.fetch_add(1, Ordering::Relaxed);
        if ran.batch > 1 {
            self.batched.fetch_add(1, Ordering::Relaxed);
        }
        let (hash, queue_wait) = (
            ran.finished.saturating_duration_since(ran.started),
            ran.started.saturating_duration_since(asked),
        );
        if !span.is_disabled() {
            span.record("hash.queue_wait_ms", queue_wait.as_secs_f64() * 1e3);
            span.record("hash.run_ms", hash.as_secs_f64() * 1e3);
            span.record("hash.batch", ran.batch);
            span.record("hash.workers_busy", ran.busy);
        }
        if ran.value.is_ok() {
            self.timing.record(&HashTiming {
                op,
                tier,
                algorithm,
                hash,
                queue_wait,
                running: ran.busy,
                batch: ran.batch,
            });
        }
        Ok(ran.value?)
    }

    pub async fn hash(&self, tier: Tier, password: SecretString) -> Result<String, HashError> {
        let algorithm = self.engine.policy(tier).algorithm;
        let job = self.engine.hash_job(tier, &password);
        self.run(tier, "hash", algorithm, job).await
    }

    pub async fn verify(&self, tier: Tier, password: SecretString, stored: String) -> Result<Verification, HashError> {
        // A hash that does not parse fails in the engine, unrecorded.
        let algorithm = StoredHash::parse(&stored).map_or(self.engine.policy(tier).algorithm, |s| s.algorithm);
        let job = self.engine.verify_job(tier, &password, &stored);
        self.run(tier, "verify", algorithm, job).await
    }

    /// For logins of unknown usernames: as slow as a real member verify, never a match.
    pub async fn verify_dummy(&self, password: SecretString) -> Result<(), HashError> {
        let algorithm = self.engine.policy(Tier::Member).algorithm;
        let job = self.engine.verify_dummy_job(&password);
        self.run(Tier::Member, "verify", algorithm, job).await.map(|_| ())
    }
}
