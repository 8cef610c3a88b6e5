//! Reads at the machine's limit, as wrk measures them: `connections`
//! kept-alive HTTP/1.1 connections, each sending its next request as soon
//! as the last is answered, through four phases back to back on the same
//! server and the same connections: `/health` (the HTTP stack's ceiling),
//! board pages alone, one hot post's detail alone, and the mix; each phase
//! warms up, then measures for `seconds`. With wrk, wrk runs each phase
//! right after it, on the same paths, while the connections wait.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Api, seed, seed_comments};
use crate::cpu;
use crate::phases::{self, HEALTH, MIX, Phase, ReadsReport, Tally};
use crate::wire::{self, Connection};
use crate::wrk;

/// Posts seeded on the board, and comments on each.
const POSTS: usize = 200;
const COMMENTS_PER_POST: usize = 3;
/// Board pages after the first one, followed by `next_cursor`.
const CURSOR_PAGES: usize = 4;
/// The posts most of the mix's details go to.
const HOT_SET: usize = 10;
/// Each phase's unmeasured start: connections settle on the new paths.
const WARMUP: Duration = Duration::from_secs(2);
/// How long past the end a connection may still wait for its answer.
const GRACE: Duration = Duration::from_secs(10);
/// wrk's run beyond its `-d` (connecting, printing), within its pause.
const WRK_SLACK: Duration = Duration::from_secs(3);

pub(crate) const MIX_DESCRIPTION: &str = "half board pages, half post details. Board pages: half the \
     first page (20 summaries), half one of the next 4 pages by cursor. Details: half one of a hot set \
     of 10 posts, half one of all 200 seeded posts (3 comments each); every detail counts a view";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Health,
    BoardPages,
    HotPost,
    Mix,
}

const PHASES: [(Kind, &str); 4] = [
    (Kind::Health, HEALTH),
    (Kind::BoardPages, "board pages"),
    (Kind::HotPost, "one hot post"),
    (Kind::Mix, MIX),
];

/// The paths each phase asks for, and their requests built once.
struct Targets {
    health: String,
    /// The first page, then pages by cursor.
    pages: Vec<String>,
    /// The hot set; its first post is the one hot post.
    hot: Vec<String>,
    all_posts: Vec<String>,
    requests: Requests,
}

struct Requests {
    health: Box<[u8]>,
    pages: Vec<Box<[u8]>>,
    hot: Vec<Box<[u8]>>,
    all_posts: Vec<Box<[u8]>>,
}

impl Targets {
    fn new(host: &str, accept_encoding: Option<&str>, pages: Vec<String>, posts: &[String]) -> Self {
        let details: Vec<String> = posts.iter().map(|p| format!("/boards/free/posts/{p}")).collect();
        let hot: Vec<String> = details.iter().take(HOT_SET).cloned().collect();
        let build = |paths: &[String]| {
            paths
                .iter()
                .map(|p| wire::get_request(host, p, accept_encoding))
                .collect()
        };
        Targets {
            requests: Requests {
                health: wire::get_request(host, "/health", accept_encoding),
                pages: build(&pages),
                hot: build(&hot),
                all_posts: build(&details),
            },
            health: "/health".into(),
            pages,
            hot,
            all_posts: details,
        }
    }

    fn pick(&self, kind: Kind, rng: &mut Rng) -> &[u8] {
        let r = &self.requests;
        match kind {
            Kind::Health => &r.health,
            Kind::BoardPages => self.page(rng),
            Kind::HotPost => &r.hot[0],
            Kind::Mix => {
                if rng.below(2) == 0 {
                    self.page(rng)
                } else if rng.below(2) == 0 {
                    &r.hot[rng.below(r.hot.len())]
                } else {
                    &r.all_posts[rng.below(r.all_posts.len())]
                }
            }
        }
    }

    fn page(&self, rng: &mut Rng) -> &[u8] {
        let pages = &self.requests.pages;
        if pages.len() == 1 || rng.below(2) == 0 {
            &pages[0]
        } else {
            &pages[1 + rng.below(pages.len() - 1)]
        }
    }

