//! The batch engine (docs/DESIGN.md, Batch hashing): bcrypt for one input or
//! for several of the same cost at once, bit for bit what the `bcrypt` crate
//! computes (tools/bcrypt-differential holds it to that).
//!
//! One bcrypt cannot go faster: its cost loop is strictly sequential. Several
//! independent ones can share a core, one per SIMD lane, which is what the
//! `bcrypt-rust` crate's batch kernels do (AVX-512 16 lanes, AVX2 8, SSE4.1 4,
//! NEON 8, chosen by the crate from the CPU). A batch of fewer inputs than
//! lanes costs as much as a full one, so a batch pays only from some number
//! of waiting hashes on; [`BatchPlan::measure`] finds that number on this CPU.
//! A lone hash runs the crate's scalar kernel.

use std::time::Instant;

use secrecy::{ExposeSecret, SecretSlice, SecretString};
use subtle::ConstantTimeEq as _;

/// bcrypt's output: the 23 bytes a hash string ends with (31 characters).
pub type Digest = [u8; 23];

/// One bcrypt computation: the key (the password, or its peppered form),
/// the salt and the cost. Verifies and creates alike: a verify takes the
/// stored hash's salt, a create a fresh one.
#[derive(Debug)]
pub struct BcryptInput {
    cost: u32,
    salt: [u8; 16],
    /// Bytes, not text: bcrypt takes any (a NUL ends the key, as in the
    /// `bcrypt` crate), and the differential test feeds every byte value.
    key: SecretSlice<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bcrypt failed: {0}")]
pub struct BcryptFailed(String);

impl BcryptInput {
    /// An input to hash under a fresh random salt.
    pub fn fresh(cost: u32, key: &SecretString) -> Self {
        Self::with_salt(cost, rand::random(), key.expose_secret().as_bytes().to_vec())
    }

    pub fn with_salt(cost: u32, salt: [u8; 16], key: Vec<u8>) -> Self {
        BcryptInput {
            cost,
            salt,
            key: key.into(),
        }
    }

    /// The input that recomputes `stored` (a `$2a$`/`$2b$`/`$2y$` string),
    /// and the digest it must give to match.
    pub fn to_check(stored: &str, key: &SecretString) -> Option<(Self, Digest)> {
        let parts: bcrypt_rust::HashParts = stored.parse().ok()?;
        let input = Self::with_salt(
            parts.get_cost(),
            parts.get_salt_raw(),
            key.expose_secret().as_bytes().to_vec(),
        );
        Some((input, parts.get_hash()))
    }

    pub fn cost(&self) -> u32 {
        self.cost
    }
}

/// bcrypt's result for one input: cost, salt and digest, which format as
/// the `$2b$` string a create stores.
pub type Output = bcrypt_rust::HashParts;

/// Whether a computed output has the expected digest, in constant time.
pub fn matches(computed: &Output, expected: &Digest) -> bool {
    computed.get_hash().ct_eq(expected).into()
}

/// The `$2b$` string a create stores.
pub fn hash_string(output: &Output) -> String {
    output.format_for_version(bcrypt_rust::Version::TwoB)
}

/// One input on the scalar kernel.
pub fn digest_one(input: &BcryptInput) -> Result<Output, BcryptFailed> {
    bcrypt_rust::hash_with_salt(input.key.expose_secret(), input.cost, input.salt)
        .map_err(|e| BcryptFailed(e.to_string()))
}

/// Inputs of one cost together, in lane-width groups on the crate's SIMD
/// backend; the digests in input order.
pub fn digest_many(inputs: &[&BcryptInput]) -> Result<Vec<Output>, BcryptFailed> {
    let Some(first) = inputs.first() else {
        return Ok(Vec::new());
    };
    if inputs.iter().any(|input| input.cost != first.cost) {
        return Err(BcryptFailed("a batch mixes bcrypt costs".to_owned()));
    }
    let keys: Vec<&[u8]> = inputs.iter().map(|i| i.key.expose_secret()).collect();
    let salts: Vec<[u8; 16]> = inputs.iter().map(|i| i.salt).collect();
    bcrypt_rust::hash_many_with_salts(&keys, &salts, first.cost).map_err(|e| BcryptFailed(e.to_string()))
}

/// The crate's SIMD backend on this CPU (`avx512`, `avx2`, `neon`, ...):
/// the first call may take the crate's one-time measurement.
pub fn backend_name() -> &'static str {
    bcrypt_rust::detected_backend().name()
}

/// How many hashes one batch of [`backend_name`]'s kernel holds.
pub fn backend_lanes() -> usize {
    bcrypt_rust::detected_backend().lanes()
}

/// When waiting bcrypt hashes of one cost run together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchPlan {
    /// The most one batch holds: the backend's lanes.
    pub lanes: usize,
    /// The fewest waiting hashes that finish sooner as one batch than one
    /// after another (at least 2).
    pub min_batch: usize,
    /// The crate's backend, for the logs.
    pub backend: &'static str,
}

