//! `guest-flood`: a spammer with many client addresses posting as a guest
//! as fast as it can. Every `428 pow_required` is solved with the native
//! solver (one blocking thread per solve, at most one per core) and the
//! write sent again with `X-Pow`, so what proof of work costs the flooder
//! is counted beside what each accepted write costs the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::RngExt as _;
use reqwest::Method;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::api::Call;
use super::{Api, GUEST_PASSWORD, users};
use crate::cpu;
use crate::pow::Challenge;

/// What a flood's answers were, counted as they come.
#[derive(Default)]
struct Counters {
    accepted: AtomicU64,
    pow_required: AtomicU64,
    /// 428s to a write that carried a solution: a solver or server fault.
    refused_with_proof: AtomicU64,
    rate_limited: AtomicU64,
    unavailable: AtomicU64,
    other: AtomicU64,
    unanswered: AtomicU64,
    solves: AtomicU64,
    /// 428s whose challenge had no solution (or no challenge).
    unsolved: AtomicU64,
    solve_cpu_nanos: AtomicU64,
}

/// A flood's totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub(crate) struct FloodTotals {
    pub accepted: u64,
    pub pow_required: u64,
    pub refused_with_proof: u64,
    pub rate_limited: u64,
    pub unavailable: u64,
    pub other: u64,
    pub unanswered: u64,
    pub solves: u64,
    pub unsolved: u64,
    pub solve_cpu_seconds: f64,
}

impl Counters {
    fn totals(&self) -> FloodTotals {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        FloodTotals {
            accepted: get(&self.accepted),
            pow_required: get(&self.pow_required),
            refused_with_proof: get(&self.refused_with_proof),
            rate_limited: get(&self.rate_limited),
            unavailable: get(&self.unavailable),
            other: get(&self.other),
            unanswered: get(&self.unanswered),
            solves: get(&self.solves),
            unsolved: get(&self.unsolved),
            solve_cpu_seconds: get(&self.solve_cpu_nanos) as f64 / 1e9,
        }
    }
}

/// `users` closed-loop flooders for `seconds`, each write from a random one
/// of `addresses` client addresses (`X-Forwarded-For`: the server must
/// trust the load generator as its proxy).
pub(crate) async fn guest_flood(api: Api, users_count: usize, addresses: usize, seconds: u64) -> FloodTotals {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let counters = Arc::new(Counters::default());
    // Solving is CPU work: at most one solve per core at a time.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let solvers = Arc::new(Semaphore::new(cores));
    users(users_count, deadline, |_| {
        let (api, counters, solvers) = (api.clone(), counters.clone(), solvers.clone());
        async move {
            let mut written = 0u64;
            while Instant::now() < deadline {
                written += 1;
                let from = api.as_user_ip(rand::rng().random_range(0..addresses.max(1)));
                write_until_answered(&from, written, &counters, &solvers, deadline).await;
            }
        }
    })
    .await;
    counters.totals()
}