    /// The same choice as `pick`, for wrk's script.
    fn wrk_paths(&self, kind: Kind) -> wrk::Paths<'_> {
        let (first, by_cursor) = self.pages.split_at(1);
        let by_cursor = if by_cursor.is_empty() { first } else { by_cursor };
        match kind {
            Kind::Health => wrk::Paths::One(&self.health),
            Kind::HotPost => wrk::Paths::One(&self.hot[0]),
            Kind::BoardPages => wrk::Paths::Weighted(vec![(0.5, first), (0.5, by_cursor)]),
            Kind::Mix => wrk::Paths::Weighted(vec![
                (0.25, first),
                (0.25, by_cursor),
                (0.25, &self.hot),
                (0.25, &self.all_posts),
            ]),
        }
    }
}

/// xorshift64*: a connection's own generator, free of locks and thread
/// locals, so picking a path costs nanoseconds.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32;
        ((x * n as u64) >> 32) as usize
    }
}

/// When each phase warms up, measures, and pauses (while wrk runs the same
/// phase, so both see the server in the same state), the same for every
/// connection.
struct Schedule {
    start: Instant,
    warmup: Duration,
    measure: Duration,
    pause: Duration,
}

impl Schedule {
    fn slot(&self) -> Duration {
        self.warmup + self.measure + self.pause
    }

    fn slot_start(&self, i: usize) -> Instant {
        self.start + self.slot() * i as u32
    }

    /// The phase at `t`, and whether it is paused then.
    fn phase_at(&self, t: Instant) -> Option<(usize, bool)> {
        let since = t.saturating_duration_since(self.start);
        let i = (since.as_nanos() / self.slot().as_nanos()) as usize;
        let paused = t >= self.measure_end(i);
        (i < PHASES.len()).then_some((i, paused))
    }

    /// Whether an answer at `t` counts for phase `i`: in its measured window.
    fn measures(&self, i: usize, t: Instant) -> bool {
        t >= self.slot_start(i) + self.warmup && t < self.measure_end(i)
    }

    fn measure_end(&self, i: usize) -> Instant {
        self.slot_start(i) + self.warmup + self.measure
    }

    fn end(&self) -> Instant {
        self.slot_start(PHASES.len())
    }
}

