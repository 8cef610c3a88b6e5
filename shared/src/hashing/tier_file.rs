//! The tier file (`infra/tiers.json`): the timing table measured by the
//! calibration tool, the budgets, the tiers chosen from them, and the Lambda
//! memory sizes the deployment uses. The calibration tool writes it; the
//! library reads its `tiers`; the deployment reads `functions`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The tier file embedded at build time, used when `TIERS_FILE` is not set.
pub const EMBEDDED: &str = include_str!("../../../infra/tiers.json");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TierFile {
    pub machine: Machine,
    /// RFC 3339 time of the measurement.
    pub measured_at: String,
    /// How the table was made: `calibrate` (measured) or `logs` (rebuilt from log lines).
    pub source: String,
    pub budgets_ms: BTreeMap<String, f64>,
    pub lambda_model: LambdaModel,
    pub table: Vec<TimingRow>,
    pub tiers: BTreeMap<String, ChosenTier>,
    pub functions: BTreeMap<String, FunctionSizing>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub arch: String,
    pub os: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LambdaModel {
    /// Memory at which a function gets one full vCPU.
    pub full_cpu_memory_mb: u32,
    pub usd_per_gb_second: f64,
    pub usd_per_million_requests: f64,
    pub memory_sizes_mb: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingRow {
    /// `bcrypt:10`, `argon2id:19456:2:1`: the same syntax as `MEMBER_TIER`.
    pub spec: String,
    pub hash: Stats,
    pub verify: Stats,
    /// One entry per memory size: the verify's modelled duration and price.
    pub lambda: Vec<LambdaCost>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub samples: usize,
    pub median_ms: f64,
    pub p95_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LambdaCost {
    pub memory_mb: u32,
    pub duration_ms: f64,
    pub usd_per_million: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChosenTier {
    pub spec: String,
    pub budget_ms: f64,
    /// The P95 of one verify at `spec` on the measuring machine.
    pub verify_p95_ms: f64,
    /// Whether the tier needs the pepper (weaker than bcrypt cost 10).
    pub requires_pepper: bool,
    pub recommended_memory_mb: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionSizing {
    /// The tier the function hashes with, if it hashes at all.
    pub tier: Option<String>,
    pub memory_mb: u32,
}

impl TierFile {
    pub fn parse(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_tier_file_parses_and_names_both_tiers() {
        let file = TierFile::parse(EMBEDDED).expect("infra/tiers.json parses");
        for tier in ["member", "guest"] {
            let chosen = &file.tiers[tier];
            chosen
                .spec
                .parse::<crate::hashing::Algorithm>()
                .expect("tier spec parses");
        }
        assert!(!file.table.is_empty());
    }
}
