//! `cargo run --release -p load -- run mixed --base-url http://127.0.0.1:3000`
//! `cargo run --release -p load -- compare mixed`   (uniform bcrypt:10 vs the measured tiers)
//!
//! `cargo run --release -p load -- moderation --baseline-server <v2 server>`
//!   (mixed on the baseline vs mixed-moderated on this build)
//!
//! `cargo run --release -p load -- votes --seconds 60 --windows 6 [--control] [--dynamodb]`
//!   (mixed vs mixed-votes on one build, alternating windows, pooled)
//!
//! `cargo run --release -p load -- guest-flood --seconds 30 [--pow-maxnumber N]`
//!   (a guest-post flood from many addresses on POW=off and POW=auto, side by side)
//!
//! `cargo run --release -p load -- solve-times --challenges 200`
//!   (native proof-of-work solve times per difficulty)
//!
//! Scenarios: mixed (report 1 at its offered load), mixed-overload (the same
//! users without think time), mixed-moderated (mixed with 1% reports on a
//! board with 40 bans, every write checked), mixed-votes (mixed whose
//! likers like, dislike, withdraw and vote as guests, some posts crossing
//! best_likes, the counts checked after the run), mixed-reads (mixed's readers
//! alone), login-write, signup, login-attack, hot-post; and reads (wrk's
//! way, 500 kept-alive connections without think time, `/health`, board
//! pages, one hot post and their mix back to back, each against `/health`).
//! Every run is bounded by `--seconds` and ends with a table per endpoint
//! (per phase for reads), also written as JSON and Markdown under `--out`.

mod chart;
mod cli;
mod cpu;
mod flood;
mod metrics;
mod phases;
mod pow;
mod scenarios;
mod server;
mod votes;
mod wire;
mod wrk;

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};

use metrics::VoteCheck;
use metrics::{Recorder, Report, compare_markdown};
use scenarios::{Api, Extras, Groups, Pacing, Voting};

use cli::{Cli, Command, Opts, PowMode};
use flood::guest_flood;
use votes::votes;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum Scenario {
    Mixed,
    MixedOverload,
    MixedModerated,
    MixedVotes,
    MixedReads,
    Reads,
    LoginWrite,
    Signup,
    LoginAttack,
    HotPost,
}

impl Scenario {
    fn is_mixed(self) -> bool {
        matches!(
            self,
            Scenario::Mixed | Scenario::MixedOverload | Scenario::MixedModerated | Scenario::MixedVotes
        )
    }

    /// Paced like report 1's users.
    fn paced(self) -> bool {
        matches!(self, Scenario::Mixed | Scenario::MixedModerated | Scenario::MixedVotes)
    }

    /// Its users write `X-Forwarded-For` of their own (bans seeded from
    /// addresses, guest votes from many), so a spawned server trusts it.
    fn needs_trusted_proxy(self) -> bool {
        matches!(self, Scenario::MixedModerated | Scenario::MixedVotes)
    }

    /// `mixed` thinks; `mixed-reads` only with `--paced` (mixed's readers
    /// alone); the rest run closed loops.
    fn pacing(self, opts: &Opts) -> Pacing {
        let thinks = opts.think_ms > 0 && (self.paced() || (self == Scenario::MixedReads && opts.paced));
        if thinks {
            Pacing::Think {
                mean: Duration::from_millis(opts.think_ms),
            }
        } else {
            Pacing::Closed
        }
    }

    fn name(self) -> &'static str {
        match self {
            Scenario::Mixed => "mixed",
            Scenario::MixedOverload => "mixed-overload",
            Scenario::MixedModerated => "mixed-moderated",
            Scenario::MixedVotes => "mixed-votes",
            Scenario::MixedReads => "mixed-reads",
            Scenario::Reads => "reads",
            Scenario::LoginWrite => "login-write",
            Scenario::Signup => "signup",
            Scenario::LoginAttack => "login-attack",
            Scenario::HotPost => "hot-post",
        }
    }
}

/// Seeds, runs the scenario, and reports; `server` (when this tool started
/// it) adds the hashes it ran and its peak memory.
async fn run(
    scenario: Scenario,
    opts: &Opts,
    base_url: &str,
    server: Option<&server::Spawned>,
) -> anyhow::Result<Report> {
    Ok(run_recorded(scenario, opts, base_url, server).await?.0)
}