/// Seeds, then runs the four phases, each followed (with `with_wrk`) by
/// wrk on the same paths; every request with `accept_encoding` when given
/// (the answers are read to their end, never decoded).
pub(crate) async fn reads(
    base_url: &str,
    accept_encoding: Option<&str>,
    connections: usize,
    seconds: u64,
    with_wrk: bool,
    run_id: &str,
    server_pid: Option<u32>,
) -> anyhow::Result<ReadsReport> {
    let host = wire::authority(base_url)?;
    let addr: SocketAddr = tokio::net::lookup_host(host)
        .await?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{host} resolves to no address"))?;
    let api = Api::new(base_url, Arc::default());
    eprintln!("seeding {POSTS} posts with {COMMENTS_PER_POST} comments each on {base_url}");
    let seeded = seed(&api, 4, POSTS, run_id).await?;
    seed_comments(&api, &seeded.tokens, &seeded.posts, COMMENTS_PER_POST).await?;
    // Newest first: the hot set is the newest posts, on the first page.
    let newest_first: Vec<String> = seeded.posts.iter().rev().cloned().collect();
    let targets = Arc::new(Targets::new(
        host,
        accept_encoding,
        board_pages(&api).await?,
        &newest_first,
    ));

    eprintln!("opening {connections} connections");
    let mut opening = tokio::task::JoinSet::new();
    for _ in 0..connections {
        opening.spawn(Connection::open(addr));
    }
    let mut open = Vec::with_capacity(connections);
    while let Some(connection) = opening.join_next().await {
        open.push(connection?.map_err(|e| {
            anyhow::anyhow!(
                "opening connection {} of {connections}: {e} (a server's per-address cap, MAX_CONNECTIONS_PER_ADDRESS, must allow them all)",
                open.len() + 1
            )
        })?);
    }

    let schedule = Arc::new(Schedule {
        start: Instant::now() + Duration::from_millis(100),
        warmup: WARMUP,
        measure: Duration::from_secs(seconds),
        pause: if with_wrk {
            Duration::from_secs(seconds) + WRK_SLACK
        } else {
            Duration::ZERO
        },
    });
    eprintln!(
        "running reads: {} phases of {} s after {} s of warm-up each",
        PHASES.len(),
        seconds,
        WARMUP.as_secs()
    );
    let workers: Vec<_> = open
        .into_iter()
        .enumerate()
        .map(|(i, connection)| tokio::spawn(connection_loop(connection, targets.clone(), schedule.clone(), i as u64)))
        .collect();
    // Each phase's CPU, sampled at its measured window's edges; then wrk's run of it.
    let wrk_dir = tempfile::Builder::new().prefix("load-wrk-").tempdir()?;
    let mut cpu_used = Vec::new();
    let mut wrk_phases = Vec::new();
    for (i, (kind, name)) in PHASES.into_iter().enumerate() {
        tokio::time::sleep_until((schedule.slot_start(i) + schedule.warmup).into()).await;
        let from = cpu::sample(server_pid);
        tokio::time::sleep_until(schedule.measure_end(i).into()).await;
        cpu_used.push(cpu::cores(from, cpu::sample(server_pid)));
        if with_wrk {
            eprintln!("wrk: {name} for {seconds} s");
            let (targets, base_url, dir) = (targets.clone(), base_url.to_owned(), wrk_dir.path().to_owned());
            let accept_encoding = accept_encoding.map(str::to_owned);
            let from = cpu::sample(server_pid);
            let mut phase = tokio::task::spawn_blocking(move || {
                let paths = targets.wrk_paths(kind);
                wrk::run(
                    name,
                    &base_url,
                    accept_encoding.as_deref(),
                    &paths,
                    connections,
                    seconds,
                    &dir,
                )
            })
            .await??;
            phase.server_cpu_cores = cpu::cores(from, cpu::sample(server_pid)).1;
            wrk_phases.push(phase);
        }
    }
    let wrk = with_wrk.then(|| phases::with_ratios(wrk_phases));
    let mut tallies = Vec::with_capacity(workers.len());
    let mut unfinished = 0;
    let give_up = schedule.end() + GRACE;
    for worker in workers {
        match tokio::time::timeout_at(give_up.into(), worker).await {
            Ok(tally) => tallies.push(tally?),
            Err(_) => unfinished += 1,
        }
    }
    let phases = phases::with_ratios(
        PHASES
            .iter()
            .enumerate()
            .map(|(i, (_, name))| {
                let mut phase = Phase::summarize(name, tallies.iter().map(|t| &t[i]), schedule.measure);
                (phase.load_cpu_cores, phase.server_cpu_cores) = cpu_used[i];
                phase
            })
            .collect(),
    );

    Ok(ReadsReport {
        scenario: "reads".into(),
        base_url: base_url.to_owned(),
        connections,
        accept_encoding: accept_encoding.map(str::to_owned),
        seconds_per_phase: seconds as f64,
        warmup_seconds: WARMUP.as_secs_f64(),
        mix: MIX_DESCRIPTION.into(),
        phases,
        unfinished,
        wrk,
        peak_rss_kib: None,
        load_average: None,
    })
}

