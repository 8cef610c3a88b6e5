//! The `reads` scenario's report: one row per phase (`/health`, board
//! pages, one hot post, the mix), each with its ratio to `/health`'s
//! requests per second, wrk's figures beside ours when it ran, and issue
//! 39's goal for the mix.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// The phase every other is measured against: the HTTP stack's ceiling.
pub(crate) const HEALTH: &str = "/health";
/// The phase the goal is about.
pub(crate) const MIX: &str = "mix";

/// What one connection saw in one phase: a latency per answered request
/// (kept as raw microseconds, merged into a histogram at the end, so a
/// request costs a push), its statuses (0: no answer) and errors (any
/// status but 200).
#[derive(Default, Clone)]
pub(crate) struct Tally {
    latencies_us: Vec<u32>,
    statuses: BTreeMap<u16, u64>,
    errors: u64,
}

impl Tally {
    pub(crate) fn record(&mut self, elapsed: Duration, status: Option<u16>) {
        self.latencies_us
            .push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX).max(1));
        *self.statuses.entry(status.unwrap_or(0)).or_default() += 1;
        if status != Some(200) {
            self.errors += 1;
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Phase {
    pub phase: String,
    pub requests: u64,
    pub errors: u64,
    pub rps: f64,
    pub avg_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Empty for wrk, which counts only non-2xx answers and socket errors.
    pub statuses: BTreeMap<u16, u64>,
    /// This phase's requests/s over `/health`'s in the same run.
    pub ratio_to_health: Option<f64>,
    /// Cores the load tool and the server kept busy while it was measured
    /// (1.0: one core; the load tool's unknown for wrk, the server's when
    /// this tool did not start it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_cpu_cores: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu_cores: Option<f64>,
}

fn ms(us: f64) -> f64 {
    (us / 1000.0 * 10.0).round() / 10.0
}

impl Phase {
    /// The phase's figures from every connection's tally over `wall`.
    pub(crate) fn summarize<'a>(phase: &str, tallies: impl IntoIterator<Item = &'a Tally>, wall: Duration) -> Phase {
        let mut latency = Histogram::<u64>::new_with_bounds(1, u64::from(u32::MAX), 3).expect("valid bounds");
        let mut statuses = BTreeMap::new();
        let mut errors = 0;
        for tally in tallies {
            for &us in &tally.latencies_us {
                latency.saturating_record(u64::from(us));
            }
            for (status, n) in &tally.statuses {
                *statuses.entry(*status).or_default() += n;
            }
            errors += tally.errors;
        }
        Phase {
            phase: phase.to_owned(),
            requests: latency.len(),
            errors,
            rps: (latency.len() as f64 / wall.as_secs_f64()).round(),
            avg_ms: ms(latency.mean()),
            p50_ms: ms(latency.value_at_quantile(0.50) as f64),
            p99_ms: ms(latency.value_at_quantile(0.99) as f64),
            max_ms: ms(latency.max() as f64),
            statuses,
            ratio_to_health: None,
            load_cpu_cores: None,
            server_cpu_cores: None,
        }
    }
}