/// [`run`], with the recorder of the measured requests (to pool runs).
async fn run_recorded(
    scenario: Scenario,
    opts: &Opts,
    base_url: &str,
    server: Option<&server::Spawned>,
) -> anyhow::Result<(Report, Arc<Recorder>)> {
    let prepared = prepare(scenario, opts, base_url).await?;
    let (mut report, recorder) = measure(&prepared, opts, opts.seconds, server).await?;
    report.votes = prepared.check_votes().await?;
    Ok((report, recorder))
}

/// A scenario seeded on its server, ready to be measured once or in
/// several windows.
struct Prepared {
    scenario: Scenario,
    base_url: String,
    run_id: String,
    seed: Arc<scenarios::Seed>,
    /// mixed-votes: what the voters' answers said, across every window.
    voting: Option<Arc<Voting>>,
}

impl Prepared {
    /// mixed-votes: every voted post's counts and best mark against the answers.
    async fn check_votes(&self) -> anyhow::Result<Option<VoteCheck>> {
        match &self.voting {
            Some(voting) => Ok(Some(voting.check(&self.base_url, &self.seed.posts).await?)),
            None => Ok(None),
        }
    }
}

/// Seeds what `scenario` acts on (before any clock starts).
async fn prepare(scenario: Scenario, opts: &Opts, base_url: &str) -> anyhow::Result<Prepared> {
    anyhow::ensure!(
        scenario != Scenario::Reads,
        "reads reports per phase and compares with /health itself: `load run reads`"
    );
    let run_id = format!("{}", std::process::id() % 10_000 + rand::random::<u32>() % 10_000);
    let seed_api = Api::new(base_url, Arc::new(Recorder::default()));
    let (members, posts) = match scenario {
        Scenario::Signup => (1, 1),
        Scenario::LoginAttack => (20, 1),
        _ if scenario.is_mixed() => (Groups::of(opts.users).accounts(), 50),
        _ => (20, 50),
    };
    eprintln!("seeding {members} members and {posts} posts on {base_url}");
    let seed = Arc::new(scenarios::seed(&seed_api, members, posts, &run_id).await?);
    if scenario == Scenario::MixedModerated {
        let bans = scenarios::seed_bans(&seed_api, &run_id, 20, 20).await?;
        eprintln!("seeded {bans} bans on free");
    }
    let voting = (scenario == Scenario::MixedVotes).then(|| Arc::new(Voting::new(seed.posts.len())));
    Ok(Prepared {
        scenario,
        base_url: base_url.to_owned(),
        run_id,
        seed,
        voting,
    })
}

/// Runs the prepared scenario for `seconds` and reports it; `server` (when
/// this tool started it) adds the hashes it ran and its peak memory.
async fn measure(
    prepared: &Prepared,
    opts: &Opts,
    seconds: u64,
    server: Option<&server::Spawned>,
) -> anyhow::Result<(Report, Arc<Recorder>)> {
    let Prepared {
        scenario,
        base_url,
        run_id,
        seed,
        voting,
    } = prepared;
    let (scenario, seed) = (*scenario, seed.clone());
    let hashes_before = server.map(server::Spawned::hashes_run);
    let batched_before = server.map(server::Spawned::hashes_batched);
    let recorder = Arc::new(Recorder::default());
    let api = Api::new(base_url, recorder.clone());
    eprintln!("running {} for {seconds} s", scenario.name());
    let started = Instant::now();
    match scenario {
        Scenario::Mixed | Scenario::MixedOverload | Scenario::MixedModerated | Scenario::MixedVotes => {
            let extras = Extras {
                report_share: if scenario == Scenario::MixedModerated {
                    0.01
                } else {
                    0.0
                },
                voting: voting.clone(),
            };
            let groups = Groups::of(opts.users);
            scenarios::mixed(api, seed, groups, scenario.pacing(opts), seconds, opts.many_ips, extras).await
        }
        Scenario::MixedReads => scenarios::mixed_reads(api, seed, opts.users, scenario.pacing(opts), seconds).await,
        Scenario::Reads => unreachable!("prepare refuses it"),
        Scenario::LoginWrite => scenarios::login_write(api, seed, opts.rate, seconds).await,
        Scenario::Signup => scenarios::signup(api, run_id.clone(), opts.users, seconds).await,
        Scenario::LoginAttack => scenarios::login_attack(api, seed, opts.users, seconds, opts.many_ips).await,
        Scenario::HotPost => scenarios::hot_post(api, seed, opts.users, seconds).await,
    }
    let label = if opts.many_ips && (scenario == Scenario::LoginAttack || scenario.is_mixed()) {
        format!("{} (many IPs)", scenario.name())
    } else {
        scenario.name().to_owned()
    };
    let mut report = recorder.report(&label, started.elapsed());
    if let Some(server) = server {
        report.hashes_run = Some(server.hashes_run() - hashes_before.unwrap_or(0));
        report.hashes_batched = Some(server.hashes_batched() - batched_before.unwrap_or(0));
        report.batch_plan = server.batch_plan();
        report.peak_rss_kib = server.peak_rss_kib();
    }
    Ok((report, recorder))
}

