//! Per-endpoint latency histograms and status counts, and the end-of-run table.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

#[derive(Default)]
pub(crate) struct Recorder {
    endpoints: Mutex<BTreeMap<&'static str, Endpoint>>,
}

struct Endpoint {
    latency_us: Histogram<u64>,
    errors: u64,
    statuses: BTreeMap<u16, u64>,
}

impl Recorder {
    /// One request: `ok` says whether its status was one the scenario expects.
    pub(crate) fn record(&self, endpoint: &'static str, elapsed: Duration, status: Option<u16>, ok: bool) {
        let mut endpoints = self.endpoints.lock().unwrap();
        let e = endpoints.entry(endpoint).or_insert_with(|| Endpoint {
            latency_us: Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid bounds"),
            errors: 0,
            statuses: BTreeMap::new(),
        });
        e.latency_us.saturating_record(elapsed.as_micros().max(1) as u64);
        *e.statuses.entry(status.unwrap_or(0)).or_default() += 1;
        if !ok {
            e.errors += 1;
        }
    }

    /// Adds every request `other` recorded (several runs pooled into one
    /// report, percentiles over all their requests).
    pub(crate) fn absorb(&self, other: &Recorder) {
        self.absorb_where(other, |_| true);
    }

    /// Adds the requests `other` recorded under the endpoints `keep` takes.
    pub(crate) fn absorb_where(&self, other: &Recorder, keep: impl Fn(&str) -> bool) {
        let theirs = other.endpoints.lock().unwrap();
        let mut ours = self.endpoints.lock().unwrap();
        for (name, e) in theirs.iter().filter(|(name, _)| keep(name)) {
            let mine = ours.entry(name).or_insert_with(|| Endpoint {
                latency_us: Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid bounds"),
                errors: 0,
                statuses: BTreeMap::new(),
            });
            mine.latency_us.add(&e.latency_us).expect("same bounds");
            mine.errors += e.errors;
            for (status, n) in &e.statuses {
                *mine.statuses.entry(*status).or_default() += n;
            }
        }
    }

    pub(crate) fn report(&self, scenario: &str, wall: Duration) -> Report {
        let endpoints = self.endpoints.lock().unwrap();
        let mut all = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).expect("valid bounds");
        let mut rows: Vec<Row> = endpoints
            .iter()
            .map(|(name, e)| {
                all.add(&e.latency_us).expect("same bounds");
                row(name, &e.latency_us, e.errors, wall, e.statuses.clone())
            })
            .collect();
        let errors = rows.iter().map(|r| r.errors).sum();
        let statuses = rows.iter().fold(BTreeMap::new(), |mut acc, r| {
            for (s, n) in &r.statuses {
                *acc.entry(*s).or_default() += n;
            }
            acc
        });
        rows.push(row("all", &all, errors, wall, statuses));
        Report {
            scenario: scenario.to_owned(),
            seconds: wall.as_secs_f64(),
            rows,
            hashes_run: None,
            hashes_batched: None,
            batch_plan: None,
            peak_rss_kib: None,
            votes: None,
        }
    }
}

fn ms(us: u64) -> f64 {
    (us as f64 / 1000.0 * 10.0).round() / 10.0
}