/// Sets every phase's ratio to the `/health` phase's requests/s (none
/// when `/health` is missing or answered nothing).
pub(crate) fn with_ratios(mut phases: Vec<Phase>) -> Vec<Phase> {
    let health = phases.iter().find(|p| p.phase == HEALTH).map(|p| p.rps);
    for phase in &mut phases {
        phase.ratio_to_health = health
            .filter(|&h| h > 0.0)
            .map(|h| (phase.rps / h * 100.0).round() / 100.0);
    }
    phases
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReadsReport {
    pub scenario: String,
    pub base_url: String,
    pub connections: usize,
    /// The `Accept-Encoding` every request sent (`--accept-encoding`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_encoding: Option<String>,
    pub seconds_per_phase: f64,
    pub warmup_seconds: f64,
    pub mix: String,
    pub phases: Vec<Phase>,
    /// Connections still waiting for an answer when the run ended (their
    /// request is in no phase's figures).
    pub unfinished: usize,
    /// wrk on the same server and paths right after ours (`--wrk`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrk: Option<Vec<Phase>>,
    pub peak_rss_kib: Option<u64>,
    pub load_average: Option<String>,
}

/// Issue 39's goal for the read mix at 500 connections: at least half of
/// `/health`'s requests/s, P99 at most 50 ms, no errors.
pub(crate) fn mix_goal_met(phases: &[Phase]) -> Option<bool> {
    let mix = phases.iter().find(|p| p.phase == MIX)?;
    Some(mix.ratio_to_health? >= 0.5 && mix.p99_ms <= 50.0 && mix.errors == 0)
}

fn table(phases: &[Phase]) -> String {
    let mut md = String::from(
        "| phase | requests | errors | req/s | x /health | avg ms | P50 ms | P99 ms | max ms | generator CPU | server CPU | statuses |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for p in phases {
        let statuses: Vec<String> = p.statuses.iter().map(|(s, n)| format!("{s}: {n}")).collect();
        let ratio = p.ratio_to_health.map_or("-".to_owned(), |r| format!("{r:.2}"));
        let cores = |c: Option<f64>| c.map_or("-".to_owned(), |c| format!("{c:.2}"));
        md += &format!(
            "| {} | {} | {} | {:.0} | {ratio} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {} |\n",
            p.phase,
            p.requests,
            p.errors,
            p.rps,
            p.avg_ms,
            p.p50_ms,
            p.p99_ms,
            p.max_ms,
            cores(p.load_cpu_cores),
            cores(p.server_cpu_cores),
            statuses.join(", ")
        );
    }
    md
}

impl ReadsReport {
    pub(crate) fn markdown(&self) -> String {
        let mut md = format!(
            "Scenario `{}` on {}: {} kept-alive connections, no think time, {:.0} s per phase after {:.0} s of warm-up, {}\n\n",
            self.scenario,
            self.base_url,
            self.connections,
            self.seconds_per_phase,
            self.warmup_seconds,
            if self.wrk.is_some() {
                "each phase followed by wrk's run of it"
            } else {
                "back to back"
            }
        );
        md += &format!("The mix: {}\n\n", self.mix);
        if let Some(codings) = &self.accept_encoding {
            md += &format!("Every request sent `Accept-Encoding: {codings}`.\n\n");
        }
        if let Some(load) = &self.load_average {
            md += &format!("Load average before the run: {load}\n\n");
        }
        md += "### load\n\n";
        md += &table(&self.phases);
        if self.unfinished > 0 {
            md += &format!("\nConnections without an answer at the end: {}\n", self.unfinished);
        }
        if let Some(wrk) = &self.wrk {
            md += "\n### wrk, same server, same paths, each phase right after the load tool's\n\n";
            md += &table(wrk);
            md += "\n| phase | load req/s | wrk req/s | load / wrk |\n|---|---:|---:|---:|\n";
            for ours in &self.phases {
                if let Some(theirs) = wrk.iter().find(|w| w.phase == ours.phase) {
                    let ratio = if theirs.rps > 0.0 {
                        format!("{:.2}", ours.rps / theirs.rps)
                    } else {
                        "-".to_owned()
                    };
                    md += &format!("| {} | {:.0} | {:.0} | {ratio} |\n", ours.phase, ours.rps, theirs.rps);
                }
            }
        }
        if let Some(met) = mix_goal_met(&self.phases) {
            md += &format!(
                "\nGoal (issue 39): the mix at least 0.5 x /health's requests/s, P99 at most 50 ms, no errors: {}\n",
                if met && self.unfinished == 0 {
                    "met"
                } else {
                    "**not met**"
                }
            );
        }
        if let Some(kib) = self.peak_rss_kib {
            md += &format!("\nServer peak RSS: {:.1} MB\n", kib as f64 / 1024.0);
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &str, requests: u32, latency_ms: u64, status: u16) -> Phase {
        let mut tally = Tally::default();
        for _ in 0..requests {
            tally.record(Duration::from_millis(latency_ms), Some(status));
        }
        Phase::summarize(name, [&tally], Duration::from_secs(10))
    }

    #[test]
    fn a_phase_merges_its_connections_and_counts_every_status_but_200_as_an_error() {
        let mut one = Tally::default();
        let mut two = Tally::default();
        for ms in 1..=50u64 {
            one.record(Duration::from_millis(ms), Some(200));
            two.record(Duration::from_millis(ms + 50), Some(200));
        }
        two.record(Duration::from_millis(5), Some(503));
        two.record(Duration::from_millis(5), None);
        let p = Phase::summarize("board pages", [&one, &two], Duration::from_secs(2));
        assert_eq!((p.requests, p.errors, p.rps), (102, 2, 51.0));
        assert_eq!(p.statuses, BTreeMap::from([(0, 1), (200, 100), (503, 1)]));
        assert!((p.p50_ms - 50.0).abs() <= 1.0 && (p.p99_ms - 99.0).abs() < 0.5, "{p:?}");
        assert!((p.max_ms - 100.0).abs() < 0.5, "{p:?}");
    }

    #[test]
    fn every_phase_gets_its_ratio_to_health() {
        let phases = with_ratios(vec![
            phase(HEALTH, 4000, 1, 200),
            phase("board pages", 1000, 5, 200),
            phase(MIX, 2000, 4, 200),
        ]);
        let ratios: Vec<_> = phases.iter().map(|p| p.ratio_to_health).collect();
        assert_eq!(ratios, vec![Some(1.0), Some(0.25), Some(0.5)]);
        assert_eq!(mix_goal_met(&phases), Some(true));
    }

    #[test]
    fn without_health_there_is_no_ratio_and_no_verdict() {
        let phases = with_ratios(vec![phase(MIX, 10, 1, 200)]);
        assert_eq!(phases[0].ratio_to_health, None);
        assert_eq!(mix_goal_met(&phases), None);
    }

    #[test]
    fn the_goal_fails_on_a_low_ratio_a_slow_p99_or_any_error() {
        let health = || phase(HEALTH, 4000, 1, 200);
        let slow = with_ratios(vec![health(), phase(MIX, 3000, 60, 200)]);
        assert_eq!(mix_goal_met(&slow), Some(false));
        let few = with_ratios(vec![health(), phase(MIX, 1000, 2, 200)]);
        assert_eq!(mix_goal_met(&few), Some(false));
        let mut failing = phase(MIX, 3000, 2, 200);
        failing.errors = 1;
        assert_eq!(mix_goal_met(&with_ratios(vec![health(), failing])), Some(false));
    }

    #[test]
    fn the_markdown_shows_the_ratio_and_compares_with_wrk() {
        let phases = with_ratios(vec![phase(HEALTH, 4000, 1, 200), phase(MIX, 1000, 5, 200)]);
        let wrk = with_ratios(vec![phase(HEALTH, 8000, 1, 200)]);
        let report = ReadsReport {
            scenario: "reads".into(),
            base_url: "http://127.0.0.1:1".into(),
            connections: 500,
            accept_encoding: Some("gzip, br".into()),
            seconds_per_phase: 10.0,
            warmup_seconds: 2.0,
            mix: "half and half".into(),
            phases,
            unfinished: 0,
            wrk: Some(wrk),
            peak_rss_kib: None,
            load_average: None,
        };
        let md = report.markdown();
        assert!(md.contains("| mix | 1000 | 0 | 100 | 0.25 |"), "{md}");
        assert!(md.contains("| /health | 400 | 800 | 0.50 |"), "{md}");
        assert!(md.contains("**not met**"), "{md}");
        assert!(md.contains("`Accept-Encoding: gzip, br`"), "{md}");
    }
}
