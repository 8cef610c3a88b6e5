//! Hashing configuration: tiers from the tier file with environment overrides
//! (`MEMBER_TIER`, `GUEST_TIER` win), peppers, and the gate size. Everything
//! is validated once at start, with errors that name the setting.

use secrecy::SecretString;

use super::gate::{DEFAULT_QUEUE, default_workers};
use super::pepper::{Pepper, PepperRing, PepperTooShort};
use super::policy::{Algorithm, AlgorithmParseError, Policy, Tier};
use super::tier_file::{self, TierFile};

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
    #[error("{setting} must be a whole number{min}, got `{value}`")]
    BadNumber {
        setting: &'static str,
        value: String,
        min: &'static str,
    },
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

impl HashingConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads settings through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let (path, file) = match lookup("TIERS_FILE") {
            Some(path) => {
                let json = std::fs::read_to_string(&path).map_err(|e| ConfigError::TierFile {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
                (path, json)
            }
            None => ("(embedded infra/tiers.json)".to_owned(), tier_file::EMBEDDED.to_owned()),
        };
        let file = TierFile::parse(&file).map_err(|e| ConfigError::TierFile {
            path: path.clone(),
            reason: e.to_string(),
        })?;

        let current = lookup("PEPPER")
            .map(|s| Pepper::parse("PEPPER", SecretString::from(s)))
            .transpose()?;
        let previous = lookup("PEPPER_PREVIOUS")
            .map(|list| {
                list.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| Pepper::parse("PEPPER_PREVIOUS", SecretString::from(s)))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        let peppered = current.is_some();

        let tier_policy = |tier: Tier, setting: &'static str| -> Result<Policy, ConfigError> {
            let (spec, origin) = match lookup(setting) {
                Some(spec) => (spec, setting.to_owned()),
                None => {
                    let chosen = file.tiers.get(tier.as_str()).ok_or_else(|| ConfigError::MissingTier {
                        path: path.clone(),
                        tier,
                    })?;
                    (chosen.spec.clone(), format!("{path} tiers.{tier}.spec"))
                }
            };
            let algorithm = spec.parse().map_err(|source| ConfigError::BadTier {
                setting: origin,
                source,
            })?;
            Ok(Policy { algorithm, peppered })
        };

        Ok(HashingConfig {
            member: tier_policy(Tier::Member, "MEMBER_TIER")?,
            guest: tier_policy(Tier::Guest, "GUEST_TIER")?,
            peppers: PepperRing::new(current, previous),
            workers: number(&lookup, "HASH_WORKERS", 1)?.unwrap_or_else(default_workers),
            queue: number(&lookup, "HASH_QUEUE", 0)?.unwrap_or(DEFAULT_QUEUE),
        })
    }
}

fn number(
    lookup: &impl Fn(&str) -> Option<String>,
    setting: &'static str,
    min: usize,
) -> Result<Option<usize>, ConfigError> {
    let Some(value) = lookup(setting) else {
        return Ok(None);
    };
    match value.trim().parse::<usize>() {
        Ok(n) if n >= min => Ok(Some(n)),
        _ => Err(ConfigError::BadNumber {
            setting,
            value,
            min: if min > 0 { " of at least 1" } else { "" },
        }),
    }
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
