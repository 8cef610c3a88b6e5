//! Hash and verify under a tier's policy, synchronously (callers put this on
//! the blocking pool through the gate). Stored hashes are self-describing:
//!
//! - unpeppered: the algorithm's own string, `$2b$10$...` or `$argon2id$v=19$m=...`;
//! - peppered: `$hs384$<pepper id>` followed by that string, so verify knows
//!   which pepper made it and a pepper can be rotated.

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher as _, PasswordVerifier as _};
use secrecy::{ExposeSecret, SecretString};

use crate::batch::{self, BcryptInput};
use crate::config::{ConfigError, validate_policy};
use crate::pepper::PepperRing;
use crate::policy::{Algorithm, Policy, Tier};

/// bcrypt's input limit. Without a pepper, longer passwords are refused rather
/// than silently truncated. (Not the crate's `non_truncating_*` API: it refuses
/// 72-byte inputs too, although bcrypt uses all 72 bytes and docs/API.md accepts them.)
pub const UNPEPPERED_MAX_BYTES: usize = 72;

const PEPPERED_PREFIX: &str = "$hs384$";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verification {
    pub matched: bool,
    /// The stored hash was made under other parameters or another pepper than
    /// the tier's current policy: after a successful match, store a new hash.
    pub needs_rehash: bool,
}

/// A hash or verify whose cheap part (pepper, salt, parsing) is done and
/// whose slow part is left to run behind the gate.
pub enum Job<T> {
    /// Anything but bcrypt: runs alone.
    Alone(Box<dyn FnOnce() -> Result<T, HashError> + Send>),
    /// A bcrypt computation, which may share a batch with others of its
    /// cost; `finish` turns its output into the answer.
    Bcrypt {
        input: BcryptInput,
        finish: Box<dyn FnOnce(&batch::Output) -> T + Send>,
    },
}

impl<T> std::fmt::Debug for Job<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Job::Alone(_) => f.write_str("Job::Alone"),
            Job::Bcrypt { input, .. } => f.debug_struct("Job::Bcrypt").field("cost", &input.cost()).finish(),
        }
    }
}

