//! Tiered password hashing: the cost of each hash follows the value of what it
//! protects (docs/DESIGN.md, Tiered hashing). A [`Tier`] names a [`Policy`]
//! (algorithm, parameters, pepper); `Hashing` runs hashes and verifies
//! through the bounded `HashingGate`. Policies and the tier file are plain
//! data; the hashing itself is the `hashing` feature, which functions that
//! hash no password do not link.

mod compute;
mod policy;
pub mod tier_file;

pub use compute::Compute;
pub use policy::{Algorithm, AlgorithmParseError, Policy, Tier};

#[cfg(feature = "hashing")]
pub mod batch;
#[cfg(feature = "hashing")]
mod config;
#[cfg(feature = "hashing")]
mod engine;
#[cfg(feature = "hashing")]
mod gate;
#[cfg(feature = "hashing")]
mod pepper;
#[cfg(feature = "hashing")]
mod service;
pub mod timing;

#[cfg(feature = "hashing")]
pub use config::{ConfigError, HashingConfig, Overrides, check_floors, floor_of, validate_policy};
#[cfg(feature = "hashing")]
pub use engine::{HashError as EngineError, Job, PasswordEngine, StoredHash, UNPEPPERED_MAX_BYTES, Verification};
#[cfg(feature = "hashing")]
pub use gate::{Batching, DEFAULT_QUEUE, HashingGate, Overloaded, QueueOwner, Ran, fair_share, measured_plan};
#[cfg(feature = "hashing")]
pub use pepper::{MIN_PEPPER_BYTES, Pepper, PepperRing, PepperTooShort};
#[cfg(feature = "hashing")]
pub use service::{HashError, Hashing};