/// One guest post: sent, and while the answer is `428`, its challenge
/// solved and the post sent again with the solution.
async fn write_until_answered(api: &Api, n: u64, counters: &Counters, solvers: &Semaphore, deadline: Instant) {
    let body = json!({"nickname": "flood", "password": GUEST_PASSWORD, "title": format!("flood {n}"), "body": "a flood of guest posts"});
    let mut proof: Option<String> = None;
    loop {
        let headers: Vec<(&str, &str)> = proof.iter().map(|p| ("x-pow", p.as_str())).collect();
        let answer = api
            .call_with_headers(
                Call {
                    endpoint: if proof.is_some() {
                        "guest post with X-Pow"
                    } else {
                        "guest post"
                    },
                    method: Method::POST,
                    path: "/boards/free/posts/guest".into(),
                    token: None,
                    body: Some(body.clone()),
                    forwarded_for: None,
                    expected: &[201, 428],
                },
                &headers,
            )
            .await;
        let counter = match &answer {
            Some((201, _)) => &counters.accepted,
            Some((428, _)) => &counters.pow_required,
            Some((429, _)) => &counters.rate_limited,
            Some((503, _)) => &counters.unavailable,
            Some(_) => &counters.other,
            None => &counters.unanswered,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let Some((428, refusal)) = answer else {
            if answer.is_none() {
                // Not answered (refused connection, timeout): no busy loop.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            return;
        };
        if proof.is_some() {
            counters.refused_with_proof.fetch_add(1, Ordering::Relaxed);
        }
        if Instant::now() >= deadline {
            return;
        }
        match solve(&refusal, solvers).await {
            Some((header, cpu_time)) => {
                counters.solves.fetch_add(1, Ordering::Relaxed);
                counters
                    .solve_cpu_nanos
                    .fetch_add(cpu_time.as_nanos() as u64, Ordering::Relaxed);
                proof = Some(header);
            }
            None => {
                counters.unsolved.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }
}

/// The `X-Pow` for a `428`'s challenge and the CPU time finding it took,
/// on a blocking thread (the runtime's threads keep sending meanwhile).
async fn solve(refusal: &Value, solvers: &Semaphore) -> Option<(String, Duration)> {
    let challenge: Challenge = serde_json::from_value(refusal.get("challenge")?.clone()).ok()?;
    let _core = solvers.acquire().await.ok()?;
    tokio::task::spawn_blocking(move || {
        let before = cpu::this_thread();
        let solution = challenge.solve()?;
        // The thread's own CPU time; its wall time where the kernel does not say.
        let cpu_time = match (before, cpu::this_thread()) {
            (Some(before), Some(after)) => after.saturating_sub(before),
            _ => solution.took,
        };
        Some((challenge.x_pow(solution), cpu_time))
    })
    .await
    .ok()?
}

/// One side of `load guest-flood`, measured.
#[derive(Debug, serde::Serialize)]
pub(crate) struct FloodRun {
    pub label: String,
    pub seconds: f64,
    pub totals: FloodTotals,
    /// CPU seconds the server used over the measured part.
    pub server_cpu_seconds: Option<f64>,
    /// CPU seconds the load tool used (solving, sending, reading).
    pub load_cpu_seconds: Option<f64>,
}

impl FloodRun {
    fn per_write_ms(&self, seconds: Option<f64>) -> String {
        match seconds {
            Some(s) if self.totals.accepted > 0 => format!("{:.2}", s * 1000.0 / self.totals.accepted as f64),
            _ => "-".into(),
        }
    }
}

/// The runs side by side, one column each.
pub(crate) fn flood_markdown(runs: &[FloodRun]) -> String {
    let mut out = String::from("| | ");
    out += &runs.iter().map(|r| r.label.as_str()).collect::<Vec<_>>().join(" | ");
    out += " |\n|---|";
    out += &"---:|".repeat(runs.len());
    out += "\n";
    let mut row = |name: &str, cell: &dyn Fn(&FloodRun) -> String| {
        out += &format!(
            "| {name} | {} |\n",
            runs.iter().map(cell).collect::<Vec<_>>().join(" | ")
        );
    };
    row("accepted writes/s", &|r| {
        format!("{:.1}", r.totals.accepted as f64 / r.seconds.max(f64::EPSILON))
    });
    row("accepted writes", &|r| r.totals.accepted.to_string());
    row("428 pow_required", &|r| r.totals.pow_required.to_string());
    row("428 to a write with X-Pow", &|r| {
        r.totals.refused_with_proof.to_string()
    });
    row("429", &|r| r.totals.rate_limited.to_string());
    row("503", &|r| r.totals.unavailable.to_string());
    row("other statuses, unanswered", &|r| {
        format!("{}, {}", r.totals.other, r.totals.unanswered)
    });
    row("server CPU ms per accepted write", &|r| {
        r.per_write_ms(r.server_cpu_seconds)
    });
    row("flooder solve CPU ms per accepted write", &|r| {
        r.per_write_ms(Some(r.totals.solve_cpu_seconds))
    });
    row("flooder CPU ms per accepted write (all of it)", &|r| {
        r.per_write_ms(r.load_cpu_seconds)
    });
    row("solves (mean CPU ms)", &|r| match r.totals.solves {
        0 => "0".into(),
        n => format!("{n} ({:.2})", r.totals.solve_cpu_seconds * 1000.0 / n as f64),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, accepted: u64, solve_cpu_seconds: f64, server_cpu_seconds: Option<f64>) -> FloodRun {
        FloodRun {
            label: label.into(),
            seconds: 10.0,
            totals: FloodTotals {
                accepted,
                solves: accepted,
                solve_cpu_seconds,
                ..FloodTotals::default()
            },
            server_cpu_seconds,
            load_cpu_seconds: None,
        }
    }

    #[test]
    fn the_table_puts_the_runs_side_by_side_per_accepted_write() {
        let table = flood_markdown(&[
            run("POW=off", 500, 0.0, Some(5.0)),
            run("POW=auto", 100, 0.5, Some(2.0)),
        ]);
        assert!(
            table.starts_with("| | POW=off | POW=auto |\n|---|---:|---:|\n"),
            "{table}"
        );
        assert!(table.contains("| accepted writes/s | 50.0 | 10.0 |"), "{table}");
        assert!(
            table.contains("| server CPU ms per accepted write | 10.00 | 20.00 |"),
            "{table}"
        );
        assert!(
            table.contains("| flooder solve CPU ms per accepted write | 0.00 | 5.00 |"),
            "{table}"
        );
        // Without a server CPU reading, or without a write, there is no figure.
        let unknown = flood_markdown(&[run("a", 0, 0.0, Some(1.0)), run("b", 3, 0.0, None)]);
        assert!(
            unknown.contains("| server CPU ms per accepted write | - | - |"),
            "{unknown}"
        );
    }

    #[test]
    fn a_refusal_without_a_challenge_is_not_solved() {
        let solvers = Semaphore::new(1);
        let runtime = tokio::runtime::Builder::new_multi_thread().build().expect("a runtime");
        let refusal = json!({"error": {"code": "pow_required", "message": "m"}});
        assert!(runtime.block_on(solve(&refusal, &solvers)).is_none());
    }

    #[test]
    fn a_refusals_challenge_is_solved_into_its_header() {
        let solvers = Semaphore::new(1);
        let runtime = tokio::runtime::Builder::new_multi_thread().build().expect("a runtime");
        let challenge = crate::pow::local_challenge(4_242, 10_000);
        let refusal = json!({
            "error": {"code": "pow_required", "message": "m"},
            "challenge": {
                "algorithm": challenge.algorithm,
                "challenge": challenge.challenge,
                "salt": challenge.salt,
                "signature": "s",
                "maxnumber": challenge.maxnumber,
            },
        });
        let (header, _cpu) = runtime.block_on(solve(&refusal, &solvers)).expect("solved");
        use base64::Engine as _;
        let payload: Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(header)
                .expect("base64"),
        )
        .expect("JSON");
        assert_eq!(payload["number"], 4_242);
        assert_eq!(payload["signature"], "s");
    }
}
