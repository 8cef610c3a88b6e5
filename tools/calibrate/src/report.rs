//! The human side of the tier file: a Markdown report and an SVG chart of
//! bcrypt cost against milliseconds, with the tier budgets drawn across.

use std::fmt::Write as _;
use std::path::Path;

use hashing::Algorithm;
use hashing::tier_file::TierFile;
use plotters::prelude::*;

pub fn markdown(file: &TierFile, chart_name: &str) -> String {
    let mut md = String::new();
    let m = &file.machine;
    let _ = writeln!(md, "# Password-hash timing table\n");
    let _ = writeln!(
        md,
        "Measured {} on {} ({} cores, {} {}); source: {}. Times in ms: median and P95 of one hash \
         and one verify, peppered (HMAC-SHA-384 pre-hash included).\n",
        file.measured_at, m.cpu, m.cores, m.os, m.arch, file.source
    );
    let _ = writeln!(md, "![bcrypt cost vs ms]({chart_name})\n");
    md.push_str(&table(file));
    let _ = writeln!(md, "\n## Chosen tiers\n");
    let _ = writeln!(
        md,
        "| tier | budget ms | chosen | verify P95 ms | needs pepper | Lambda memory MB | US$ per M verifies |"
    );
    let _ = writeln!(md, "|---|---:|---|---:|---|---:|---:|");
    for (name, tier) in &file.tiers {
        let _ = writeln!(
            md,
            "| {name} | {} | `{}` | {} | {} | {} | {} |",
            tier.budget_ms,
            tier.spec,
            tier.verify_p95_ms,
            if tier.requires_pepper { "yes" } else { "no" },
            tier.recommended_memory_mb,
            tier.usd_per_million.map_or("-".to_owned(), |usd| format!("{usd:.4}"))
        );
    }
    let lm = &file.lambda_model;
    let cap = match &file.reference {
        Some(r) if !r.caps.is_empty() => format!(
            " (for {}, the configured budget capped by the seed's baseline: the verify P95 of the {}, {} ms, \
             measured in the same run; a budget given explicitly is not capped)",
            r.caps.join(" and "),
            r.name,
            r.timing.verify.p95_ms
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        md,
        "\nEach tier is the strongest bcrypt cost whose verify P95 fits the budget{cap}. Lambda model: CPU share = \
         min(1, memory / {} MB); duration = verify median / share; price = {} US$ per GB-second (arm64) x \
         memory x duration + {} US$ per million requests. Below {} MB a CPU-bound hash costs the same and \
         only gets slower, so hashing functions get the smallest size that keeps the budget.",
        lm.full_cpu_memory_mb, lm.usd_per_gb_second, lm.usd_per_million_requests, lm.full_cpu_memory_mb
    );
    if let Some(fixed) = &file.fixed_capacity {
        let rates: Vec<String> = file
            .peak_rates_per_s
            .iter()
            .map(|(tier, rate)| format!("{tier} {rate}/s"))
            .collect();
        let _ = writeln!(
            md,
            "\n## Fixed capacity (the server, Lambda Managed Instances)\n\nPeak hash rates {}; {} hashing \
             worker(s), at most {:.0}% busy. The latency tiers are lowered one bcrypt cost at a time on the \
             tier taking the most worker time until the rates fit: {:.1}% busy.\n\n| tier | chosen | verify P95 ms | \
             needs pepper |\n|---|---|---:|---|",
            rates.join(", "),
            fixed.workers,
            fixed.max_utilization * 100.0,
            fixed.utilization * 100.0
        );
        for (name, tier) in &fixed.tiers {
            let _ = writeln!(
                md,
                "| {name} | `{}` | {} | {} |",
                tier.spec,
                tier.verify_p95_ms,
                if tier.requires_pepper { "yes" } else { "no" }
            );
        }
    }
    if let Some(batch) = &file.batch {
        md.push_str(&batch_table(file, batch));
    }
    let _ = writeln!(
        md,
        "\n## Function memory\n\n| function | tier | memory MB |\n|---|---|---:|"
    );
    for (name, f) in &file.functions {
        let _ = writeln!(
            md,
            "| {name} | {} | {} |",
            f.tier.as_deref().unwrap_or("-"),
            f.memory_mb
        );
    }
    md
}

/// bcrypt batches on one worker: what the fixed-capacity rule counts on.
pub fn batch_table(file: &TierFile, batch: &hashing::tier_file::BatchThroughput) -> String {
    let mut md = String::new();
    let when = if batch.min_batch > batch.lanes {
        "never: a full batch is not 5% faster than its hashes one by one".to_owned()
    } else {
        format!("from {} waiting hashes of one tier and cost", batch.min_batch)
    };
    let _ = writeln!(
        md,
        "\n## bcrypt batches (one worker)\n\nbcrypt-rust's `{}` backend, {} lanes; the gate batches {when}. \
         A batch's time is each of its hashes' latency.\n\n| cost | k | batch ms | hashes/s | x one at a time |\n\
         |---:|---:|---:|---:|---:|",
        batch.backend, batch.lanes
    );
    for row in &batch.rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.1} | {:.2} |",
            row.cost, row.k, row.batch_ms, row.hashes_per_s, row.speedup
        );
    }
    if let Some(burst) = file.fixed_capacity.as_ref().and_then(|f| f.batch_utilization) {
        let _ = writeln!(
            md,
            "\nWith batches, the fixed-capacity rule allows up to 85% busy one hash at a time at the peak rates \
             and keeps the 70% headroom against the full-batch throughput: {:.1}% of it.",
            burst * 100.0
        );
    }
    md
}

