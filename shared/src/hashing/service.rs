//! [`Hashing`]: the engine behind the gate, built once per process.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use secrecy::SecretString;

use super::{ConfigError, EngineError, HashingConfig, HashingGate, Overloaded, PasswordEngine, Tier, Verification};

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
}

impl Hashing {
    pub fn new(config: HashingConfig) -> Result<Self, ConfigError> {
        let (member, guest) = (config.member.algorithm, config.guest.algorithm);
        super::check_floors(config.member, config.guest, config.overrides)?;
        let engine = PasswordEngine::new(config.member, config.guest, config.peppers)?
            .allowing_downgrade(config.overrides.downgrade);
        Ok(Hashing {
            engine: Arc::new(engine),
            gate: HashingGate::for_algorithms(config.workers, config.queue, member, guest).weighted(config.weights),
            runs: Arc::default(),
        })
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

    async fn run<T: Send + 'static>(
        &self,
        tier: Tier,
        work: impl FnOnce(&PasswordEngine) -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, HashError> {
        let (engine, runs) = (Arc::clone(&self.engine), Arc::clone(&self.runs));
        let result = self
            .gate
            .run(tier, move || {
                runs.fetch_add(1, Ordering::Relaxed);
                work(&engine)
            })
            .await?;
        Ok(result?)
    }

    pub async fn hash(&self, tier: Tier, password: SecretString) -> Result<String, HashError> {
        self.run(tier, move |engine| engine.hash(tier, &password)).await
    }

    pub async fn verify(&self, tier: Tier, password: SecretString, stored: String) -> Result<Verification, HashError> {
        self.run(tier, move |engine| engine.verify(tier, &password, &stored))
            .await
    }

    /// For logins of unknown usernames: as slow as a real member verify, never a match.
    pub async fn verify_dummy(&self, password: SecretString) -> Result<(), HashError> {
        self.run(Tier::Member, move |engine| engine.verify_dummy(&password))
            .await
    }
}
