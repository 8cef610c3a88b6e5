//! The calibration tool: measures hash timings (or reads them from logs),
//! picks the tiers from the budgets, models Lambda, and writes the tier file,
//! a Markdown report and an SVG chart.

pub mod logs;
pub mod measure;
pub mod model;
pub mod report;
pub mod stats;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use hashing::Algorithm;
use hashing::tier_file::{Machine, ReferenceRow, TierFile};

use measure::Samples;

/// Where the outputs go.
#[derive(Debug)]
pub struct Outputs<'a> {
    pub tier_file: &'a Path,
    pub report: &'a Path,
    pub chart: &'a Path,
}

pub fn this_machine() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("CPU part"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    Machine {
        cpu,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        arch: std::env::consts::ARCH.to_owned(),
        os: std::env::consts::OS.to_owned(),
    }
}

/// Turns samples into the tier file: the table, the chosen tiers, the sizing.
/// `reference` (the seed's baseline) caps the budgets of the tiers it names.
pub fn build_tier_file(
    samples: &[(Algorithm, Samples)],
    budgets_ms: &BTreeMap<String, f64>,
    machine: Machine,
    source: &str,
    batch: Option<hashing::tier_file::BatchThroughput>,
    reference: Option<ReferenceRow>,
) -> anyhow::Result<TierFile> {
    let model = model::lambda_model();
    let table: Vec<_> = samples
        .iter()
        .map(|(algorithm, s)| {
            // A log export may hold only verifies (login) or only hashes (signup):
            // bcrypt and Argon2id do the same work either way, so one stands in for the other.
            let hash = if s.hash.is_empty() { &s.verify } else { &s.hash };
            let verify = if s.verify.is_empty() { &s.hash } else { &s.verify };
            model::row(
                &model,
                algorithm.to_string(),
                stats::summarize(hash),
                stats::summarize(verify),
            )
        })
        .collect();
    let mut file = TierFile {
        machine,
        measured_at: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        source: source.to_owned(),
        budgets_ms: budgets_ms.clone(),
        functions: BTreeMap::new(),
        lambda_model: model,
        table,
        tiers: BTreeMap::new(),
        peak_rates_per_s: model::default_peak_rates(),
        fixed_capacity: None,
        gate_weights: model::default_gate_weights(),
        batch,
        reference,
    };
    decide(&mut file)?;
    Ok(file)
}

/// The decisions from a tier file's table: the latency tiers (classic
/// Lambda) within each budget as the reference caps it, the fixed-capacity
/// tiers (the server, Lambda Managed Instances) for its peak rates, and each
/// function's memory.
pub fn decide(file: &mut TierFile) -> anyhow::Result<()> {
    file.tiers = file
        .budgets_ms
        .iter()
        .map(|(name, &configured)| {
            let budget = model::latency_budget(name, configured, file.reference.as_ref());
            let chosen = model::choose_tier(&file.lambda_model, &file.table, budget)
                .context("the table has no bcrypt row to choose from")?;
            Ok((name.clone(), chosen))
        })
        .collect::<anyhow::Result<BTreeMap<_, _>>>()?;
    if file.peak_rates_per_s.is_empty() {
        file.peak_rates_per_s = model::default_peak_rates();
    }
    if file.gate_weights.is_empty() {
        file.gate_weights = model::default_gate_weights();
    }
    // The server's hashing workers on the measuring machine (hashing::Compute::Machine).
    let workers = file.machine.cores.saturating_sub(1).max(1);
    file.fixed_capacity = Some(model::choose_for_capacity(
        &file.lambda_model,
        &file.table,
        &file.tiers,
        &file.peak_rates_per_s,
        workers,
        file.batch.as_ref(),
    ));
    file.functions = model::function_sizing(&file.tiers);
    Ok(())
}

pub fn write_outputs(file: &TierFile, out: &Outputs<'_>) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(file)? + "\n";
    std::fs::write(out.tier_file, json).with_context(|| format!("writing {}", out.tier_file.display()))?;
    report::chart(file, out.chart).with_context(|| format!("drawing {}", out.chart.display()))?;
    let chart_name = out
        .chart
        .file_name()
        .map_or_else(|| out.chart.display().to_string(), |n| n.to_string_lossy().into_owned());
    std::fs::write(out.report, report::markdown(file, &chart_name))
        .with_context(|| format!("writing {}", out.report.display()))?;
    Ok(())
}
