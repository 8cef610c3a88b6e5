//! What hashing is built from: tier policies, peppers and the gate size
//! (read from the environment by `crate::config`), and the rules every tier
//! must keep, checked once at start with errors that name the setting.

use super::pepper::{PepperRing, PepperTooShort};
use super::policy::{Algorithm, AlgorithmParseError, Policy, Tier};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
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

/// Everything needed to build [`super::Hashing`].
#[derive(Debug)]
pub struct HashingConfig {
    pub member: Policy,
    pub guest: Policy,
    pub peppers: PepperRing,
    pub workers: usize,
    pub queue: usize,
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
