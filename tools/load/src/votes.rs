//! `load votes`: `mixed` against `mixed-votes`, in alternating windows.

use std::time::Duration;

use crate::metrics::{Recorder, compare_markdown};
use crate::*;

/// One side of `load votes`: a scenario on a server of its own, seeded once.
pub(crate) struct Arm {
    label: &'static str,
    server: server::Spawned,
    prepared: Prepared,
    pooled: Recorder,
    wall: Duration,
    hashes_run: u64,
}

/// `load votes`: `mixed` and `mixed-votes` (and with `control` a second
/// `mixed`, the noise floor) on the same build, each on a server of its
/// own with the same settings, seeded once, then measured in `windows`
/// alternating windows that split `opts.seconds` per mix; every window's
/// requests pooled per mix (percentiles over all of them).
pub(crate) async fn votes(
    opts: &Opts,
    windows: usize,
    control: bool,
    together: bool,
    dynamodb: bool,
) -> anyhow::Result<()> {
    anyhow::ensure!(windows > 0, "--windows must be at least 1");
    let window = opts.seconds.div_ceil(windows as u64).max(1);
    let store = if dynamodb { "DynamoDB Local" } else { "SQLite" };
    let suffix = if dynamodb { "-dynamodb" } else { "" };
    let load_average = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    let mut sides = vec![("mixed", Scenario::Mixed), ("mixed-votes", Scenario::MixedVotes)];
    if control {
        sides.push(("mixed, again", Scenario::Mixed));
    }
    let mut arms = Vec::new();
    for (i, (label, scenario)) in sides.into_iter().enumerate() {
        // All trust the load generator's X-Forwarded-For: the same settings.
        let table = dynamodb.then(|| format!("load-votes-{}-{i}", std::process::id()));
        let server = start_server_from(&opts.server, opts, scenario, None, true, table).await?;
        eprintln!("{label}: {} on {}, {store}", opts.server.display(), server.base_url());
        let prepared = prepare(scenario, opts, &server.base_url()).await?;
        arms.push(Arm {
            label,
            server,
            prepared,
            pooled: Recorder::default(),
            wall: Duration::ZERO,
            hashes_run: 0,
        });
    }
    let mut summary = format!(
        "`load votes`: {} s per mix in {windows} {} windows of {window} s, {store}, {} servers of one build ({}), load average before: {}\n\n",
        window * windows as u64,
        if together { "simultaneous" } else { "alternating" },
        arms.len(),
        opts.server.display(),
        load_average()
    );
    let mut per_window = String::from("| window | first | ");
    per_window += &arms
        .iter()
        .map(|a| format!("{} avg / P99 ms", a.label))
        .collect::<Vec<_>>()
        .join(" | ");
    // Each window's ratio to mixed's in the same window: their median
    // shrugs off a window that a burst of other work hit.
    for arm in &arms[1..] {
        per_window += &format!(" | {} / mixed: avg, P99", arm.label);
    }
    per_window += " |\n|---|---|";
    per_window += &"---:|".repeat(2 * arms.len() - 1);
    per_window += "\n";
    let mut ratios: Vec<Vec<(f64, f64)>> = vec![Vec::new(); arms.len()];
    for w in 0..windows {
        let mut measured = Vec::new();
        if together {
            // Every mix at once: a burst of other work on the machine meets all alike.
            let all: &[Arm] = &arms;
            let arm = |i: usize| async move { measure(&all[i].prepared, opts, window, Some(&all[i].server)).await };
            let (first, second, third) = tokio::join!(arm(0), arm(1), async {
                if all.len() > 2 { Some(arm(2).await) } else { None }
            });
            measured.push((0, first?));
            measured.push((1, second?));
            if let Some(third) = third {
                measured.push((2, third?));
            }
        } else {
            // Rotate who goes first, so drift on the machine meets every mix alike.
            for k in 0..arms.len() {
                let i = (w + k) % arms.len();
                measured.push((
                    i,
                    measure(&arms[i].prepared, opts, window, Some(&arms[i].server)).await?,
                ));
            }
        }
        let mut figures = vec![String::new(); arms.len()];
        let mut whole = vec![(0.0, 0.0); arms.len()];
        for (i, (report, recorder)) in measured {
            let arm = &mut arms[i];
            arm.pooled.absorb(&recorder);
            arm.wall += Duration::from_secs_f64(report.seconds);
            arm.hashes_run += report.hashes_run.unwrap_or(0);
            whole[i] = report.row("all").map_or((0.0, 0.0), |r| (r.avg_ms, r.p99_ms));
            figures[i] = format!("{:.1} / {:.1}", whole[i].0, whole[i].1);
        }
        for i in 1..arms.len() {
            if whole[0].0 > 0.0 && whole[0].1 > 0.0 {
                let ratio = (whole[i].0 / whole[0].0, whole[i].1 / whole[0].1);
                ratios[i].push(ratio);
                figures.push(format!("{:.2}, {:.2}", ratio.0, ratio.1));
            } else {
                figures.push("-".into());
            }
        }
        let first = if together {
            "all at once"
        } else {
            arms[w % arms.len()].label
        };
        let line = format!("| {} | {first} | {} |\n", w + 1, figures.join(" | "));
        eprint!("{line}");
        per_window += &line;
    }
    let mut reports = Vec::new();
    for arm in &arms {
        let mut report = arm.pooled.report(arm.label, arm.wall);
        report.hashes_run = Some(arm.hashes_run);
        report.peak_rss_kib = arm.server.peak_rss_kib();
        report.votes = arm.prepared.check_votes().await?;
        reports.push(report);
    }
    summary += &format!("Each window's whole mix:\n\n{per_window}\n");
    for (arm, ratios) in arms.iter().zip(&ratios).skip(1) {
        let (avg, p99): (Vec<f64>, Vec<f64>) = ratios.iter().copied().unzip();
        summary += &format!(
            "Median of the windows' ratios, {} / mixed: average {:.3}, P99 {:.3}\n\n",
            arm.label,
            metrics::median(avg),
            metrics::median(p99)
        );
    }
    summary += &format!("Load average after: {}\n\n", load_average());
    let goals = metrics::within_five_percent(&reports[0], &reports[1], "mixed", "mixed-votes");
    let table = compare_markdown(&reports[0], &reports[1], "mixed", "mixed-votes");
    summary += &format!("### All windows pooled: the goal\n\n{goals}\n");
    // The voters' own requests, apart from what the machine did to the
    // rest: mixed's requests with its likers' swapped for mixed-votes'
    // voters' (the same group at the same pacing).
    let swapped = Recorder::default();
    swapped.absorb_where(&arms[0].pooled, |e| e != "like");
    swapped.absorb_where(&arms[1].pooled, |e| ["like", "dislike", "guest vote"].contains(&e));
    let swapped = swapped.report("mixed, voters swapped in", arms[0].wall);
    let direct = metrics::within_five_percent(&reports[0], &swapped, "mixed", "mixed, voters' requests swapped in");
    summary += &format!(
        "### The voters' own requests: mixed with its likers' requests swapped for mixed-votes' voters'\n\n{direct}\n"
    );
    if let Some(again) = reports.get(2) {
        let floor = metrics::within_five_percent(&reports[0], again, "mixed", "mixed, again");
        summary += &format!("### The noise floor: mixed beside itself, same windows\n\n{floor}\n");
    }
    summary += &format!("### Side by side\n\n{table}\n");
    for report in &reports {
        summary += &format!("{}\n", report.markdown());
    }
    println!("{summary}");
    let names = ["mixed", "mixed-votes", "mixed-again"];
    for (report, name) in reports.iter().zip(names) {
        write(&opts.out, &format!("votes{suffix}-{name}"), report)?;
    }
    std::fs::write(opts.out.join(format!("votes{suffix}.md")), summary)?;
    Ok(())
}
