//! `cargo run --release -p calibrate -- measure` (the default) or `-- from-logs <files>`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use calibrate::{Outputs, build_tier_file, logs, measure, model, report, stats, this_machine, write_outputs};

#[derive(Parser)]
#[command(about = "Measure password-hash timings and write the tier file")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    common: Common,
}

#[derive(Subcommand)]
enum Command {
    /// Time every candidate on this machine (the default).
    Measure(MeasureArgs),
    /// Decide the tiers again from the tier file's own table (after a change
    /// of the rules, the budgets or the peak rates), without measuring.
    Choose,
    /// Rebuild the table from exported log lines of the functions (files, or stdin with `-`).
    FromLogs { files: Vec<PathBuf> },
}

#[derive(Args, Clone)]
struct MeasureArgs {
    /// Rounds over all candidates (cheap ones repeat within a round).
    #[arg(long, default_value_t = 31)]
    rounds: usize,
    #[arg(long, default_value_t = 4)]
    min_cost: u32,
    #[arg(long, default_value_t = 14)]
    max_cost: u32,
    /// Rounds of the batch measurement (bcrypt batches of 1-16 at --batch-costs).
    #[arg(long, default_value_t = 11)]
    batch_rounds: usize,
    #[arg(long, value_delimiter = ',', default_values_t = [8, 10])]
    batch_costs: Vec<u32>,
}

#[derive(Args)]
struct Common {
    /// Hashing budget per request for member passwords, in ms. Default: 250,
    /// capped by the seed's baseline (the bcrypt crate's cost-10 verify P95,
    /// measured in the same run); a budget given here is not capped.
    #[arg(long, global = true)]
    member_budget_ms: Option<f64>,
    /// Hashing budget per request for guest passwords, in ms. Default: 25,
    /// capped like the member budget; a budget given here is not capped.
    #[arg(long, global = true)]
    guest_budget_ms: Option<f64>,
    #[arg(long, global = true, default_value = "infra/tiers.json")]
    out: PathBuf,
    #[arg(long, global = true, default_value = "infra/timing-report.md")]
    report: PathBuf,
    #[arg(long, global = true, default_value = "infra/timing-chart.svg")]
    chart: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let given = [
        ("member", cli.common.member_budget_ms, model::DEFAULT_MEMBER_BUDGET_MS),
        ("guest", cli.common.guest_budget_ms, model::DEFAULT_GUEST_BUDGET_MS),
    ];
    let budgets: BTreeMap<String, f64> = given
        .iter()
        .map(|&(name, explicit, default)| (name.to_owned(), explicit.unwrap_or(default)))
        .collect();
    // The seed's baseline caps the budgets the operator left at their default.
    let capped: Vec<String> = given
        .iter()
        .filter(|(_, explicit, _)| explicit.is_none())
        .map(|(name, _, _)| (*name).to_owned())
        .collect();
    let file = match cli.command.unwrap_or(Command::Measure(MeasureArgs {
        rounds: 31,
        min_cost: 4,
        max_cost: 14,
        batch_rounds: 11,
        batch_costs: vec![8, 10],
    })) {
        Command::Measure(args) => {
            if cfg!(debug_assertions) {
                eprintln!("warning: a debug build measures slow code; use `cargo run --release -p calibrate`");
            }
            let candidates = measure::default_candidates(args.min_cost, args.max_cost);
            let measured = measure::measure(&candidates, Some(model::REFERENCE_COST), args.rounds)?;
            let batch = measure::measure_batches(&args.batch_costs, args.batch_rounds)?;
            let reference = measured.reference.as_ref().map(|samples| {
                model::reference_row(
                    &model::lambda_model(),
                    model::REFERENCE_COST,
                    stats::summarize(&samples.hash),
                    stats::summarize(&samples.verify),
                    capped.clone(),
                )
            });
            build_tier_file(
                &measured.candidates,
                &budgets,
                this_machine(),
                "calibrate",
                Some(batch),
                reference,
            )?
        }
        Command::Choose => {
            let json = std::fs::read_to_string(&cli.common.out)
                .with_context(|| format!("reading {}", cli.common.out.display()))?;
            let mut file = hashing::tier_file::TierFile::parse(&json)?;
            file.budgets_ms = budgets.clone();
            if let Some(reference) = &mut file.reference {
                reference.caps = capped.clone();
            }
            calibrate::decide(&mut file)?;
            file
        }
        Command::FromLogs { files } => {
            let mut text = String::new();
            for file in &files {
                if file.as_os_str() == "-" {
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
                } else {
                    text += &std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
                }
            }
            let (samples, used) = logs::samples_from_logs(&text);
            anyhow::ensure!(used > 0, "no password-hash timing lines found in the input");
            eprintln!("{used} timing lines over {} algorithms", samples.len());
            let mut machine = this_machine();
            machine.cpu = format!("production logs ({} lines)", used);
            // Logs hold single hashes only (batched ones are skipped): no
            // batch section, so the capacity rule counts one hash at a time.
            // Nor a reference row: logs do not time the seed's crate.
            build_tier_file(&samples, &budgets, machine, "logs", None, None)?
        }
    };
    write_outputs(
        &file,
        &Outputs {
            tier_file: &cli.common.out,
            report: &cli.common.report,
            chart: &cli.common.chart,
        },
    )?;
    println!("{}", report::table(&file));
    for (name, tier) in &file.tiers {
        println!(
            "{name}: {} (verify P95 {} ms, budget {} ms)",
            tier.spec, tier.verify_p95_ms, tier.budget_ms
        );
    }
    if let Some(reference) = &file.reference {
        println!(
            "reference: {} (verify P95 {} ms) caps {:?}",
            reference.name, reference.timing.verify.p95_ms, reference.caps
        );
    }
    println!(
        "wrote {}, {}, {}",
        cli.common.out.display(),
        cli.common.report.display(),
        cli.common.chart.display()
    );
    Ok(())
}