/// Starts the release server for `scenario` with `tiers` (member, guest), or
/// the tier file's when `None`.
async fn start_server(opts: &Opts, scenario: Scenario, tiers: Option<(&str, &str)>) -> anyhow::Result<server::Spawned> {
    start_server_from(&opts.server, opts, scenario, tiers, opts.many_ips, None).await
}

async fn start_server_from(
    binary: &std::path::Path,
    opts: &Opts,
    scenario: Scenario,
    tiers: Option<(&str, &str)>,
    trust_proxy: bool,
    table: Option<String>,
) -> anyhow::Result<server::Spawned> {
    let hash_queue = opts.hash_queue.or((!scenario.is_mixed()).then_some(256));
    server::Spawned::start(
        binary,
        server::Settings {
            tiers,
            trust_proxy: trust_proxy || scenario.needs_trusted_proxy(),
            hash_queue,
            gate_weights: opts.gate_weights.as_deref(),
            table,
            pow: None,
        },
    )
    .await
}

fn write(out: &std::path::Path, name: &str, report: &Report) -> anyhow::Result<()> {
    write_files(out, name, report, &report.markdown())
}

fn write_files(out: &std::path::Path, name: &str, json: &impl serde::Serialize, markdown: &str) -> anyhow::Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(
        out.join(format!("{name}.json")),
        serde_json::to_string_pretty(json)? + "\n",
    )?;
    std::fs::write(out.join(format!("{name}.md")), markdown)?;
    Ok(())
}

