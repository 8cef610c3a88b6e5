//! The cost table (docs/deploy.md): US$ per million requests per function.

use std::fmt::Write as _;

use shared::function::Function;
use shared::hashing::tier_file::TierFile;

/// Functions that do not hash are I/O-bound; this is the duration assumed
/// for them in the cost table (a few DynamoDB round trips), not a measurement.
pub const ASSUMED_IO_MS: f64 = 20.0;

/// US$ per million requests per function, from the tier file: the measured
/// hash time of the function's tier scaled to its memory's CPU share (plus
/// [`ASSUMED_IO_MS`]), priced with the tier file's Lambda model. Only the
/// functions the tier file sizes: `media` is sized by its parameter
/// (`MediaMemory`), and its cost is the images' (docs/deploy.md, Images).
pub fn cost_table(tiers: &TierFile) -> String {
    let model = &tiers.lambda_model;
    let mut md = String::from(
        "| function | memory MB | tier | hashing ms at that memory | + I/O ms (assumed) | US$ per million requests |\n|---|---:|---|---:|---:|---:|\n",
    );
    for function in Function::ALL.into_iter().filter(|f| *f != Function::Media) {
        let sizing = &tiers.functions[function.name()];
        let share = (f64::from(sizing.memory_mb) / f64::from(model.full_cpu_memory_mb)).min(1.0);
        let hashing_ms = sizing
            .tier
            .as_deref()
            .and_then(|t| tiers.tiers.get(t))
            .and_then(|chosen| tiers.table.iter().find(|row| row.spec == chosen.spec))
            .map_or(0.0, |row| row.verify.median_ms / share);
        let duration_s = (hashing_ms + ASSUMED_IO_MS) / 1000.0;
        let usd = 1e6 * f64::from(sizing.memory_mb) / 1024.0 * duration_s * model.usd_per_gb_second
            + model.usd_per_million_requests;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.0} | {:.0} | {:.2} |",
            function.name(),
            sizing.memory_mb,
            sizing.tier.as_deref().unwrap_or("-"),
            hashing_ms,
            ASSUMED_IO_MS,
            usd
        );
    }
    md
}