/// The timing table alone (also shown in docs/hashing.md).
pub fn table(file: &TierFile) -> String {
    let mut md = String::new();
    let sizes = &file.lambda_model.memory_sizes_mb;
    let _ = write!(
        md,
        "| algorithm | hash median | hash P95 | verify median | verify P95 |"
    );
    for mb in sizes {
        let _ = write!(md, " Lambda {mb} MB ms / US$ per M |");
    }
    let _ = write!(md, "\n|---|---:|---:|---:|---:|");
    md.push_str(&"---:|".repeat(sizes.len()));
    md.push('\n');
    let rows = file.table.iter().map(|row| (format!("`{}`", row.spec), row));
    let reference = file
        .reference
        .iter()
        .map(|r| (format!("{} (seed baseline)", r.name), &r.timing));
    for (label, row) in rows.chain(reference) {
        let _ = write!(
            md,
            "| {label} | {:.1} | {:.1} | {:.1} | {:.1} |",
            row.hash.median_ms, row.hash.p95_ms, row.verify.median_ms, row.verify.p95_ms
        );
        for cost in &row.lambda {
            let _ = write!(md, " {:.0} / {:.2} |", cost.duration_ms, cost.usd_per_million);
        }
        md.push('\n');
    }
    md
}

pub fn chart(file: &TierFile, path: &Path) -> anyhow::Result<()> {
    let mut bcrypt: Vec<(u32, f64, f64)> = file
        .table
        .iter()
        .filter_map(|row| match row.spec.parse() {
            Ok(Algorithm::Bcrypt { cost }) => Some((cost, row.verify.median_ms, row.verify.p95_ms)),
            _ => None,
        })
        .collect();
    bcrypt.sort_by_key(|r| r.0);
    anyhow::ensure!(!bcrypt.is_empty(), "no bcrypt rows to chart");
    let (lo, hi) = (bcrypt[0].0, bcrypt[bcrypt.len() - 1].0);
    let y_max = bcrypt.iter().map(|r| r.2).fold(1.0, f64::max) * 1.5;
    let y_min = bcrypt.iter().map(|r| r.1).fold(f64::MAX, f64::min).min(1.0) * 0.7;

    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("bcrypt verify time on {} ({})", file.machine.cpu, file.measured_at),
            ("sans-serif", 18),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(lo..hi.max(lo + 1), (y_min..y_max).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("bcrypt cost")
        .y_desc("ms (log scale)")
        .x_labels((hi - lo + 1) as usize)
        .draw()?;
    chart
        .draw_series(LineSeries::new(bcrypt.iter().map(|r| (r.0, r.1)), BLUE.stroke_width(2)))?
        .label("verify median")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart.draw_series(bcrypt.iter().map(|r| Circle::new((r.0, r.1), 3, BLUE.filled())))?;
    chart
        .draw_series(LineSeries::new(bcrypt.iter().map(|r| (r.0, r.2)), MAGENTA))?
        .label("verify P95")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], MAGENTA));
    for ((name, tier), color) in file.tiers.iter().zip([RED, GREEN, BLACK]) {
        let budget = tier.budget_ms;
        chart
            .draw_series(LineSeries::new([(lo, budget), (hi, budget)], color.stroke_width(1)))?
            .label(format!("{name} budget {budget} ms -> {}", tier.spec))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
