// The crate's page is its README, with an example run as a doctest
// (`cargo test -p hashing --doc`); it needs the `engine` feature.
#![cfg_attr(feature = "engine", doc = include_str!("../README.md"))]
#![cfg_attr(
    not(feature = "engine"),
    doc = "Tiered password hashing, built without its `engine` feature: the tier model only (tiers, policies, the tier file, timing records). See README.md."
)]

mod compute;
mod policy;
pub mod tier_file;
pub mod timing;

pub use compute::Compute;
pub use policy::{Algorithm, AlgorithmParseError, Policy, Tier};

#[cfg(feature = "engine")]
pub mod batch;
#[cfg(feature = "engine")]
mod config;
#[cfg(feature = "engine")]
mod engine;
#[cfg(feature = "engine")]
mod gate;
#[cfg(feature = "engine")]
mod pepper;
#[cfg(feature = "engine")]
mod service;

#[cfg(feature = "engine")]
pub use config::{Batching, ConfigError, HashingConfig, Overrides, check_floors, floor_of, validate_policy};
#[cfg(feature = "engine")]
pub use engine::{HashError as EngineError, Job, PasswordEngine, StoredHash, UNPEPPERED_MAX_BYTES, Verification};
#[cfg(feature = "engine")]
pub use gate::{DEFAULT_QUEUE, HashingGate, Overloaded, QueueOwner, Ran, fair_share, measured_plan};
#[cfg(feature = "engine")]
pub use pepper::{MIN_PEPPER_BYTES, Pepper, PepperRing, PepperTooShort};
#[cfg(feature = "engine")]
pub use service::{HashError, Hashing};
