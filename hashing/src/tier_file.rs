//! The tier file (`infra/tiers.json`): the timing table measured by the
//! calibration tool, the budgets, the tiers chosen from them, and the Lambda
//! memory sizes the deployment uses. The calibration tool writes it; the
//! library reads its `tiers`; the deployment reads `functions`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The tier file embedded at build time, used when `TIERS_FILE` is not set.
pub const EMBEDDED: &str = include_str!("../../infra/tiers.json");

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
    /// The tiers for classic Lambda, where every hash has a CPU share of its
    /// own: the strongest cost inside each latency budget.
    pub tiers: BTreeMap<String, ChosenTier>,
    pub functions: BTreeMap<String, FunctionSizing>,
    /// The expected peak rate of hashes per tier (per second), which the
    /// fixed-capacity choice must carry.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub peak_rates_per_s: BTreeMap<String, f64>,
    /// The tiers for fixed capacity (the VM server, Lambda Managed
    /// Instances): the latency choice, lowered until the peak rates keep the
    /// hashing workers at most `max_utilization` busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_capacity: Option<FixedCapacity>,
    /// The hashing gate's time shares when both tiers wait, by tier name
    /// (1 for a tier not named: 1:1 when absent).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gate_weights: BTreeMap<String, u32>,
    /// bcrypt's batch throughput on the measuring machine (docs/DESIGN.md,
    /// Batch hashing), which the fixed-capacity choice counts on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchThroughput>,
    /// The seed's baseline, timed in the same run as `table`: bcrypt through
    /// the established `bcrypt` crate. Its verify P95 caps the latency budget
    /// of the tiers it names (docs/hashing.md, "The tier rule").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ReferenceRow>,
}

/// A timing of the seed's own hashing, beside the table of our engine's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceRow {
    /// What was timed, for people: `bcrypt crate, cost 10`.
    pub name: String,
    /// The tiers whose budget this row's verify P95 caps: those whose
    /// budget the operator did not give explicitly.
    pub caps: Vec<String>,
    #[serde(flatten)]
    pub timing: TimingRow,
}

/// How many bcrypt hashes a second one worker finishes when k wait.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchThroughput {
    /// bcrypt-rust's SIMD backend on the measuring machine.
    pub backend: String,
    /// Hashes one batch holds.
    pub lanes: usize,
    /// The fewest waiting hashes a batch is worth it for (the gate's rule,
    /// `hashing::batch::plan_from`); more than `lanes`: never.
    pub min_batch: usize,
    pub rows: Vec<BatchRow>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchRow {
    pub cost: u32,
    /// Hashes run together (1: the scalar kernel, alone).
    pub k: usize,
    /// Median time of the whole batch, which is each of its hashes' latency.
    pub batch_ms: f64,
    pub hashes_per_s: f64,
    /// `hashes_per_s` over k = 1's.
    pub speedup: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixedCapacity {
    /// Hashing workers the choice assumes (the machine's cores less one).
    pub workers: usize,
    pub max_utilization: f64,
    /// How busy the peak rates keep the workers with these tiers, one hash
    /// at a time.
    pub utilization: f64,
    /// With a `batch` section: `utilization` over the full-batch speedup,
    /// how busy a burst that makes the queue deep keeps the workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_utilization: Option<f64>,
    pub tiers: BTreeMap<String, ChosenTier>,
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
    /// What a million verifies cost on classic Lambda (arm64) at the
    /// recommended memory; none for a fixed-capacity choice, whose CPU is paid
    /// whether it hashes or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd_per_million: Option<f64>,
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

/// What a running process reads from the tier file: the chosen tiers and
/// the gate's weights. Reading only these skips building the timing table,
/// which nothing at run time needs (half of the file's parse time, at
/// every cold start).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TierChoices {
    tiers: BTreeMap<String, ChosenTier>,
    #[serde(default)]
    fixed_capacity: Option<FixedCapacityTiers>,
    #[serde(default)]
    gate_weights: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct FixedCapacityTiers {
    tiers: BTreeMap<String, ChosenTier>,
}

impl TierChoices {
    pub fn parse(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// The gate's weights, `[member, guest]`.
    pub fn weights(&self) -> [u32; 2] {
        ["member", "guest"].map(|t| self.gate_weights.get(t).copied().unwrap_or(1).max(1))
    }

    /// The tier a deployment hashes with: the fixed-capacity choice when the
    /// deployment has fixed capacity and the file has one, else the latency choice.
    pub fn tier(&self, name: &str, fixed_capacity: bool) -> Option<&ChosenTier> {
        let fixed = self.fixed_capacity.as_ref().filter(|_| fixed_capacity);
        fixed.and_then(|f| f.tiers.get(name)).or_else(|| self.tiers.get(name))
    }

    pub fn has_fixed_capacity(&self) -> bool {
        self.fixed_capacity.is_some()
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
                .parse::<crate::policy::Algorithm>()
                .expect("tier spec parses");
        }
        assert!(!file.table.is_empty());
    }

    #[test]
    fn gate_weights_default_to_an_even_share() {
        let mut file = TierFile::parse(EMBEDDED).unwrap();
        file.gate_weights.clear();
        let read = |file: &TierFile| TierChoices::parse(&serde_json::to_string(file).unwrap()).unwrap();
        assert_eq!(read(&file).weights(), [1, 1]);
        file.gate_weights.insert("member".into(), 3);
        assert_eq!(read(&file).weights(), [3, 1], "written and read back");
    }

    #[test]
    fn the_choices_read_at_run_time_are_the_ones_the_file_holds() {
        let file = TierFile::parse(EMBEDDED).unwrap();
        let choices = TierChoices::parse(EMBEDDED).unwrap();
        let fixed = file.fixed_capacity.as_ref().expect("a fixed-capacity choice");
        for tier in ["member", "guest"] {
            assert_eq!(choices.tier(tier, false), file.tiers.get(tier));
            assert_eq!(choices.tier(tier, true), fixed.tiers.get(tier));
        }
        assert!(choices.has_fixed_capacity());
        assert_eq!(choices.tier("admin", false), None);
    }
}
