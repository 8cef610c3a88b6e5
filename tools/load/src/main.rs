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
mod cpu;
mod metrics;
mod phases;
mod pow;
mod scenarios;
mod server;
mod wire;
mod wrk;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};

use metrics::VoteCheck;
use metrics::{Recorder, Report, compare_markdown};
use scenarios::{Api, Extras, FloodRun, Groups, Pacing, Voting};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario against a base URL (or a server this tool starts with --spawn).
    Run {
        scenario: Scenario,
        #[command(flatten)]
        opts: Opts,
        /// Target URL; defaults to $API_URL, then http://127.0.0.1:3000.
        #[arg(long)]
        base_url: Option<String>,
        /// Start the release server with the measured tiers instead (reports hashes run and peak RSS).
        #[arg(long)]
        spawn: bool,
    },
    /// Run a scenario twice on a fresh local server: uniform bcrypt:10 (before), measured tiers (after).
    Compare {
        scenario: Scenario,
        #[command(flatten)]
        opts: Opts,
    },
    /// What moderation costs: `mixed` on `--baseline-server` (a build
    /// from before moderation; default: this one), then `mixed-moderated`
    /// on `--server`, side by side, with the goal (whole-mix average and
    /// P99 within 5%).
    Moderation {
        #[command(flatten)]
        opts: Opts,
        #[arg(long)]
        baseline_server: Option<PathBuf>,
    },
    /// What version 4's votes cost: `mixed` and `mixed-votes` on
    /// `--server`, each on a server of its own seeded once, measured in
    /// alternating windows (who goes first rotates, so drift on the
    /// machine meets both alike) that split `--seconds` per mix, then
    /// pooled side by side with the goal (whole-mix average and P99 within
    /// 5%).
    Votes {
        #[command(flatten)]
        opts: Opts,
        /// Windows per mix.
        #[arg(long, default_value_t = 6)]
        windows: usize,
        /// Also a second `mixed` on a third server, in the same rotation:
        /// mixed beside itself shows the noise floor of the run.
        #[arg(long)]
        control: bool,
        /// Measure the mixes at the same time in every window instead of
        /// one after the other: a burst of other work on the machine meets
        /// all of them alike (they share the cores with each other).
        #[arg(long)]
        together: bool,
        /// Each server on a table of its own on DynamoDB Local
        /// (`source scripts/dynamodb-local start` exports DYNAMODB_ENDPOINT).
        #[arg(long)]
        dynamodb: bool,
    },
    /// A spammer with `--addresses` client addresses posting as a guest
    /// as fast as it can (`--users` closed loops), on a server of its own
    /// per `--modes` (default POW=off, then POW=auto), side by side: accepted
    /// writes/s, 428s, 429s, and per accepted write the server's CPU and the
    /// flooder's solving CPU (it solves every 428 natively and sends again).
    GuestFlood {
        #[command(flatten)]
        opts: Opts,
        /// Client addresses the writes come from (X-Forwarded-For).
        #[arg(long, default_value_t = 1000)]
        addresses: usize,
        /// POW_MAXNUMBER of the servers (default: the server's own).
        #[arg(long)]
        pow_maxnumber: Option<u64>,
        /// Flooding first, unmeasured, on each server: POW=auto's free
        /// writes per address are used up before the clock starts.
        #[arg(long, default_value_t = 5)]
        warmup_seconds: u64,
        /// The servers' POW, one run each, in this order.
        #[arg(long, value_delimiter = ',', default_value = "off,auto")]
        modes: Vec<PowMode>,
    },
    /// Native proof-of-work solve times (one thread's CPU time per try, this build): local
    /// ALTCHA challenges per `--maxnumbers`, as a Markdown table, or JSON
    /// lines with `--json` (scripts/pow-solve-times puts them beside a
    /// browser's).
    SolveTimes {
        /// Difficulties, comma separated.
        #[arg(long, value_delimiter = ',', default_value = "50000,100000,200000,500000")]
        maxnumbers: Vec<u64>,
        /// Challenges solved per difficulty.
        #[arg(long, default_value_t = 200)]
        challenges: usize,
        #[arg(long)]
        json: bool,
    },
    /// Draw P50/P95/P99 per endpoint of two report JSON files as an SVG.
    Chart {
        before: PathBuf,
        after: PathBuf,
        out: PathBuf,
        #[arg(
            long,
            default_value = "latency percentiles, before (uniform bcrypt:10) and after (measured tiers)"
        )]
        title: String,
    },
}

