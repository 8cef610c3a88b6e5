//! The single-process server (VM mode and the local default). The HTTP API
//! arrives with the function set; at this stage it shows the hashing tiers
//! this machine would run with, from the tier file and the environment.

use shared::hashing::tier_file::{self, TierFile};
use shared::hashing::{HashingConfig, Tier};

fn main() -> anyhow::Result<()> {
    let file = match std::env::var("TIERS_FILE") {
        Ok(path) => TierFile::parse(&std::fs::read_to_string(&path)?)?,
        Err(_) => TierFile::parse(tier_file::EMBEDDED)?,
    };
    println!(
        "Timing table measured {} on {} ({} cores):\n",
        file.measured_at, file.machine.cpu, file.machine.cores
    );
    println!(
        "| algorithm | hash median ms | verify median ms | verify P95 ms |\n|---|---:|---:|---:|"
    );
    for row in &file.table {
        println!(
            "| {} | {:.1} | {:.1} | {:.1} |",
            row.spec, row.hash.median_ms, row.verify.median_ms, row.verify.p95_ms
        );
    }
    let config = HashingConfig::from_env()?;
    println!();
    for tier in Tier::ALL {
        let policy = match tier {
            Tier::Member => config.member,
            Tier::Guest => config.guest,
        };
        let budget = file
            .tiers
            .get(tier.as_str())
            .map_or(f64::NAN, |t| t.budget_ms);
        println!(
            "{tier} tier: {} (budget {budget} ms){}",
            policy.algorithm,
            if policy.peppered { ", peppered" } else { "" }
        );
    }
    println!(
        "hashing gate: {} workers, queue {}\n\nThe HTTP API is not served yet (see the issue list).",
        config.workers, config.queue
    );
    Ok(())
}