impl<T> Job<T> {
    /// Runs it now, on this thread, alone.
    pub fn run_alone(self) -> Result<T, HashError> {
        match self {
            Job::Alone(work) => work(),
            Job::Bcrypt { input, finish } => {
                let output = batch::digest_one(&input).map_err(|e| HashError::Algorithm(e.to_string()))?;
                Ok(finish(&output))
            }
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HashError {
    #[error("password must be at most {max_bytes} bytes without a pepper (it is {len})")]
    PasswordTooLong { max_bytes: usize, len: usize },
    #[error("the stored password hash is malformed: {0}")]
    MalformedHash(&'static str),
    #[error("the stored password hash uses pepper {0}, which is no longer configured")]
    UnknownPepper(String),
    #[error("the {0} tier is peppered but no pepper is configured")]
    NoPepper(Tier),
    #[error("password hashing failed: {0}")]
    Algorithm(String),
}

/// A parsed stored hash: which pepper (if any), and the algorithm's own string.
#[derive(Debug, PartialEq, Eq)]
pub struct StoredHash<'a> {
    pub pepper_id: Option<&'a str>,
    pub algorithm: Algorithm,
    inner: &'a str,
}

impl<'a> StoredHash<'a> {
    pub fn parse(stored: &'a str) -> Result<Self, HashError> {
        let (pepper_id, inner) = match stored.strip_prefix(PEPPERED_PREFIX) {
            Some(rest) => {
                let at = rest
                    .find('$')
                    .ok_or(HashError::MalformedHash("no hash after the pepper id"))?;
                (Some(&rest[..at]), &rest[at..])
            }
            None => (None, stored),
        };
        Ok(StoredHash {
            pepper_id,
            algorithm: algorithm_of(inner)?,
            inner,
        })
    }
}

fn algorithm_of(inner: &str) -> Result<Algorithm, HashError> {
    if inner.starts_with("$argon2id$") {
        let phc = PasswordHash::new(inner).map_err(|_| HashError::MalformedHash("not a PHC string"))?;
        let params = argon2::Params::try_from(&phc).map_err(|_| HashError::MalformedHash("bad argon2 parameters"))?;
        return Ok(Algorithm::Argon2id {
            m_kib: params.m_cost(),
            t: params.t_cost(),
            p: params.p_cost(),
        });
    }
    let bcrypt_prefix = ["$2a$", "$2b$", "$2y$"].iter().any(|p| inner.starts_with(p));
    if bcrypt_prefix && inner.len() == 60 && inner.is_char_boundary(6) {
        let cost = inner[4..6]
            .parse()
            .map_err(|_| HashError::MalformedHash("bad bcrypt cost"))?;
        return Ok(Algorithm::Bcrypt { cost });
    }
    Err(HashError::MalformedHash("unknown algorithm"))
}

/// The tiers' policies and the peppers: everything needed to hash and verify.
#[derive(Debug)]
pub struct PasswordEngine {
    member: Policy,
    guest: Policy,
    peppers: PepperRing,
    dummy_member_hash: String,
    /// Rehash to a weaker policy too (`HASH_ALLOW_DOWNGRADE`).
    allow_downgrade: bool,
}

impl PasswordEngine {
    /// Refuses policies that break the rules (see [`validate_policy`]).
    pub fn new(member: Policy, guest: Policy, peppers: PepperRing) -> Result<Self, ConfigError> {
        validate_policy(Tier::Member, member, &peppers)?;
        validate_policy(Tier::Guest, guest, &peppers)?;
        let dummy_member_hash = dummy_hash(member, &peppers);
        Ok(PasswordEngine {
            member,
            guest,
            peppers,
            dummy_member_hash,
            allow_downgrade: false,
        })
    }

    /// Lets rehash-on-verify move hashes to a weaker policy: only on an
    /// explicit, logged override (docs/DESIGN.md, Tiered hashing).
    pub fn allowing_downgrade(mut self, allow: bool) -> Self {
        self.allow_downgrade = allow;
        self
    }

    pub fn policy(&self, tier: Tier) -> Policy {
        match tier {
            Tier::Member => self.member,
            Tier::Guest => self.guest,
        }
    }

    /// A new stored hash of `password` under `tier`'s current policy, now.
    pub fn hash(&self, tier: Tier, password: &SecretString) -> Result<String, HashError> {
        self.hash_job(tier, password)?.run_alone()
    }

    /// Checks `password` against `stored` now (see [`Self::verify_job`]).
    pub fn verify(&self, tier: Tier, password: &SecretString, stored: &str) -> Result<Verification, HashError> {
        self.verify_job(tier, password, stored)?.run_alone()
    }

    /// A new stored hash of `password` under `tier`'s current policy, made
    /// ready to run: peppered and salted, the slow part left.
    pub fn hash_job(&self, tier: Tier, password: &SecretString) -> Result<Job<String>, HashError> {
        let policy = self.policy(tier);
        let (prefix, input) = if policy.peppered {
            let pepper = self.peppers.current().ok_or(HashError::NoPepper(tier))?;
            let input = pepper.apply(password.expose_secret().as_bytes());
            (format!("{PEPPERED_PREFIX}{}", pepper.id()), input)
        } else {
            check_unpeppered_length(password)?;
            (String::new(), password.clone())
        };
        Ok(match policy.algorithm {
            Algorithm::Bcrypt { cost } => Job::Bcrypt {
                input: BcryptInput::fresh(cost, &input),
                finish: Box::new(move |output| prefix + &batch::hash_string(output)),
            },
            Algorithm::Argon2id { m_kib, t, p } => Job::Alone(Box::new(move || {
                let inner = argon2_with(m_kib, t, p)?
                    .hash_password(input.expose_secret().as_bytes())
                    .map_err(|e| HashError::Algorithm(e.to_string()))?
                    .to_string();
                Ok(prefix + &inner)
            })),
        })
    }

    /// A check of `password` against `stored`, with the algorithm, parameters
    /// and pepper the stored hash names, whatever the tier's policy is now,
    /// made ready to run.
    pub fn verify_job(
        &self,
        tier: Tier,
        password: &SecretString,
        stored: &str,
    ) -> Result<Job<Verification>, HashError> {
        let parsed = StoredHash::parse(stored)?;
        let input = match parsed.pepper_id {
            Some(id) => {
                let pepper = self
                    .peppers
                    .by_id(id)
                    .ok_or_else(|| HashError::UnknownPepper(id.to_owned()))?;
                pepper.apply(password.expose_secret().as_bytes())
            }
            None => {
                check_unpeppered_length(password)?;
                password.clone()
            }
        };
        let needs_rehash = self.needs_rehash(tier, &parsed);
        let verdict = move |matched| Verification { matched, needs_rehash };
        Ok(match parsed.algorithm {
            Algorithm::Bcrypt { .. } => {
                let (input, expected) = BcryptInput::to_check(parsed.inner, &input)
                    .ok_or(HashError::MalformedHash("bcrypt rejected the stored hash"))?;
                Job::Bcrypt {
                    input,
                    finish: Box::new(move |output| verdict(batch::matches(output, &expected))),
                }
            }
            Algorithm::Argon2id { m_kib, t, p } => {
                let phc = parsed.inner.to_owned();
                Job::Alone(Box::new(move || {
                    match argon2_with(m_kib, t, p)?.verify_password(input.expose_secret().as_bytes(), phc.as_str()) {
                        Ok(()) => Ok(verdict(true)),
                        Err(argon2::password_hash::Error::PasswordInvalid) => Ok(verdict(false)),
                        Err(_) => Err(HashError::MalformedHash("argon2 rejected the stored hash")),
                    }
                }))
            }
        })
    }

    /// Whether `stored` was made by v1, from the password as typed (NFKC
    /// normalization came with v2's pepper ids): v1 hashes name their pepper
    /// by its v1 id. An unpeppered v1 hash cannot be told apart, and is
    /// checked like any other (docs/API.md, Field rules).
    pub fn made_before_normalization(&self, stored: &str) -> bool {
        StoredHash::parse(stored)
            .ok()
            .and_then(|parsed| parsed.pepper_id)
            .and_then(|id| self.peppers.by_id(id).map(|pepper| pepper.v1_id() == id))
            .unwrap_or(false)
    }

    /// Spends the time of a member-tier verify without anyone's hash, so a
    /// login for an unknown username takes as long as one with a wrong password.
    pub fn verify_dummy(&self, password: &SecretString) -> Result<(), HashError> {
        self.verify(Tier::Member, password, &self.dummy_member_hash).map(|_| ())
    }

    /// [`Self::verify_dummy`] made ready to run (it may share a batch).
    pub fn verify_dummy_job(&self, password: &SecretString) -> Result<Job<Verification>, HashError> {
        self.verify_job(Tier::Member, password, &self.dummy_member_hash)
    }

    fn needs_rehash(&self, tier: Tier, stored: &StoredHash<'_>) -> bool {
        let policy = self.policy(tier);
        let current_pepper = policy
            .peppered
            .then(|| self.peppers.current().map(|p| p.id()))
            .flatten();
        let differs = stored.algorithm != policy.algorithm || stored.pepper_id != current_pepper;
        // Never silently weaker: less work, or losing the pepper, is a downgrade.
        let at_least_as_strong = policy.algorithm.estimated_micros() >= stored.algorithm.estimated_micros()
            && (current_pepper.is_some() || stored.pepper_id.is_none());
        differs && (at_least_as_strong || self.allow_downgrade)
    }
}

fn check_unpeppered_length(password: &SecretString) -> Result<(), HashError> {
    let len = password.expose_secret().len();
    if len > UNPEPPERED_MAX_BYTES {
        return Err(HashError::PasswordTooLong {
            max_bytes: UNPEPPERED_MAX_BYTES,
            len,
        });
    }
    Ok(())
}

fn argon2_with(m_kib: u32, t: u32, p: u32) -> Result<argon2::Argon2<'static>, HashError> {
    let params = argon2::Params::new(m_kib, t, p, None).map_err(|e| HashError::Algorithm(e.to_string()))?;
    Ok(argon2::Argon2::new(
        argon2::Algorithm::Argon2id,
        argon2::Version::V0x13,
        params,
    ))
}

/// A well-formed hash under `policy` that no password matches (its digest is
/// all zeros), built without hashing so a cold start pays nothing for it.
fn dummy_hash(policy: Policy, peppers: &PepperRing) -> String {
    let inner = match policy.algorithm {
        Algorithm::Bcrypt { cost } => format!("$2b${cost:02}${}", ".".repeat(53)),
        Algorithm::Argon2id { m_kib, t, p } => {
            format!(
                "$argon2id$v=19$m={m_kib},t={t},p={p}${}${}",
                "A".repeat(22),
                "A".repeat(43)
            )
        }
    };
    match peppers.current().filter(|_| policy.peppered) {
        // The v1 id: answered to without deriving the slow id at start.
        Some(pepper) => format!("{PEPPERED_PREFIX}{}{inner}", pepper.v1_id()),
        None => inner,
    }
}