#[derive(clap::Args, Clone)]
struct Opts {
    /// How long the measured part runs.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Concurrent users (closed-loop scenarios).
    #[arg(long, default_value_t = 100)]
    users: usize,
    /// mixed and mixed-reads: the users' mean think time after each request. The
    /// default offers report 1's load: 100 users at about 37 requests/s
    /// (the report measured 35.1 before and 38.1 after).
    #[arg(long, default_value_t = 2700)]
    think_ms: u64,
    /// mixed-reads: the readers think as mixed's do (the baseline of mixed's read P99).
    #[arg(long)]
    paced: bool,
    /// reads: kept-alive connections, each sending its next request as soon
    /// as the last is answered (wrk's `-c`).
    #[arg(long, default_value_t = 500)]
    connections: usize,
    /// reads: then wrk (`wrk -t<cores> -c<connections> --latency`) on the
    /// same server and paths, phase by phase, beside the load tool's figures.
    #[arg(long)]
    wrk: bool,
    /// reads: send this `Accept-Encoding` with every request (e.g.
    /// `gzip, br`) to measure the compressed read path.
    #[arg(long)]
    accept_encoding: Option<String>,
    /// Arrivals per second (login-write).
    #[arg(long, default_value_t = 400.0)]
    rate: f64,
    /// login-attack and mixed: spread requests over many client IPs (X-Forwarded-For; the spawned server trusts it).
    #[arg(long)]
    many_ips: bool,
    /// Where the JSON and Markdown reports go.
    #[arg(long, default_value = "target/load")]
    out: PathBuf,
    /// HASH_QUEUE for a spawned server. Default: the server's own (64 per
    /// tier) for mixed and mixed-overload, whose shedding is part of what
    /// they measure; 256 for the others, big enough to hold every concurrent
    /// user so requests queue as in the field reports.
    #[arg(long)]
    hash_queue: Option<usize>,
    /// The hashing gate's weights for a spawned server, `member:guest`
    /// (default: the tier file's).
    #[arg(long)]
    gate_weights: Option<String>,
    /// The server binary for --spawn and compare.
    #[arg(long, default_value = "target/release/server")]
    server: PathBuf,
}

/// `POW` of a guest-flood server.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum PowMode {
    Off,
    Auto,
    Always,
}

impl PowMode {
    fn name(self) -> &'static str {
        match self {
            PowMode::Off => "off",
            PowMode::Auto => "auto",
            PowMode::Always => "always",
        }
    }
}

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

/// One side of `load votes`: a scenario on a server of its own, seeded once.
struct Arm {
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
async fn votes(opts: &Opts, windows: usize, control: bool, together: bool, dynamodb: bool) -> anyhow::Result<()> {
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

/// `load guest-flood`: the flood on a fresh server per mode, side by side.
async fn guest_flood(
    opts: &Opts,
    addresses: usize,
    pow_maxnumber: Option<u64>,
    warmup_seconds: u64,
    modes: &[PowMode],
) -> anyhow::Result<()> {
    let load_average = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    let mut summary = format!(
        "`load guest-flood`: {} flooders from {addresses} addresses, {} s measured after {warmup_seconds} s unmeasured, \
         one SQLite server per mode ({}), POW_MAXNUMBER {}, load average before: {}\n\n",
        opts.users,
        opts.seconds,
        opts.server.display(),
        pow_maxnumber.map_or("the server's default".to_owned(), |n| n.to_string()),
        load_average()
    );
    let mut runs = Vec::new();
    let mut reports = Vec::new();
    for mode in modes {
        let label = format!("POW={}", mode.name());
        let server = server::Spawned::start(
            &opts.server,
            server::Settings {
                tiers: None,
                trust_proxy: true,
                hash_queue: opts.hash_queue.or(Some(256)),
                gate_weights: opts.gate_weights.as_deref(),
                table: None,
                pow: Some(server::Pow {
                    mode: mode.name(),
                    maxnumber: pow_maxnumber,
                }),
            },
        )
        .await?;
        eprintln!("{label}: {} on {}", opts.server.display(), server.base_url());
        if warmup_seconds > 0 {
            let warmup = Api::new(&server.base_url(), Arc::new(Recorder::default()));
            scenarios::guest_flood(warmup, opts.users, addresses, warmup_seconds).await;
        }
        let recorder = Arc::new(Recorder::default());
        let api = Api::new(&server.base_url(), recorder.clone());
        eprintln!("{label}: flooding for {} s", opts.seconds);
        let hashes_before = server.hashes_run();
        let before = cpu::sample(Some(server.pid()));
        let started = Instant::now();
        let totals = scenarios::guest_flood(api, opts.users, addresses, opts.seconds).await;
        let wall = started.elapsed();
        let (load_cpu_seconds, server_cpu_seconds) = cpu::seconds_used(before, cpu::sample(Some(server.pid())));
        let mut report = recorder.report(&label, wall);
        report.hashes_run = Some(server.hashes_run() - hashes_before);
        report.peak_rss_kib = server.peak_rss_kib();
        reports.push(report);
        runs.push(FloodRun {
            label,
            seconds: wall.as_secs_f64(),
            totals,
            server_cpu_seconds,
            load_cpu_seconds,
        });
    }
    summary += &scenarios::flood_markdown(&runs);
    summary += &format!("\nLoad average after: {}\n\n", load_average());
    for report in &reports {
        summary += &format!("{}\n", report.markdown());
    }
    println!("{summary}");
    write_files(&opts.out, "guest-flood", &runs, &summary)
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
