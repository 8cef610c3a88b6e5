//! What a tier is: an algorithm with its parameters, and whether a pepper is applied.

use std::fmt;
use std::str::FromStr;

/// The two built-in tiers. Each function hashes with the tier of what it protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Member accounts: long-lived, reused across the site, worth a slow hash.
    Member,
    /// Guest posts and comments: one password guards one post; cheap and peppered.
    Guest,
}

impl Tier {
    pub const ALL: [Tier; 2] = [Tier::Member, Tier::Guest];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Member => "member",
            Tier::Guest => "guest",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// bcrypt costs the `bcrypt` crate accepts and that we consider sane.
const BCRYPT_COSTS: std::ops::RangeInclusive<u32> = 4..=31;

/// OWASP lists five equivalent Argon2id settings (47104/1, 19456/2, 12288/3,
/// 9216/4, 7168/5 KiB/passes); the least memory x passes among them (7168 x 5)
/// is our floor. Below it an Argon2id tier counts as weaker than bcrypt cost 10.
pub(crate) const ARGON2_BASELINE_WORK: u64 = 7_168 * 5;

/// A hashing algorithm and its work parameters. Written and parsed as
/// `bcrypt:11` or `argon2id:<m KiB>:<t>:<p>`, e.g. `argon2id:19456:2:1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    Bcrypt { cost: u32 },
    Argon2id { m_kib: u32, t: u32, p: u32 },
}

impl Algorithm {
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Bcrypt { .. } => "bcrypt",
            Algorithm::Argon2id { .. } => "argon2id",
        }
    }

    /// The work parameters alone, as logged in the `cost` field: `10` or `19456:2:1`.
    pub fn cost_label(&self) -> String {
        match self {
            Algorithm::Bcrypt { cost } => cost.to_string(),
            Algorithm::Argon2id { m_kib, t, p } => format!("{m_kib}:{t}:{p}"),
        }
    }

    /// Whether this is weaker than bcrypt cost 10, the floor for unpeppered hashes.
    pub fn is_weaker_than_bcrypt_10(&self) -> bool {
        match *self {
            Algorithm::Bcrypt { cost } => cost < 10,
            Algorithm::Argon2id { m_kib, t, .. } => u64::from(m_kib) * u64::from(t) < ARGON2_BASELINE_WORK,
        }
    }

    /// A rough single-core time for one hash, for sharing the hashing gate
    /// between tiers: only the ratio between tiers matters. From the timing
    /// table measured here (`infra/timing-report.md`): bcrypt 10 ran in about
    /// 75.6 ms (74 us per 2^cost unit), Argon2id 19456 KiB x 2 passes in
    /// 33.8 ms (0.87 us per KiB-pass).
    pub fn estimated_micros(&self) -> u64 {
        match *self {
            Algorithm::Bcrypt { cost } => 74u64 << cost.min(40),
            Algorithm::Argon2id { m_kib, t, .. } => u64::from(m_kib) * u64::from(t) * 87 / 100,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.name(), self.cost_label())
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AlgorithmParseError {
    #[error("`{0}` is not a tier: expected `bcrypt:<cost>` or `argon2id:<m KiB>:<t>:<p>`")]
    Shape(String),
    #[error("bcrypt cost {0} is outside 4-31")]
    BcryptCost(u32),
    #[error("argon2id parameters m={m_kib} t={t} p={p} are invalid: {reason}")]
    Argon2 { m_kib: u32, t: u32, p: u32, reason: String },
}

impl FromStr for Algorithm {
    type Err = AlgorithmParseError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let shape = || AlgorithmParseError::Shape(spec.to_owned());
        let parts: Vec<&str> = spec.trim().split(':').collect();
        let number = |s: &str| s.parse::<u32>().map_err(|_| shape());
        match parts.as_slice() {
            ["bcrypt", cost] => {
                let cost = number(cost)?;
                if !BCRYPT_COSTS.contains(&cost) {
                    return Err(AlgorithmParseError::BcryptCost(cost));
                }
                Ok(Algorithm::Bcrypt { cost })
            }
            ["argon2id", m, t, p] => {
                let (m_kib, t, p) = (number(m)?, number(t)?, number(p)?);
                // The crate knows the exact bounds (m >= 8p, t >= 1, ...); ask it
                // (in builds that hash: others only read tier specs).
                #[cfg(feature = "engine")]
                argon2::Params::new(m_kib, t, p, None).map_err(|e| AlgorithmParseError::Argon2 {
                    m_kib,
                    t,
                    p,
                    reason: e.to_string(),
                })?;
                Ok(Algorithm::Argon2id { m_kib, t, p })
            }
            _ => Err(shape()),
        }
    }
}

/// A tier's full policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub algorithm: Algorithm,
    /// Pre-hash with HMAC-SHA-384 under the current pepper.
    pub peppered: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_through_display() {
        for spec in ["bcrypt:4", "bcrypt:12", "argon2id:19456:2:1", "argon2id:47104:1:1"] {
            assert_eq!(spec.parse::<Algorithm>().unwrap().to_string(), spec);
        }
    }

    #[test]
    fn malformed_specs_are_rejected_with_the_reason() {
        assert_eq!("bcrypt:3".parse::<Algorithm>(), Err(AlgorithmParseError::BcryptCost(3)));
        assert!(matches!(
            "bcrypt".parse::<Algorithm>(),
            Err(AlgorithmParseError::Shape(_))
        ));
        assert!(matches!(
            "scrypt:1".parse::<Algorithm>(),
            Err(AlgorithmParseError::Shape(_))
        ));
        assert!(matches!(
            "bcrypt:ten".parse::<Algorithm>(),
            Err(AlgorithmParseError::Shape(_))
        ));
        assert!(matches!(
            "argon2id:1:1:1".parse::<Algorithm>(),
            Err(AlgorithmParseError::Argon2 { .. })
        ));
    }

    #[test]
    fn strength_floor_is_bcrypt_10_or_owasp_argon2id() {
        assert!(Algorithm::Bcrypt { cost: 9 }.is_weaker_than_bcrypt_10());
        assert!(!Algorithm::Bcrypt { cost: 10 }.is_weaker_than_bcrypt_10());
        assert!(
            !Algorithm::Argon2id {
                m_kib: 19_456,
                t: 2,
                p: 1
            }
            .is_weaker_than_bcrypt_10()
        );
        assert!(
            Algorithm::Argon2id {
                m_kib: 4_096,
                t: 1,
                p: 1
            }
            .is_weaker_than_bcrypt_10()
        );
    }
}
