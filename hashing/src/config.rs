//! What hashing is built from: tier policies, peppers and the gate size
//! (read from the environment by the composition root), and the rules every tier
//! must keep, checked once at start with errors that name the setting.

use crate::batch::BatchPlan;
use crate::pepper::{PepperRing, PepperTooShort};
use crate::policy::{ARGON2_BASELINE_WORK, Algorithm, AlgorithmParseError, Policy, Tier};
use crate::timing::TimingSink;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "the {tier} tier ({algorithm}) is under the floor ({floor}); raise {tier_setting}, or set HASH_FLOOR_OVERRIDE=1 to run it anyway (logged)"
    )]
    BelowFloor {
        tier: Tier,
        algorithm: Algorithm,
        floor: &'static str,
        tier_setting: &'static str,
    },
    #[error("{setting}: {source}")]
    BadTier {
        setting: String,
        #[source]
        source: AlgorithmParseError,
    },
    #[error("tier file {path}: {reason}")]
    TierFile { path: String, reason: String },
    #[error("tier file {path} has no `{tier}` tier")]
    MissingTier { path: String, tier: Tier },
    #[error(
        "the {tier} tier ({algorithm}) is weaker than bcrypt cost 10, so it must be peppered: set PEPPER, or raise {tier_setting}"
    )]
    WeakUnpeppered {
        tier: Tier,
        algorithm: Algorithm,
        tier_setting: &'static str,
    },
    #[error("the {0} tier is peppered but no PEPPER is configured")]
    PepperMissing(Tier),
    #[error(transparent)]
    Pepper(#[from] PepperTooShort),
}

/// Everything needed to build [`crate::Hashing`].
#[derive(Debug)]
pub struct HashingConfig {
    pub member: Policy,
    pub guest: Policy,
    pub peppers: PepperRing,
    pub workers: usize,
    pub queue: usize,
    /// The gate's time shares when both tiers wait: `[member, guest]`.
    pub weights: [u32; 2],
    /// Whether waiting bcrypt hashes run together (`HASH_BATCH`).
    pub batching: Batching,
    pub overrides: Overrides,
    /// Where each hash's timing goes: EMF on Lambda, a log event elsewhere.
    pub timing: TimingSink,
}

/// The redacted summary printed at start: whether a pepper is set, never it.
impl std::fmt::Display for HashingConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pepper = if self.peppers.current().is_some() {
            "set"
        } else {
            "none"
        };
        write!(
            f,
            "member_tier={} guest_tier={} pepper={pepper} hash_workers={} hash_queue={} hash_batch={}",
            self.member.algorithm,
            self.guest.algorithm,
            self.workers,
            self.queue,
            match self.batching {
                Batching::Off => "off",
                _ => "auto",
            }
        )
    }
}

/// Whether waiting bcrypt hashes of one tier and cost run together
/// (docs/DESIGN.md, Batch hashing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batching {
    /// Every hash alone.
    Off,
    /// By the plan measured once per process on this CPU
    /// ([`BatchPlan::measure`], started in the background; hashes run
    /// alone until it is known).
    Measured,
    /// By this plan.
    Plan(BatchPlan),
}

/// Explicit exceptions to the hashing rules, each logged at start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `HASH_FLOOR_OVERRIDE=1`: run tiers under the floors (tests, benchmarks).
    pub below_floor: bool,
    /// `HASH_ALLOW_DOWNGRADE=1`: rehash on verify to a weaker policy too.
    pub downgrade: bool,
}

/// The floors (docs/DESIGN.md, Tiered hashing): bcrypt 10 unpeppered and 8
/// peppered; Argon2id at OWASP's smallest listed setting (m x t at least
/// 7 MiB x 5) and never under 7 MiB of memory.
pub fn floor_of(policy: Policy) -> Option<&'static str> {
    match policy.algorithm {
        Algorithm::Bcrypt { cost } if policy.peppered && cost < 8 => Some("bcrypt 8 with a pepper"),
        Algorithm::Argon2id { m_kib, .. } if m_kib < 7_168 => Some("argon2id with at least 7168 KiB"),
        Algorithm::Argon2id { m_kib, t, .. } if u64::from(m_kib) * u64::from(t) < ARGON2_BASELINE_WORK => {
            Some("argon2id m x t of at least 7168 KiB x 5")
        }
        _ => None,
    }
}

/// The floors, unless overridden (then each breach is logged).
pub fn check_floors(member: Policy, guest: Policy, overrides: Overrides) -> Result<(), ConfigError> {
    for (tier, policy, setting) in [
        (Tier::Member, member, "MEMBER_TIER"),
        (Tier::Guest, guest, "GUEST_TIER"),
    ] {
        if let Some(floor) = floor_of(policy) {
            if !overrides.below_floor {
                return Err(ConfigError::BelowFloor {
                    tier,
                    algorithm: policy.algorithm,
                    floor,
                    tier_setting: setting,
                });
            }
            tracing::warn!(tier = %tier, algorithm = %policy.algorithm, floor, "HASH_FLOOR_OVERRIDE: a tier runs under the floor");
        }
    }
    if overrides.downgrade {
        tracing::warn!("HASH_ALLOW_DOWNGRADE: rehash on verify may move hashes to a weaker policy");
    }
    Ok(())
}

/// The rules every tier must keep, checked before any hashing happens.
pub fn validate_policy(tier: Tier, policy: Policy, peppers: &PepperRing) -> Result<(), ConfigError> {
    if policy.peppered && peppers.current().is_none() {
        return Err(ConfigError::PepperMissing(tier));
    }
    if !policy.peppered && policy.algorithm.is_weaker_than_bcrypt_10() {
        return Err(ConfigError::WeakUnpeppered {
            tier,
            algorithm: policy.algorithm,
            tier_setting: match tier {
                Tier::Member => "MEMBER_TIER",
                Tier::Guest => "GUEST_TIER",
            },
        });
    }
    Ok(())
}