/// `reads`: its phases on `base`, with the spawned server's peak memory.
async fn run_reads(opts: &Opts, base: &str, server: Option<&server::Spawned>) -> anyhow::Result<()> {
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    let run_id = format!("{}", std::process::id() % 10_000 + rand::random::<u32>() % 10_000);
    let server_pid = server.map(server::Spawned::pid);
    let mut report = scenarios::reads(
        base,
        opts.accept_encoding.as_deref(),
        opts.connections,
        opts.seconds,
        opts.wrk,
        &run_id,
        server_pid,
    )
    .await?;
    report.load_average = load_average;
    report.peak_rss_kib = server.and_then(server::Spawned::peak_rss_kib);
    let markdown = report.markdown();
    println!("{markdown}");
    write_files(&opts.out, "reads", &report, &markdown)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Run {
            scenario,
            opts,
            base_url,
            spawn,
        } => {
            let spawned = if spawn {
                Some(start_server(&opts, scenario, None).await?)
            } else {
                None
            };
            let base = match &spawned {
                Some(s) => s.base_url(),
                None => base_url
                    .or_else(|| std::env::var("API_URL").ok())
                    .unwrap_or_else(|| "http://127.0.0.1:3000".into()),
            };
            if scenario == Scenario::Reads {
                run_reads(&opts, &base, spawned.as_ref()).await?;
            } else {
                let report = run(scenario, &opts, &base, spawned.as_ref()).await?;
                println!("{}", report.markdown());
                write(&opts.out, scenario.name(), &report)?;
            }
        }
        Command::Moderation { opts, baseline_server } => {
            let baseline = baseline_server.unwrap_or_else(|| opts.server.clone());
            let mut reports = Vec::new();
            // Both servers trust the load generator's X-Forwarded-For (the
            // bans are seeded from addresses of their own): the same settings.
            for (label, binary, scenario) in [
                ("mixed, baseline", &baseline, Scenario::Mixed),
                ("mixed-moderated", &opts.server, Scenario::MixedModerated),
            ] {
                let server = start_server_from(binary, &opts, scenario, None, true, None).await?;
                eprintln!("{label}: {} on {}", binary.display(), server.base_url());
                let report = run(scenario, &opts, &server.base_url(), Some(&server)).await?;
                println!("## {label}\n\n{}", report.markdown());
                reports.push(report);
            }
            let table = compare_markdown(&reports[0], &reports[1], "mixed, baseline", "mixed-moderated");
            let goals = metrics::moderation_goals(&reports[0], &reports[1]);
            println!("## moderation: goals\n\n{goals}\n## side by side\n\n{table}");
            write(&opts.out, "moderation-baseline", &reports[0])?;
            write(&opts.out, "moderation-moderated", &reports[1])?;
            std::fs::write(opts.out.join("moderation.md"), format!("{goals}\n{table}"))?;
        }
        Command::Votes {
            opts,
            windows,
            control,
            together,
            dynamodb,
        } => votes(&opts, windows, control, together, dynamodb).await?,
        Command::GuestFlood {
            opts,
            addresses,
            pow_maxnumber,
            warmup_seconds,
            modes,
        } => guest_flood(&opts, addresses, pow_maxnumber, warmup_seconds, &modes).await?,
        Command::SolveTimes {
            maxnumbers,
            challenges,
            json,
        } => {
            if !json {
                println!(
                    "| maxnumber | challenges | mean ms | P50 ms | P90 ms | max ms | CPU µs per try |\n|---:|---:|---:|---:|---:|---:|---:|"
                );
            }
            for maxnumber in maxnumbers {
                let times = pow::solve_times(maxnumber, challenges)?;
                if json {
                    println!("{}", serde_json::to_string(&times)?);
                } else {
                    println!(
                        "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.3} |",
                        times.maxnumber,
                        times.challenges,
                        times.mean_ms,
                        times.p50_ms,
                        times.p90_ms,
                        times.max_ms,
                        times.us_per_try
                    );
                }
            }
        }
        Command::Chart {
            before,
            after,
            out,
            title,
        } => chart::percentiles(&before, &after, &out, &title)?,
        Command::Compare { scenario, opts } => {
            anyhow::ensure!(
                scenario != Scenario::Reads,
                "reads compares its phases with /health in one run: `load run reads`"
            );
            let mut reports = Vec::new();
            for (label, tiers) in [
                ("uniform bcrypt:10", Some(("bcrypt:10", "bcrypt:10"))),
                ("default tiers", None),
            ] {
                let server = start_server(&opts, scenario, tiers).await?;
                eprintln!("{label}: server on {}", server.base_url());
                let report = run(scenario, &opts, &server.base_url(), Some(&server)).await?;
                println!("## {label}\n\n{}", report.markdown());
                reports.push(report);
            }
            let table = compare_markdown(&reports[0], &reports[1], "uniform bcrypt:10", "default tiers");
            println!("## {} before/after\n\n{table}", scenario.name());
            let name = format!(
                "compare-{}{}",
                scenario.name(),
                if opts.many_ips { "-many-ips" } else { "" }
            );
            write(&opts.out, &format!("{name}-before"), &reports[0])?;
            write(&opts.out, &format!("{name}-after"), &reports[1])?;
            let mut summary = table;
            if scenario.is_mixed() {
                // The baseline for the read P99: the same readers, alone, same pacing.
                let readers = Opts {
                    users: Groups::of(opts.users).readers,
                    paced: scenario == Scenario::Mixed,
                    ..opts.clone()
                };
                let server = start_server(&readers, Scenario::MixedReads, None).await?;
                eprintln!("reads alone: server on {}", server.base_url());
                let alone = run(Scenario::MixedReads, &readers, &server.base_url(), Some(&server)).await?;
                write(&opts.out, &format!("{name}-reads-alone"), &alone)?;
                let goals = metrics::mixed_goals(&reports[0], &reports[1], &alone, scenario == Scenario::MixedOverload);
                println!("## goals\n\n{goals}");
                summary = format!("{goals}\n{summary}");
            }
            std::fs::write(opts.out.join(format!("{name}.md")), summary)?;
        }
    }
    Ok(())
}
