//! The command line: its commands and the options they share.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::*;

#[derive(Parser)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
pub(crate) struct Opts {
    /// How long the measured part runs.
    #[arg(long, default_value_t = 30)]
    pub(crate) seconds: u64,
    /// Concurrent users (closed-loop scenarios).
    #[arg(long, default_value_t = 100)]
    pub(crate) users: usize,
    /// mixed and mixed-reads: the users' mean think time after each request. The
    /// default offers report 1's load: 100 users at about 37 requests/s
    /// (the report measured 35.1 before and 38.1 after).
    #[arg(long, default_value_t = 2700)]
    pub(crate) think_ms: u64,
    /// mixed-reads: the readers think as mixed's do (the baseline of mixed's read P99).
    #[arg(long)]
    pub(crate) paced: bool,
    /// reads: kept-alive connections, each sending its next request as soon
    /// as the last is answered (wrk's `-c`).
    #[arg(long, default_value_t = 500)]
    pub(crate) connections: usize,
    /// reads: then wrk (`wrk -t<cores> -c<connections> --latency`) on the
    /// same server and paths, phase by phase, beside the load tool's figures.
    #[arg(long)]
    pub(crate) wrk: bool,
    /// reads: send this `Accept-Encoding` with every request (e.g.
    /// `gzip, br`) to measure the compressed read path.
    #[arg(long)]
    pub(crate) accept_encoding: Option<String>,
    /// Arrivals per second (login-write).
    #[arg(long, default_value_t = 400.0)]
    pub(crate) rate: f64,
    /// login-attack and mixed: spread requests over many client IPs (X-Forwarded-For; the spawned server trusts it).
    #[arg(long)]
    pub(crate) many_ips: bool,
    /// Where the JSON and Markdown reports go.
    #[arg(long, default_value = "target/load")]
    pub(crate) out: PathBuf,
    /// HASH_QUEUE for a spawned server. Default: the server's own (64 per
    /// tier) for mixed and mixed-overload, whose shedding is part of what
    /// they measure; 256 for the others, big enough to hold every concurrent
    /// user so requests queue as in the field reports.
    #[arg(long)]
    pub(crate) hash_queue: Option<usize>,
    /// The hashing gate's weights for a spawned server, `member:guest`
    /// (default: the tier file's).
    #[arg(long)]
    pub(crate) gate_weights: Option<String>,
    /// The server binary for --spawn and compare.
    #[arg(long, default_value = "target/release/server")]
    pub(crate) server: PathBuf,
}

/// `POW` of a guest-flood server.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub(crate) enum PowMode {
    Off,
    Auto,
    Always,
}

impl PowMode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            PowMode::Off => "off",
            PowMode::Auto => "auto",
            PowMode::Always => "always",
        }
    }
}
