//! The single-process server (VM mode and the local default). The HTTP API
//! arrives with the function set; at this stage it validates the hashing
//! configuration and shows the tiers this machine runs with.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use shared::hashing::tier_file::{self, TierFile};
use shared::hashing::{Hashing, HashingConfig, Tier};

fn main() -> anyhow::Result<()> {
    let data_dir = PathBuf::from(std::env::var("DATA_DIR").unwrap_or_else(|_| "./data".to_owned()));
    let pepper = match std::env::var("PEPPER") {
        Ok(pepper) => pepper,
        Err(_) => local_secret(&data_dir, "pepper")?,
    };
    let config = HashingConfig::from_lookup(|name| match name {
        "PEPPER" => Some(pepper.clone()),
        _ => std::env::var(name).ok(),
    })?;
    let file = match std::env::var("TIERS_FILE") {
        Ok(path) => TierFile::parse(
            &std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?,
        )?,
        Err(_) => TierFile::parse(tier_file::EMBEDDED)?,
    };
    let hashing = Hashing::new(config)?;

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
    println!();
    for tier in Tier::ALL {
        let policy = hashing.engine().policy(tier);
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
        hashing.gate().workers(),
        hashing.gate().queue()
    );
    Ok(())
}

/// Local/VM mode only: a secret generated once and kept under `DATA_DIR`, so
/// the first run needs no set-up. Lambda requires it from the environment.
fn local_secret(data_dir: &Path, name: &str) -> anyhow::Result<String> {
    let path = data_dir.join(name);
    if let Ok(secret) = std::fs::read_to_string(&path) {
        return Ok(secret.trim().to_owned());
    }
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("creating {}", data_dir.display()))?;
    let secret: String = rand::random::<[u8; 32]>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    write_private(&path, &secret).with_context(|| format!("writing {}", path.display()))?;
    eprintln!(
        "warning: {} was not set; generated one in {} (keep it: hashes made with it need it)",
        name.to_uppercase(),
        path.display()
    );
    Ok(secret)
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, contents)
}
