//! Password hashing's settings from the environment: tiers from the tier
//! file with `MEMBER_TIER`/`GUEST_TIER` winning, the pepper ring, the gate's
//! size and how it meets the deployment's CPU.

use secrecy::SecretString;

use super::{ConfigError, Deployment, Env, UNPEPPERED};
use crate::hashing::timing::TimingSink;
use crate::hashing::{self, Batching, Compute, HashingConfig, Pepper, PepperRing, Policy, Tier};

/// Hashing for `deployment`, with `pepper` as resolved (set, generated or
/// from Secrets Manager; `None` for [`UNPEPPERED`]).
pub(super) fn for_deployment(
    env: &Env<'_>,
    deployment: &Deployment,
    pepper: Option<String>,
) -> Result<HashingConfig, ConfigError> {
    let timing = match deployment {
        Deployment::Lambda { functions } => TimingSink::Emf {
            function: functions.iter().map(|f| f.name()).collect::<Vec<_>>().join("+"),
        },
        Deployment::Server => TimingSink::Log,
    };
    hashing_config(env, pepper, compute(deployment, env)?, timing)
}

/// `AWS_LAMBDA_MAX_CONCURRENCY`, which Lambda sets only on managed instances.
pub fn compute(deployment: &Deployment, env: &Env<'_>) -> Result<Compute, ConfigError> {
    Ok(match deployment {
        Deployment::Server => Compute::Machine,
        Deployment::Lambda { .. } => {
            match env.number::<usize>("AWS_LAMBDA_MAX_CONCURRENCY", 1, "a positive whole number")? {
                Some(concurrency) if concurrency > 1 => Compute::SharedEnvironment { concurrency },
                _ => Compute::PerRequest,
            }
        }
    })
}

/// [`hashing_config`] with `PEPPER` as set (no generated secret): for tools,
/// benchmarks and tests that build hashing alone.
pub fn hashing_from(env: &Env<'_>) -> Result<HashingConfig, ConfigError> {
    hashing_config(
        env,
        env.get("PEPPER").filter(|p| p != UNPEPPERED),
        Compute::PerRequest,
        TimingSink::Log,
    )
}

/// The tiers' rules are checked where hashing starts.
pub fn hashing_config(
    env: &Env<'_>,
    pepper: Option<String>,
    compute: Compute,
    timing: TimingSink,
) -> Result<HashingConfig, ConfigError> {
    let fixed_capacity = compute.is_fixed();
    use hashing::tier_file::{EMBEDDED, TierChoices};
    let (path, json) = match env.get("TIERS_FILE") {
        Some(path) => {
            let json = std::fs::read_to_string(&path).map_err(|e| hashing::ConfigError::TierFile {
                path: path.clone(),
                reason: e.to_string(),
            })?;
            (path, json)
        }
        None => ("(embedded infra/tiers.json)".to_owned(), EMBEDDED.to_owned()),
    };
    let file = TierChoices::parse(&json).map_err(|e| hashing::ConfigError::TierFile {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let current = pepper
        .map(|s| Pepper::parse("PEPPER", SecretString::from(s)))
        .transpose()
        .map_err(hashing::ConfigError::from)?;
    let previous = env
        .list("PEPPER_PREVIOUS")
        .map(|list| {
            list.into_iter()
                .map(|s| Pepper::parse("PEPPER_PREVIOUS", SecretString::from(s)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()
        .map_err(hashing::ConfigError::from)?
        .unwrap_or_default();
    let peppered = current.is_some();
    let tier_policy = |tier: Tier, setting: &'static str| -> Result<Policy, ConfigError> {
        let (spec, origin) = match env.get(setting) {
            Some(spec) => (spec, setting.to_owned()),
            None => {
                let chosen =
                    file.tier(tier.as_str(), fixed_capacity)
                        .ok_or_else(|| hashing::ConfigError::MissingTier {
                            path: path.clone(),
                            tier,
                        })?;
                let section = if fixed_capacity && file.has_fixed_capacity() {
                    "fixed_capacity.tiers"
                } else {
                    "tiers"
                };
                (chosen.spec.clone(), format!("{path} {section}.{tier}.spec"))
            }
        };
        let algorithm = spec.parse().map_err(|source| hashing::ConfigError::BadTier {
            setting: origin,
            source,
        })?;
        Ok(Policy { algorithm, peppered })
    };
    let whole = |name: &'static str, min: usize| -> Result<Option<usize>, ConfigError> {
        let what = if min > 0 {
            "a whole number of at least 1"
        } else {
            "a whole number"
        };
        env.get(name)
            .map(|value| match value.trim().parse::<usize>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(ConfigError::invalid(format!("{name} must be {what}, got `{value}`"))),
            })
            .transpose()
    };
    // Batches form only where hashes queue: never on classic Lambda, whose
    // environment serves one request at a time.
    let batching = match env.get("HASH_BATCH").as_deref().map(str::trim) {
        None if compute.is_fixed() => Batching::Measured,
        None => Batching::Off,
        Some("auto") => Batching::Measured,
        Some("off") => Batching::Off,
        Some(other) => {
            return Err(ConfigError::invalid(format!(
                "HASH_BATCH must be `auto` or `off`, got `{other}`"
            )));
        }
    };
    Ok(HashingConfig {
        member: tier_policy(Tier::Member, "MEMBER_TIER")?,
        guest: tier_policy(Tier::Guest, "GUEST_TIER")?,
        peppers: PepperRing::new(current, previous),
        workers: whole("HASH_WORKERS", 1)?.unwrap_or_else(|| compute.default_workers()),
        queue: whole("HASH_QUEUE", 0)?.unwrap_or(hashing::DEFAULT_QUEUE),
        weights: file.weights(),
        batching,
        overrides: hashing::Overrides {
            below_floor: env.flag("HASH_FLOOR_OVERRIDE")?,
            downgrade: env.flag("HASH_ALLOW_DOWNGRADE")?,
        },
        timing,
    })
}