/// One connection through every phase: a request as soon as the last is
/// answered; answers in a phase's measured window count for it.
async fn connection_loop(
    mut connection: Connection,
    targets: Arc<Targets>,
    schedule: Arc<Schedule>,
    index: u64,
) -> Vec<Tally> {
    let mut tallies = vec![Tally::default(); PHASES.len()];
    let mut rng = Rng::new(index + 1);
    tokio::time::sleep_until(schedule.start.into()).await;
    loop {
        let sent = Instant::now();
        let Some((i, paused)) = schedule.phase_at(sent) else {
            break;
        };
        if paused {
            // The server may close the idle connection meanwhile (its
            // header timeout): the next phase's warm-up opens it again.
            tokio::time::sleep_until(schedule.slot_start(i + 1).into()).await;
            continue;
        }
        let request = targets.pick(PHASES[i].0, &mut rng);
        let answer = connection.get(request).await;
        let answered = Instant::now();
        if schedule.measures(i, answered) {
            tallies[i].record(answered - sent, answer.as_ref().ok().copied());
        }
        if answer.is_err() {
            // Refused or reset: do not spin; wrk also counts and reconnects.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    tallies
}

/// The board's first page, then `CURSOR_PAGES` more by `next_cursor`.
async fn board_pages(api: &Api) -> anyhow::Result<Vec<String>> {
    let first = "/boards/free/posts".to_owned();
    let mut pages = vec![first.clone()];
    let mut path = first.clone();
    while pages.len() <= CURSOR_PAGES {
        let page: Value = api
            .http
            .get(format!("{}{path}", api.base))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let Some(cursor) = page["next_cursor"].as_str() else {
            break;
        };
        path = format!("{first}?cursor={}", percent_encoded(cursor));
        pages.push(path.clone());
    }
    Ok(pages)
}

fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets() -> Targets {
        let pages = (0..5).map(|i| format!("/page{i}")).collect();
        let posts: Vec<String> = (0..200).map(|i| format!("p{i}")).collect();
        Targets::new("h", None, pages, &posts)
    }

    fn path(request: &[u8]) -> String {
        let line = String::from_utf8_lossy(request);
        line.split(' ').nth(1).unwrap().to_owned()
    }

    #[test]
    fn the_mix_is_half_board_pages_and_half_details_with_a_hot_set() {
        let targets = targets();
        let mut rng = Rng::new(7);
        let (mut first, mut cursor, mut hot, mut details) = (0, 0, 0, 0);
        let n = 40_000;
        for _ in 0..n {
            let p = path(targets.pick(Kind::Mix, &mut rng));
            match p.as_str() {
                "/page0" => first += 1,
                p if p.starts_with("/page") => cursor += 1,
                p => {
                    details += 1;
                    let post: usize = p.trim_start_matches("/boards/free/posts/p").parse().unwrap();
                    hot += usize::from(post < HOT_SET);
                }
            }
        }
        let share = |k: usize| k as f64 / n as f64;
        assert!((share(first) - 0.25).abs() < 0.02, "first pages {first}");
        assert!((share(cursor) - 0.25).abs() < 0.02, "cursor pages {cursor}");
        assert!((share(details) - 0.5).abs() < 0.02, "details {details}");
        // Half of them to the hot set, plus the hot set's share of the rest.
        let hot_share = hot as f64 / details as f64;
        assert!((hot_share - (0.5 + 0.5 * 10.0 / 200.0)).abs() < 0.03, "hot {hot_share}");
    }

    #[test]
    fn the_single_path_phases_ask_for_one_path() {
        let targets = targets();
        let mut rng = Rng::new(1);
        assert_eq!(path(targets.pick(Kind::Health, &mut rng)), "/health");
        assert_eq!(path(targets.pick(Kind::HotPost, &mut rng)), "/boards/free/posts/p0");
        assert!(path(targets.pick(Kind::BoardPages, &mut rng)).starts_with("/page"));
    }

    #[test]
    fn answers_count_only_in_their_phase_s_measured_window() {
        let start = Instant::now();
        let schedule = Schedule {
            start,
            warmup: Duration::from_secs(2),
            measure: Duration::from_secs(10),
            pause: Duration::from_secs(3),
        };
        let at = |s: u64| start + Duration::from_secs(s);
        assert_eq!(schedule.phase_at(at(1)), Some((0, false)));
        assert_eq!(schedule.phase_at(at(13)), Some((0, true)));
        assert_eq!(schedule.phase_at(at(16)), Some((1, false)));
        assert_eq!(schedule.phase_at(at(60)), None);
        assert!(!schedule.measures(0, at(1)));
        assert!(schedule.measures(0, at(2)));
        assert!(!schedule.measures(0, at(12)));
        assert!(!schedule.measures(0, at(13)));
        assert!(schedule.measures(1, at(17)));
        assert_eq!(schedule.end(), at(60));
    }

    #[test]
    fn cursors_are_percent_encoded() {
        assert_eq!(percent_encoded("a+b/c=="), "a%2Bb%2Fc%3D%3D");
        assert_eq!(percent_encoded("01J-x_y.z~"), "01J-x_y.z~");
    }
}