impl BatchPlan {
    /// Every hash alone.
    pub const OFF: BatchPlan = BatchPlan {
        lanes: 1,
        min_batch: usize::MAX,
        backend: "off",
    };

    /// How many of `waiting` same-cost hashes (the one about to run
    /// included) to run as one batch: 1 means alone.
    pub fn size(&self, waiting: usize) -> usize {
        if waiting >= self.min_batch {
            waiting.min(self.lanes)
        } else {
            1
        }
    }

    pub fn batches(&self) -> bool {
        self.min_batch <= self.lanes
    }

    /// Times a full batch against one scalar hash at cost [`PLAN_COST`] on
    /// this CPU, after a warm-up batch (which also runs the crate's one-time
    /// choice between its x86 backends, about 0.4 s where it has two), and
    /// sets [`BatchPlan::min_batch`] where the batch wins by 5%.
    pub fn measure() -> BatchMeasurement {
        let backend = bcrypt_rust::detected_backend();
        let lanes = backend.lanes();
        let inputs: Vec<BcryptInput> = (0..lanes)
            .map(|i| BcryptInput::fresh(PLAN_COST, &SecretString::from(format!("batch-plan-{i}"))))
            .collect();
        let refs: Vec<&BcryptInput> = inputs.iter().collect();
        let warm = BcryptInput::fresh(4, &SecretString::from("warm-up"));
        let _ = digest_many(&[&warm]);
        let (mut single, mut batch) = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            let started = Instant::now();
            let _ = std::hint::black_box(digest_one(&inputs[0]));
            single = single.min(started.elapsed().as_secs_f64());
            let started = Instant::now();
            let _ = std::hint::black_box(digest_many(&refs));
            batch = batch.min(started.elapsed().as_secs_f64());
        }
        let plan = plan_from(lanes, single, batch, backend.name());
        BatchMeasurement {
            single_ms: single * 1e3,
            batch_ms: batch * 1e3,
            plan,
        }
    }
}

/// The cost [`BatchPlan::measure`] times at: cheap enough to take about a
/// tenth of a second, dear enough that the cost loop dominates as it does
/// at the tiers' costs.
pub const PLAN_COST: u32 = 6;

/// What [`BatchPlan::measure`] saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchMeasurement {
    pub single_ms: f64,
    pub batch_ms: f64,
    pub plan: BatchPlan,
}

/// The plan from one scalar hash's time and one full batch's: batch from the
/// number of hashes whose one-by-one time exceeds the batch's by 5%.
pub fn plan_from(lanes: usize, single: f64, batch: f64, backend: &'static str) -> BatchPlan {
    if lanes < 2 || single <= 0.0 {
        return BatchPlan::OFF;
    }
    let min_batch = ((batch * 1.05 / single).ceil() as usize).max(2);
    if min_batch > lanes {
        return BatchPlan::OFF;
    }
    BatchPlan {
        lanes,
        min_batch,
        backend,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_pays_from_the_number_of_hashes_that_take_longer_one_by_one() {
        // 16 lanes whose batch takes 9 single hashes' time: 10 waiting win by 5%.
        let plan = plan_from(16, 1.0, 9.0, "avx512");
        assert_eq!(plan.min_batch, 10);
        assert_eq!(
            (plan.size(1), plan.size(9), plan.size(10), plan.size(40)),
            (1, 1, 10, 16)
        );
        // A batch slower than its lanes one by one never runs.
        assert_eq!(plan_from(8, 1.0, 8.0, "sse41"), BatchPlan::OFF);
        assert_eq!(plan_from(1, 1.0, 1.0, "scalar"), BatchPlan::OFF);
        assert!(!BatchPlan::OFF.batches());
        assert_eq!(BatchPlan::OFF.size(1000), 1);
    }

    #[test]
    fn a_created_hash_string_verifies_with_the_bcrypt_crate() {
        let input = BcryptInput::fresh(4, &SecretString::from("비밀번호 with NUL\0inside"));
        let output = digest_one(&input).unwrap();
        let stored = hash_string(&output);
        assert!(stored.starts_with("$2b$04$") && stored.len() == 60, "{stored}");
        assert!(bcrypt::verify("비밀번호 with NUL\0inside", &stored).unwrap());
        let (again, expected) =
            BcryptInput::to_check(&stored, &SecretString::from("비밀번호 with NUL\0inside")).unwrap();
        assert_eq!(expected, output.get_hash());
        assert!(matches(&digest_one(&again).unwrap(), &expected));
        assert!(BcryptInput::to_check("$2b$04$short", &SecretString::from("x")).is_none());
    }

    #[test]
    fn a_batch_refuses_mixed_costs_rather_than_hash_one_at_the_wrong_cost() {
        let (a, b) = (
            BcryptInput::fresh(4, &SecretString::from("a")),
            BcryptInput::fresh(5, &SecretString::from("b")),
        );
        assert!(digest_many(&[&a, &b]).is_err());
        assert!(digest_many(&[]).unwrap().is_empty());
    }
}