fn row(name: &str, h: &Histogram<u64>, errors: u64, wall: Duration, statuses: BTreeMap<u16, u64>) -> Row {
    Row {
        endpoint: name.to_owned(),
        requests: h.len(),
        errors,
        avg_ms: ms(h.mean() as u64),
        p50_ms: ms(h.value_at_quantile(0.50)),
        p95_ms: ms(h.value_at_quantile(0.95)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        max_ms: ms(h.max()),
        rps: (h.len() as f64 / wall.as_secs_f64() * 10.0).round() / 10.0,
        statuses,
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub endpoint: String,
    pub requests: u64,
    pub errors: u64,
    pub avg_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub rps: f64,
    pub statuses: BTreeMap<u16, u64>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    pub scenario: String,
    pub seconds: f64,
    pub rows: Vec<Row>,
    /// Hashes and verifies the server ran (counted from its log, when this tool started it).
    pub hashes_run: Option<u64>,
    /// Of those, the ones that ran in a bcrypt batch of two or more,
    /// and the batch plan the server measured at start (its log line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hashes_batched: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_plan: Option<String>,
    /// Peak resident memory of the server (when this tool started it).
    pub peak_rss_kib: Option<u64>,
    /// mixed-votes: the posts' counts and best marks checked after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub votes: Option<VoteCheck>,
}

impl Report {
    pub(crate) fn markdown(&self) -> String {
        let mut md = format!("Scenario `{}`, {:.0} s\n\n", self.scenario, self.seconds);
        md += "| endpoint | requests | errors | avg ms | P50 ms | P95 ms | P99 ms | max ms | req/s | statuses |\n";
        md += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
        for r in &self.rows {
            let statuses: Vec<String> = r.statuses.iter().map(|(s, n)| format!("{s}: {n}")).collect();
            md += &format!(
                "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} |\n",
                r.endpoint,
                r.requests,
                r.errors,
                r.avg_ms,
                r.p50_ms,
                r.p95_ms,
                r.p99_ms,
                r.max_ms,
                r.rps,
                statuses.join(", ")
            );
        }
        if let Some(h) = self.hashes_run {
            md += &format!("\nHashes and verifies run by the server: {h}\n");
        }
        if let Some(b) = self.hashes_batched {
            md += &format!("\nOf them, in bcrypt batches of two or more: {b}\n");
        }
        if let Some(plan) = &self.batch_plan {
            md += &format!("\nThe server's batch plan: {plan}\n");
        }
        if let Some(kib) = self.peak_rss_kib {
            md += &format!("\nServer peak RSS: {:.1} MB\n", kib as f64 / 1024.0);
        }
        if let Some(votes) = &self.votes {
            md += &votes.markdown();
        }
        md
    }

    pub(crate) fn row(&self, endpoint: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.endpoint == endpoint)
    }
}

/// Before and after side by side, with the change in percent (report 1's tables).
pub(crate) fn compare_markdown(before: &Report, after: &Report, before_label: &str, after_label: &str) -> String {
    let mut md = format!("| endpoint | metric | {before_label} | {after_label} | change |\n|---|---|---:|---:|---:|\n");
    for b in &before.rows {
        let Some(a) = after.row(&b.endpoint) else { continue };
        for (metric, x, y) in [
            ("requests", b.requests as f64, a.requests as f64),
            ("errors", b.errors as f64, a.errors as f64),
            ("avg ms", b.avg_ms, a.avg_ms),
            ("P95 ms", b.p95_ms, a.p95_ms),
            ("P99 ms", b.p99_ms, a.p99_ms),
            ("req/s", b.rps, a.rps),
        ] {
            let change = if x == 0.0 {
                "-".to_owned()
            } else {
                format!("{:+.0}%", (y - x) / x * 100.0)
            };
            md += &format!("| {} | {metric} | {x} | {y} | {change} |\n", b.endpoint);
        }
    }
    md
}

/// The requests and average latency of several endpoints together.
fn combined_avg(report: &Report, endpoints: &[&str]) -> f64 {
    let (n, sum) = endpoints
        .iter()
        .filter_map(|e| report.row(e))
        .fold((0u64, 0.0), |(n, sum), r| {
            (n + r.requests, sum + r.avg_ms * r.requests as f64)
        });
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// Errors other than 503 (the documented shedding of hashing work).
fn errors_not_shedding(report: &Report) -> u64 {
    report.row("all").map_or(0, |r| {
        let shed = r.statuses.get(&503).copied().unwrap_or(0);
        r.errors.saturating_sub(shed)
    })
}

fn change(before: f64, after: f64) -> f64 {
    if before == 0.0 {
        0.0
    } else {
        (after - before) / before * 100.0
    }
}

fn met(ok: bool) -> &'static str {
    if ok { "yes" } else { "**no**" }
}

/// Issue 25's goal: with 1% reports and the ban check on every write,
/// the whole mix's average and P99 stay within 5% of the baseline's.
pub(crate) fn moderation_goals(baseline: &Report, moderated: &Report) -> String {
    within_five_percent(baseline, moderated, "baseline mixed", "mixed-moderated")
}

/// The whole mix's average and P99 of `changed` within 5% of `baseline`'s,
/// with the ratio, and no errors in either (issue 25's goal for
/// moderation, issue 41's for votes).
pub(crate) fn within_five_percent(baseline: &Report, changed: &Report, baseline_label: &str, label: &str) -> String {
    let (Some(b), Some(m)) = (baseline.row("all"), changed.row("all")) else {
        return "no requests were recorded\n".into();
    };
    let within = |x: f64, y: f64| x > 0.0 && y <= x * 1.05;
    let mut md =
        format!("| goal | {baseline_label} | {label} | ratio | change | met |\n|---|---:|---:|---:|---:|---|\n");
    for (goal, x, y) in [
        ("whole-mix average within 5%", b.avg_ms, m.avg_ms),
        ("whole-mix P99 within 5%", b.p99_ms, m.p99_ms),
    ] {
        md += &format!(
            "| {goal} | {x:.1} ms | {y:.1} ms | {:.3} | {:+.1}% | {} |\n",
            y / x,
            (y / x - 1.0) * 100.0,
            met(within(x, y))
        );
    }
    md += &format!(
        "| errors | {} | {} | | | {} |\n",
        b.errors,
        m.errors,
        met(b.errors == 0 && m.errors == 0)
    );
    md
}

/// The middle value (the mean of the two middle ones for an even count;
/// NaN for none).
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Issue 15's goals for report 1's mix, measured: at the offered load
/// (`overload` false) and under overload.
pub(crate) fn mixed_goals(before: &Report, after: &Report, reads_alone: &Report, overload: bool) -> String {
    let all = |r: &Report| r.row("all").cloned();
    let (Some(b), Some(a)) = (all(before), all(after)) else {
        return "no requests were recorded\n".into();
    };
    let read_p99 = |r: &Report| r.row("read post").map_or(0.0, |r| r.p99_ms);
    let alone = read_p99(reads_alone);
    let read_ratio = |r: &Report| {
        if alone == 0.0 {
            f64::INFINITY
        } else {
            read_p99(r) / alone
        }
    };
    let guest = ["guest post", "guest comment"];
    let (guest_b, guest_a) = (combined_avg(before, &guest), combined_avg(after, &guest));
    let (login_b, login_a) = (
        combined_avg(before, &["member login"]),
        combined_avg(after, &["member login"]),
    );
    let mut md =
        String::from("| goal | uniform bcrypt:10 | default tiers | measured | met |\n|---|---:|---:|---|---|\n");
    let mut line = |goal: &str, x: String, y: String, measured: String, ok: bool| {
        md += &format!("| {goal} | {x} | {y} | {measured} | {} |\n", met(ok));
    };
    if overload {
        let (eb, ea) = (errors_not_shedding(before), errors_not_shedding(after));
        let shed = |r: &Report| r.row("all").and_then(|r| r.statuses.get(&503).copied()).unwrap_or(0);
        line(
            "only documented 503 shedding (other errors)",
            eb.to_string(),
            ea.to_string(),
            format!("503s: {} / {}", shed(before), shed(after)),
            eb == 0 && ea == 0,
        );
    } else {
        line(
            "0 errors of any status",
            b.errors.to_string(),
            a.errors.to_string(),
            format!("{} / {} requests", b.requests, a.requests),
            b.errors == 0 && a.errors == 0,
        );
    }
    let guest_change = change(guest_b, guest_a);
    let login_ratio = if login_b == 0.0 {
        f64::INFINITY
    } else {
        login_a / login_b
    };
    let avg_change = change(b.avg_ms, a.avg_ms);
    let goals_apply = !overload;
    line(
        if goals_apply {
            "guest write average at least 57% better"
        } else {
            "guest write average"
        },
        format!("{guest_b:.1} ms"),
        format!("{guest_a:.1} ms"),
        format!("{guest_change:+.0}%"),
        !goals_apply || guest_change <= -57.0,
    );
    line(
        if goals_apply {
            "member login average at most x1.10"
        } else {
            "member login average"
        },
        format!("{login_b:.1} ms"),
        format!("{login_a:.1} ms"),
        format!("x{login_ratio:.2}"),
        !goals_apply || login_ratio <= 1.10,
    );
    line(
        if goals_apply {
            "whole-mix average at least 52% better"
        } else {
            "whole-mix average"
        },
        format!("{:.1} ms", b.avg_ms),
        format!("{:.1} ms", a.avg_ms),
        format!("{avg_change:+.0}%"),
        !goals_apply || avg_change <= -52.0,
    );
    line(
        if goals_apply {
            "whole-mix P99 no worse"
        } else {
            "whole-mix P99"
        },
        format!("{:.1} ms", b.p99_ms),
        format!("{:.1} ms", a.p99_ms),
        format!("{:+.0}%", change(b.p99_ms, a.p99_ms)),
        !goals_apply || a.p99_ms <= b.p99_ms,
    );
    line(
        "read P99 at most 2x reads alone",
        format!("{:.1} ms (x{:.2})", read_p99(before), read_ratio(before)),
        format!("{:.1} ms (x{:.2})", read_p99(after), read_ratio(after)),
        format!("alone {alone:.1} ms"),
        read_ratio(after) <= 2.0,
    );
    md
}

/// What the vote scenario's check after a run found (`scenarios::Voting::check`).
#[derive(Default, Debug, Clone, serde::Serialize)]
pub(crate) struct VoteCheck {
    pub posts_voted: u64,
    /// Of them, marked best after the run (none was before it).
    pub best: u64,
    /// Posts left out of the count check: one of their votes had no answer or an error.
    pub unsure: u64,
    /// Counts or best marks that differ from what the answers said.
    pub findings: Vec<String>,
}

impl VoteCheck {
    pub(crate) fn markdown(&self) -> String {
        let mut md = format!(
            "\nVotes checked after the run: {} posts voted on, {} of them best (none was before), counts of {} compared with the answers ({} left out: a vote without a clear answer): {}\n",
            self.posts_voted,
            self.best,
            self.posts_voted - self.unsure,
            self.unsure,
            if self.findings.is_empty() {
                "all as the answers said"
            } else {
                "**differences**"
            }
        );
        for finding in &self.findings {
            md += &format!("- {finding}\n");
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_count_errors_percentiles_and_rates_per_endpoint_and_overall() {
        let recorder = Recorder::default();
        for ms in 1..=100u64 {
            recorder.record("read post", Duration::from_millis(ms), Some(200), true);
        }
        recorder.record("guest post", Duration::from_millis(500), Some(503), false);
        let report = recorder.report("mixed", Duration::from_secs(10));
        let read = report.row("read post").unwrap();
        assert_eq!((read.requests, read.errors), (100, 0));
        assert!(
            (read.p50_ms - 50.0).abs() < 0.5 && (read.p99_ms - 99.0).abs() < 0.5,
            "{read:?}"
        );
        assert_eq!(read.rps, 10.0);
        let all = report.row("all").unwrap();
        assert_eq!((all.requests, all.errors), (101, 1));
        assert_eq!(all.statuses[&503], 1);
        assert!((all.max_ms - 500.0).abs() < 1.0);
        assert!(report.markdown().contains("| guest post | 1 | 1 |"));
    }

    #[test]
    fn the_compare_table_shows_the_change_in_percent() {
        let before = Recorder::default();
        let after = Recorder::default();
        before.record("guest post", Duration::from_millis(100), Some(201), true);
        after.record("guest post", Duration::from_millis(40), Some(201), true);
        let table = compare_markdown(
            &before.report("x", Duration::from_secs(1)),
            &after.report("x", Duration::from_secs(1)),
            "before",
            "after",
        );
        assert!(table.contains("| guest post | avg ms | 100 | 40 | -60% |"), "{table}");
    }

    #[test]
    fn pooled_runs_count_every_request_and_take_percentiles_over_all_of_them() {
        let (one, two, pooled) = (Recorder::default(), Recorder::default(), Recorder::default());
        for ms in 1..=50u64 {
            one.record("like", Duration::from_millis(ms), Some(200), true);
            two.record("like", Duration::from_millis(ms + 50), Some(200), true);
        }
        two.record("guest vote", Duration::from_millis(3), Some(403), false);
        pooled.absorb(&one);
        pooled.absorb(&two);
        let only_votes = Recorder::default();
        only_votes.absorb_where(&two, |e| e == "guest vote");
        let only = only_votes.report("x", Duration::from_secs(1));
        assert_eq!(
            only.rows.iter().map(|r| r.endpoint.as_str()).collect::<Vec<_>>(),
            ["guest vote", "all"]
        );
        let report = pooled.report("mixed-votes", Duration::from_secs(2));
        let like = report.row("like").unwrap();
        assert_eq!((like.requests, like.errors), (100, 0));
        assert!(
            (like.p50_ms - 50.0).abs() < 0.5 && (like.p99_ms - 99.0).abs() < 0.5,
            "{like:?}"
        );
        let all = report.row("all").unwrap();
        assert_eq!((all.requests, all.errors, all.statuses[&403]), (101, 1, 1));
    }

    #[test]
    fn the_five_percent_goal_gives_the_ratio_and_fails_past_it() {
        let baseline = run(&[("read post", 10, 200), ("guest post", 100, 201)]);
        let close = run(&[("read post", 10, 200), ("guest post", 104, 201)]);
        let goals = within_five_percent(&baseline, &close, "mixed", "mixed-votes");
        assert!(
            goals.contains("| whole-mix average within 5% | 55.0 ms | 57.0 ms | 1.036 | +3.6% | yes |"),
            "{goals}"
        );
        let slow = run(&[("read post", 10, 200), ("guest post", 120, 201)]);
        let goals = within_five_percent(&baseline, &slow, "mixed", "mixed-votes");
        let line = goals.lines().find(|l| l.contains("average")).unwrap();
        assert!(line.ends_with("| **no** |"), "{line}");
        let failing = run(&[("read post", 10, 200), ("guest vote", 1, 403)]);
        let goals = within_five_percent(&baseline, &failing, "mixed", "mixed-votes");
        let line = goals.lines().find(|l| l.starts_with("| errors")).unwrap();
        assert!(line.ends_with("| **no** |"), "{line}");
    }

    #[test]
    fn the_median_ignores_one_window_a_burst_hit() {
        assert_eq!(median(vec![1.02, 0.98, 3.5, 1.0, 0.97]), 1.0);
        assert_eq!(median(vec![1.0, 2.0, 9.0, 1.5]), 1.75);
        assert!(median(Vec::new()).is_nan());
    }

    fn run(rows: &[(&'static str, u64, u16)]) -> Report {
        let recorder = Recorder::default();
        for &(endpoint, ms, status) in rows {
            let ok = matches!(status, 200 | 201);
            recorder.record(endpoint, Duration::from_millis(ms), Some(status), ok);
        }
        recorder.report("mixed", Duration::from_secs(1))
    }

    #[test]
    fn mixed_goals_are_met_only_when_every_figure_is_within_its_bound() {
        let before = run(&[
            ("guest post", 200, 201),
            ("guest comment", 200, 201),
            ("member login", 100, 200),
            ("read post", 4, 200),
        ]);
        let alone = run(&[("read post", 4, 200)]);
        let good = run(&[
            ("guest post", 40, 201),
            ("guest comment", 40, 201),
            ("member login", 105, 200),
            ("read post", 6, 200),
        ]);
        let goals = mixed_goals(&before, &good, &alone, false);
        assert!(!goals.contains("**no**"), "{goals}");
        assert!(
            goals.contains("| guest write average at least 57% better | 200.0 ms | 40.0 ms | -80% | yes |"),
            "{goals}"
        );

        let slow_login = run(&[
            ("guest post", 40, 201),
            ("guest comment", 40, 201),
            ("member login", 120, 200),
            ("read post", 9, 503),
        ]);
        let goals = mixed_goals(&before, &slow_login, &alone, false);
        for goal in ["0 errors", "member login average at most x1.10", "read P99 at most 2x"] {
            let line = goals.lines().find(|l| l.contains(goal)).unwrap();
            assert!(line.ends_with("| **no** |"), "{line}");
        }
        // Under overload a 503 is shedding, not an error.
        let goals = mixed_goals(&before, &slow_login, &alone, true);
        let line = goals.lines().find(|l| l.contains("only documented 503")).unwrap();
        assert!(line.ends_with("| yes |"), "{line}");
    }
}
