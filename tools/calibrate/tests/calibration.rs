//! The calibration pipeline end to end, on a tiny candidate set, and the
//! committed tier file's consistency.

use std::collections::BTreeMap;

use calibrate::{Outputs, build_tier_file, logs, measure, model, stats, this_machine, write_outputs};
use hashing::Algorithm;
use hashing::tier_file::{EMBEDDED, TierChoices, TierFile};

fn budgets(member: f64, guest: f64) -> BTreeMap<String, f64> {
    BTreeMap::from([("member".to_owned(), member), ("guest".to_owned(), guest)])
}

#[test]
fn a_short_measurement_writes_a_tier_file_the_library_loads_plus_report_and_chart() {
    let candidates = [
        Algorithm::Bcrypt { cost: 4 },
        Algorithm::Bcrypt { cost: 5 },
        Algorithm::Argon2id { m_kib: 256, t: 1, p: 1 },
    ];
    let measured = measure::measure(&candidates, Some(4), 2).unwrap();
    let samples = measured.candidates;
    assert_eq!(samples.len(), 3);
    assert!(
        samples
            .iter()
            .all(|(_, s)| s.hash.len() >= 2 && s.hash.len() == s.verify.len())
    );
    let crate_samples = measured.reference.expect("the bcrypt crate timed in the same rounds");
    assert!(crate_samples.verify.len() >= 2 && crate_samples.hash.len() == crate_samples.verify.len());
    // Both budgets given explicitly: the reference caps neither.
    let reference = model::reference_row(
        &model::lambda_model(),
        4,
        stats::summarize(&crate_samples.hash),
        stats::summarize(&crate_samples.verify),
        vec![],
    );

    let batch = measure::measure_batches(&[4], 1).unwrap();
    assert_eq!(batch.rows.len(), measure::BATCH_SIZES.len());
    assert!(
        batch
            .rows
            .iter()
            .all(|r| r.cost == 4 && r.batch_ms > 0.0 && r.hashes_per_s > 0.0)
    );
    assert_eq!(batch.rows[0].speedup, 1.0, "k = 1 is the reference");
    let file = build_tier_file(
        &samples,
        &budgets(10_000.0, 0.000_1),
        this_machine(),
        "calibrate",
        Some(batch),
        Some(reference),
    )
    .unwrap();
    assert!(file.fixed_capacity.as_ref().unwrap().batch_utilization.is_some());
    assert_eq!(
        file.tiers["member"].spec, "bcrypt:5",
        "the strongest that fits a huge budget given explicitly, above the bcrypt crate's cost 4"
    );
    assert_eq!(file.tiers["guest"].spec, "bcrypt:4", "the weakest when nothing fits");
    assert!(file.tiers["guest"].requires_pepper);
    assert_eq!(file.table.len(), 3);
    assert_eq!(file.table[0].lambda.len(), 6);

    let dir = std::env::temp_dir().join(format!("calibrate-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Outputs {
        tier_file: &dir.join("tiers.json"),
        report: &dir.join("report.md"),
        chart: &dir.join("chart.svg"),
    };
    write_outputs(&file, &out).unwrap();

    let written = TierFile::parse(&std::fs::read_to_string(out.tier_file).unwrap()).unwrap();
    assert_eq!(written, file);
    let report = std::fs::read_to_string(out.report).unwrap();
    assert!(report.contains("| `bcrypt:5` |") && report.contains("![bcrypt cost vs ms](chart.svg)"));
    assert!(report.contains("## bcrypt batches (one worker)"), "{report}");
    assert!(report.contains("| bcrypt crate, cost 4 (seed baseline) |"), "{report}");
    let svg = std::fs::read_to_string(out.chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("member budget"));

    // What a running process reads from it (classic Lambda's choice).
    let choices = TierChoices::parse(&std::fs::read_to_string(out.tier_file).unwrap()).unwrap();
    let member = choices.tier("member", false).unwrap().spec.parse::<Algorithm>();
    assert_eq!(member, Ok(Algorithm::Bcrypt { cost: 5 }));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_table_rebuilt_from_log_lines_picks_tiers_like_a_measured_one() {
    let mut lines = String::new();
    for cost in 8..=12u32 {
        let ms = 85.0 * 2f64.powi(cost as i32 - 10);
        for i in 0..20 {
            lines += &format!(
                "{{\"fields\":{{\"op\":\"verify\",\"tier\":\"member\",\"algorithm\":\"bcrypt\",\"cost\":\"{cost}\",\"duration_ms\":{}}}}}\n",
                ms + f64::from(i) * 0.1
            );
        }
    }
    let (samples, used) = logs::samples_from_logs(&lines);
    assert_eq!(used, 100);
    let file = build_tier_file(&samples, &budgets(250.0, 25.0), this_machine(), "logs", None, None).unwrap();
    assert_eq!(file.tiers["member"].spec, "bcrypt:11");
    assert_eq!(file.tiers["guest"].spec, "bcrypt:8");
    assert_eq!(file.table[0].hash.samples, 20, "verifies stand in for missing hashes");
}

#[test]
fn the_committed_tier_file_is_a_full_measurement_and_its_choices_follow_its_table() {
    let file = TierFile::parse(EMBEDDED).unwrap();
    assert_eq!(
        file.source, "calibrate",
        "infra/tiers.json must come from a measurement"
    );
    let specs: Vec<&str> = file.table.iter().map(|r| r.spec.as_str()).collect();
    for cost in 4..=14 {
        assert!(
            specs.contains(&format!("bcrypt:{cost}").as_str()),
            "bcrypt:{cost} missing"
        );
    }
    assert!(specs.contains(&"argon2id:19456:2:1"), "OWASP's Argon2id preset missing");
    assert!(
        file.table
            .iter()
            .all(|r| r.verify.samples >= 20 && r.verify.median_ms > 0.0)
    );
    let lambda = model::lambda_model();
    for (name, chosen) in &file.tiers {
        let budget = model::latency_budget(name, file.budgets_ms[name], file.reference.as_ref());
        let again = model::choose_tier(&lambda, &file.table, budget).unwrap();
        assert_eq!(&again, chosen, "tier {name} does not follow from the table");
    }
    assert_eq!(file.functions, model::function_sizing(&file.tiers));
    let workers = file.machine.cores.saturating_sub(1).max(1);
    let fixed = model::choose_for_capacity(
        &lambda,
        &file.table,
        &file.tiers,
        &file.peak_rates_per_s,
        workers,
        file.batch.as_ref(),
    );
    assert_eq!(
        file.fixed_capacity.as_ref(),
        Some(&fixed),
        "the fixed-capacity tiers follow from the table and rates"
    );
}

#[test]
fn no_committed_default_tier_takes_longer_than_the_seed_baseline_measured_in_the_same_run() {
    let file = TierFile::parse(EMBEDDED).unwrap();
    let reference = file
        .reference
        .as_ref()
        .expect("the tier file holds the seed's baseline");
    assert_eq!(reference.name, "bcrypt crate, cost 10");
    assert_eq!(reference.timing.spec, "bcrypt:10");
    assert!(reference.timing.verify.samples >= 20, "{:?}", reference.timing.verify);
    assert_eq!(reference.caps, ["member", "guest"], "the default budgets are capped");
    let limit = reference.timing.verify.p95_ms;
    let fixed = &file.fixed_capacity.as_ref().expect("a fixed-capacity choice").tiers;
    for (name, tier) in file.tiers.iter().chain(fixed) {
        assert!(
            tier.verify_p95_ms <= limit,
            "{name}: {} verify P95 {} ms > the bcrypt crate's {limit} ms",
            tier.spec,
            tier.verify_p95_ms
        );
        assert!(tier.budget_ms <= limit, "{name}: budget {} ms", tier.budget_ms);
    }
}

/// Synthetic timings: our engine at 85 ms x 2^(cost - 10) (P95 x 1.1), the
/// bcrypt crate's cost 10 1.16x slower.
fn synthetic_samples() -> (Vec<(Algorithm, measure::Samples)>, hashing::tier_file::ReferenceRow) {
    let spread = |ms: f64| {
        (0..20)
            .map(|i| ms * (1.0 + f64::from(i) * 0.1 / 19.0))
            .collect::<Vec<_>>()
    };
    let samples = (4..=14)
        .map(|cost| {
            let ms = spread(85.0 * 2f64.powi(cost - 10));
            (
                Algorithm::Bcrypt { cost: cost as u32 },
                measure::Samples {
                    hash: ms.clone(),
                    verify: ms,
                },
            )
        })
        .collect();
    let crate_ms = spread(85.0 * 1.16);
    let reference = model::reference_row(
        &model::lambda_model(),
        10,
        stats::summarize(&crate_ms),
        stats::summarize(&crate_ms),
        vec!["member".to_owned(), "guest".to_owned()],
    );
    (samples, reference)
}

#[test]
fn the_seed_baseline_caps_a_default_budget_and_an_explicit_budget_wins() {
    let (samples, reference) = synthetic_samples();
    let build = |reference| {
        build_tier_file(
            &samples,
            &budgets(250.0, 25.0),
            this_machine(),
            "calibrate",
            None,
            reference,
        )
        .unwrap()
    };
    // Without the cap, 250 ms takes cost 11 (P95 187 ms).
    let uncapped = build(None);
    assert_eq!(uncapped.tiers["member"].spec, "bcrypt:11");
    // The crate's cost 10 (P95 108 ms) caps the default: cost 10 (93.5 ms).
    let capped = build(Some(reference.clone()));
    assert_eq!(capped.tiers["member"].spec, "bcrypt:10");
    assert_eq!(capped.tiers["member"].budget_ms, reference.timing.verify.p95_ms);
    assert_eq!(
        capped.fixed_capacity.as_ref().unwrap().tiers["member"].spec,
        "bcrypt:10"
    );
    assert_eq!(
        capped.budgets_ms["member"], 250.0,
        "the configured budget stays on record"
    );
    assert_eq!(capped.tiers["guest"].spec, "bcrypt:8", "25 ms is under the cap already");
    assert_eq!(capped.tiers["guest"].budget_ms, 25.0);
    // A member budget given explicitly (the reference no longer names the
    // tier) is the operator's choice of strength over latency.
    let explicit = build(Some(hashing::tier_file::ReferenceRow {
        caps: vec!["guest".to_owned()],
        ..reference
    }));
    assert_eq!(explicit.tiers["member"].spec, "bcrypt:11");
    assert_eq!(explicit.tiers["member"].budget_ms, 250.0);
}

#[test]
fn choose_caps_the_default_member_budget_and_keeps_one_given_explicitly() {
    let dir = tempfile::tempdir().unwrap();
    let tiers = dir.path().join("tiers.json");
    std::fs::write(&tiers, EMBEDDED).unwrap();
    let choose = |extra: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_calibrate"))
            .arg("choose")
            .args(extra)
            .arg("--out")
            .arg(&tiers)
            .arg("--report")
            .arg(dir.path().join("report.md"))
            .arg("--chart")
            .arg(dir.path().join("chart.svg"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        TierFile::parse(&std::fs::read_to_string(&tiers).unwrap()).unwrap()
    };
    let committed = TierFile::parse(EMBEDDED).unwrap();
    let again = choose(&[]);
    assert_eq!(again.tiers, committed.tiers, "the defaults choose what is committed");
    let strong = choose(&["--member-budget-ms", "250"]);
    let expected = model::choose_tier(&model::lambda_model(), &committed.table, 250.0).unwrap();
    assert_eq!(strong.tiers["member"], expected);
    assert_eq!(strong.reference.as_ref().unwrap().caps, ["guest"]);
    let cost = |spec: &str| match spec.parse() {
        Ok(Algorithm::Bcrypt { cost }) => cost,
        other => panic!("{spec}: {other:?}"),
    };
    assert!(
        cost(&strong.tiers["member"].spec) > cost(&committed.tiers["member"].spec),
        "250 ms buys a stronger member hash than the seed's baseline"
    );
}

#[test]
fn the_hashing_doc_shows_the_committed_timing_table() {
    let file = TierFile::parse(EMBEDDED).unwrap();
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/hashing.md")).unwrap();
    assert!(
        doc.contains(&calibrate::report::table(&file)),
        "docs/hashing.md's timing table differs from infra/tiers.json: paste the table from infra/timing-report.md"
    );
    for (name, tier) in &file.tiers {
        assert!(doc.contains(&format!("| {name} |")) && doc.contains(&format!("`{}`", tier.spec)));
    }
}

#[test]
fn from_logs_reads_the_emf_records_sam_logs_prints_and_recommends_tiers() {
    // What `sam logs` prints for two functions: START/END/REPORT lines, an
    // access log event and one EMF record per hash (hashing::timing).
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sam-logs-emf.txt");
    let out = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_calibrate"))
        .arg("from-logs")
        .arg(fixture)
        .arg("--out")
        .arg(out.path().join("tiers.json"))
        .arg("--report")
        .arg(out.path().join("report.md"))
        .arg("--chart")
        .arg(out.path().join("chart.svg"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("60 timing lines over 2 algorithms"), "{stderr}");
    assert!(stdout.contains("member: bcrypt:11"), "{stdout}");
    assert!(stdout.contains("guest: bcrypt:8"), "{stdout}");
    let file = TierFile::parse(&std::fs::read_to_string(out.path().join("tiers.json")).unwrap()).unwrap();
    assert_eq!(file.source, "logs");
    let row = |spec: &str| file.table.iter().find(|r| r.spec == spec).unwrap();
    assert_eq!(row("bcrypt:11").verify.samples, 20, "login's verifies");
    assert_eq!(row("bcrypt:8").hash.samples, 40, "guest-comment's hashes");
    let p95 = row("bcrypt:11").verify.p95_ms;
    assert!((140.0..155.0).contains(&p95), "verify P95 {p95} ms");
}
