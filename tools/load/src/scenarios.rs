//! The scenarios of the field reports. Each runs for a bounded time and
//! records every request under an endpoint name with the statuses it expects.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::RngExt as _;
use reqwest::Method;
use serde_json::{Value, json};

use crate::metrics::Recorder;

pub(crate) const PASSWORD: &str = "load-test-password";
pub(crate) const GUEST_PASSWORD: &str = "guest-pw";

#[derive(Clone)]
pub(crate) struct Api {
    pub base: String,
    pub http: reqwest::Client,
    pub recorder: Arc<Recorder>,
    /// Sent as `X-Forwarded-For` when a call names no address of its own.
    pub client_ip: Option<String>,
}

pub(crate) struct Call<'a> {
    pub endpoint: &'static str,
    pub method: Method,
    pub path: String,
    pub token: Option<&'a str>,
    pub body: Option<Value>,
    pub forwarded_for: Option<String>,
    pub expected: &'static [u16],
}

impl Api {
    pub(crate) fn new(base: &str, recorder: Arc<Recorder>) -> Self {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(512)
            .timeout(Duration::from_secs(60))
            .build()
            .expect("an HTTP client");
        Api {
            base: base.trim_end_matches('/').to_owned(),
            http,
            recorder,
            client_ip: None,
        }
    }

    /// This client as user `u` behind an address of its own (10.x.y.z).
    pub(crate) fn as_user_ip(&self, u: usize) -> Self {
        Api {
            client_ip: Some(format!("10.{}.{}.{}", (u >> 16) & 255, (u >> 8) & 255, u & 255)),
            ..self.clone()
        }
    }

    /// Sends the request and records it; returns status and JSON body when it answered.
    pub(crate) async fn call(&self, call: Call<'_>) -> Option<(u16, Value)> {
        let mut request = self.http.request(call.method, format!("{}{}", self.base, call.path));
        if let Some(token) = call.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = &call.body {
            request = request.json(body);
        }
        if let Some(ip) = call.forwarded_for.or_else(|| self.client_ip.clone()) {
            request = request.header("x-forwarded-for", ip);
        }
        let started = Instant::now();
        let result = request.send().await;
        let (status, body) = match result {
            Ok(response) => {
                let status = response.status().as_u16();
                let body = response.json::<Value>().await.unwrap_or(Value::Null);
                (Some(status), body)
            }
            Err(_) => (None, Value::Null),
        };
        let ok = status.is_some_and(|s| call.expected.contains(&s));
        self.recorder.record(call.endpoint, started.elapsed(), status, ok);
        status.map(|s| (s, body))
    }
}

/// What the scenarios act on, created before the clock starts.
pub(crate) struct Seed {
    pub usernames: Vec<String>,
    pub tokens: Vec<String>,
    pub posts: Vec<String>,
}

pub(crate) async fn seed(api: &Api, members: usize, posts: usize, run_id: &str) -> anyhow::Result<Seed> {
    let mut usernames = Vec::new();
    let mut tokens = Vec::new();
    let mut joins = Vec::new();
    for i in 0..members {
        let (api, username) = (api.clone(), format!("m{run_id}_{i}"));
        joins.push(tokio::spawn(async move {
            let body = json!({"username": username, "password": PASSWORD, "nickname": "load"});
            let created = api
                .http
                .post(format!("{}/members", api.base))
                .json(&body)
                .send()
                .await?;
            anyhow::ensure!(
                created.status().as_u16() == 201,
                "seeding {username}: {}",
                created.status()
            );
            let session: Value = api
                .http
                .post(format!("{}/sessions", api.base))
                .json(&json!({"username": username, "password": PASSWORD}))
                .send()
                .await?
                .json()
                .await?;
            let token = session["token"].as_str().unwrap_or_default().to_owned();
            anyhow::ensure!(!token.is_empty(), "seeding {username}: no token");
            Ok((username, token))
        }));
    }
    for join in joins {
        let (username, token) = join.await??;
        usernames.push(username);
        tokens.push(token);
    }
    let mut post_ids = Vec::new();
    for i in 0..posts {
        let token = &tokens[i % tokens.len().max(1)];
        let post: Value = api
            .http
            .post(format!("{}/boards/free/posts", api.base))
            .bearer_auth(token)
            .json(&json!({"title": format!("seed {i}"), "body": "seeded for the load run"}))
            .send()
            .await?
            .json()
            .await?;
        post_ids.push(post["id"].as_str().unwrap_or_default().to_owned());
    }
    Ok(Seed {
        usernames,
        tokens,
        posts: post_ids,
    })
}

fn pick(items: &[String]) -> &str {
    &items[rand::rng().random_range(0..items.len())]
}

/// Runs `users` closed-loop users until `deadline`.
async fn users<F, Fut>(users: usize, deadline: Instant, user: F)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let tasks: Vec<_> = (0..users).map(|u| tokio::spawn(user(u))).collect();
    for t in tasks {
        let _ = t.await;
    }
    let _ = deadline;
}

const OK: &[u16] = &[200];
const CREATED: &[u16] = &[201];

async fn read_post(api: &Api, post: &str) {
    api.call(Call {
        endpoint: "read post",
        method: Method::GET,
        path: format!("/boards/free/posts/{post}"),
        token: None,
        body: None,
        forwarded_for: None,
        expected: OK,
    })
    .await;
}

async fn like_toggle(api: &Api, token: &str, post: &str) {
    let method = if rand::rng().random_bool(0.5) {
        Method::PUT
    } else {
        Method::DELETE
    };
    api.call(Call {
        endpoint: "like",
        method,
        path: format!("/boards/free/posts/{post}/like"),
        token: Some(token),
        body: None,
        forwarded_for: None,
        expected: OK,
    })
    .await;
}

async fn guest_write(api: &Api, post: &str) {
    if rand::rng().random_bool(0.5) {
        api.call(Call {
            endpoint: "guest post",
            method: Method::POST,
            path: "/boards/free/posts/guest".into(),
            token: None,
            body: Some(
                json!({"nickname": "guest", "password": GUEST_PASSWORD, "title": "guest", "body": "a guest post"}),
            ),
            forwarded_for: None,
            expected: CREATED,
        })
        .await;
    } else {
        api.call(Call {
            endpoint: "guest comment",
            method: Method::POST,
            path: format!("/boards/free/posts/{post}/comments/guest"),
            token: None,
            body: Some(json!({"nickname": "guest", "password": GUEST_PASSWORD, "body": "a guest comment"})),
            forwarded_for: None,
            expected: CREATED,
        })
        .await;
    }
}

async fn member_login(api: &Api, username: &str) -> Option<String> {
    let Some((200, session)) = api
        .call(Call {
            endpoint: "member login",
            method: Method::POST,
            path: "/sessions".into(),
            token: None,
            body: Some(json!({"username": username, "password": PASSWORD})),
            forwarded_for: None,
            expected: OK,
        })
        .await
    else {
        return None;
    };
    session["token"].as_str().map(str::to_owned)
}

async fn member_write(api: &Api, token: &str, post: &str) {
    if rand::rng().random_bool(0.5) {
        api.call(Call {
            endpoint: "member post",
            method: Method::POST,
            path: "/boards/free/posts".into(),
            token: Some(token),
            body: Some(json!({"title": "member", "body": "a member post"})),
            forwarded_for: None,
            expected: CREATED,
        })
        .await;
    } else {
        api.call(Call {
            endpoint: "member comment",
            method: Method::POST,
            path: format!("/boards/free/posts/{post}/comments"),
            token: Some(token),
            body: Some(json!({"body": "a member comment"})),
            forwarded_for: None,
            expected: CREATED,
        })
        .await;
    }
}

async fn member_login_and_write(api: &Api, username: &str, post: &str) {
    if let Some(token) = member_login(api, username).await {
        member_write(api, &token, post).await;
    }
}

/// How the users of a scenario pace themselves between requests.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pacing {
    /// Think after every request, uniformly between half and one and a half
    /// times the mean (JMeter's Uniform Random Timer), starting at a random
    /// offset: the report's users, whose offered load stays put however
    /// slow the server gets (up to their own wait).
    Think { mean: Duration },
    /// No pause: a closed loop that offers as much as the server answers.
    Closed,
}

impl Pacing {
    async fn pause(self, deadline: Instant) {
        if let Pacing::Think { mean } = self {
            let pause = mean.mul_f64(rand::rng().random_range(0.5..1.5));
            tokio::time::sleep_until((Instant::now() + pause).min(deadline).into()).await;
        }
    }

    async fn stagger(self, deadline: Instant) {
        if let Pacing::Think { mean } = self {
            let offset = mean.mul_f64(rand::rng().random_range(0.0..1.0));
            tokio::time::sleep_until((Instant::now() + offset).min(deadline).into()).await;
        }
    }
}

/// Report 1's thread groups: TG1 readers 50%, TG2 members logging in and
/// writing 20%, TG3 guests writing 20%, TG4 likers 10%.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Groups {
    pub readers: usize,
    pub members: usize,
    pub guests: usize,
    pub likers: usize,
}

impl Groups {
    pub(crate) fn of(users: usize) -> Self {
        let (readers, members, guests) = (users / 2, users / 5, users / 5);
        Groups {
            readers,
            members,
            guests,
            likers: users - readers - members - guests,
        }
    }

    /// Member accounts the scenario needs: one per member and per liker, so
    /// that no two users share an account (as no two real people do).
    pub(crate) fn accounts(self) -> usize {
        (self.members + self.likers).max(1)
    }
}

/// Report 1's mix as its thread groups ran it: readers read a random post;
/// each member logs into its own account, then posts or comments; guests
/// post or comment; likers toggle a like with their own account. With
/// `many_ips` each user has an address of its own.
pub(crate) async fn mixed(
    api: Api,
    seed: Arc<Seed>,
    groups: Groups,
    pacing: Pacing,
    seconds: u64,
    many_ips: bool,
    report_share: f64,
) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let total = groups.readers + groups.members + groups.guests + groups.likers;
    users(total, deadline, |u| {
        let api = if many_ips { api.as_user_ip(u) } else { api.clone() };
        let seed = seed.clone();
        async move {
            pacing.stagger(deadline).await;
            let member = u.checked_sub(groups.readers).filter(|&m| m < groups.members);
            let guest = u
                .checked_sub(groups.readers + groups.members)
                .filter(|&g| g < groups.guests);
            let liker = u.checked_sub(groups.readers + groups.members + groups.guests);
            while Instant::now() < deadline {
                let post = pick(&seed.posts).to_owned();
                // (v3) mixed-moderated: this share of every group's requests are reports.
                if report_share > 0.0 && rand::rng().random_bool(report_share) {
                    report(&api, &post).await;
                    pacing.pause(deadline).await;
                    continue;
                }
                if let Some(m) = member {
                    let username = &seed.usernames[m % seed.usernames.len()];
                    if let Some(token) = member_login(&api, username).await {
                        pacing.pause(deadline).await;
                        if Instant::now() >= deadline {
                            break;
                        }
                        member_write(&api, &token, &post).await;
                    }
                } else if guest.is_some() {
                    guest_write(&api, &post).await;
                } else if let Some(l) = liker {
                    let token = &seed.tokens[(groups.members + l) % seed.tokens.len()];
                    like_toggle(&api, token, &post).await;
                } else {
                    read_post(&api, &post).await;
                }
                pacing.pause(deadline).await;
            }
        }
    })
    .await;
}

/// (v3) An anonymous report of a post: the first opens it (201), the
/// rest join it (200).
async fn report(api: &Api, post: &str) {
    api.call(Call {
        endpoint: "report",
        method: Method::POST,
        path: format!("/boards/free/posts/{post}/reports"),
        token: None,
        body: Some(json!({"reason": "looks like spam"})),
        forwarded_for: None,
        expected: &[200, 201],
    })
    .await;
}

/// The admin mixed-moderated's server is told of (`ADMIN_USERNAMES`).
pub(crate) const ADMIN: &str = "load_admin";
/// (v4) What its signup carries: an unclaimed admin name is reserved.
pub(crate) const ADMIN_ENROLL_TOKEN: &str = "load-admin-enroll-token";

/// (v3) Bans on the board the load writes on, none of them of a loaded
/// user: `members` members of their own and `guests` guests, each banned
/// through a post from an address of its own (192.0.2.x), so every write's
/// ban check reads a board that has bans. The server must trust the load
/// generator's `X-Forwarded-For`.
pub(crate) async fn seed_bans(api: &Api, run_id: &str, members: usize, guests: usize) -> anyhow::Result<usize> {
    let post = |path: String, token: Option<&str>, body: Value, ip: Option<String>| {
        let mut request = api.http.post(format!("{}{path}", api.base)).json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(ip) = ip {
            request = request.header("x-forwarded-for", ip);
        }
        request.send()
    };
    let account = json!({"username": ADMIN, "password": PASSWORD, "nickname": "admin"});
    let _ = api
        .http
        .post(format!("{}/members", api.base))
        .header("admin-enroll-token", ADMIN_ENROLL_TOKEN)
        .json(&account)
        .send()
        .await?; // 409 on a rerun
    let session: Value = post(
        "/sessions".into(),
        None,
        json!({"username": ADMIN, "password": PASSWORD}),
        None,
    )
    .await?
    .json()
    .await?;
    let admin = session["token"].as_str().unwrap_or_default().to_owned();
    anyhow::ensure!(!admin.is_empty(), "logging in {ADMIN}: no token");
    let mut banned = 0;
    for i in 0..members {
        let username = format!("b{run_id}_{i}");
        let body = json!({"username": username, "password": PASSWORD, "nickname": "banned"});
        let member: Value = post("/members".into(), None, body, None).await?.json().await?;
        let ban = json!({"member_id": member["id"], "reason": "seeded ban", "duration_s": 86_400});
        let status = post("/boards/free/bans".into(), Some(&admin), ban, None)
            .await?
            .status();
        anyhow::ensure!(status.as_u16() == 201, "banning {username}: {status}");
        banned += 1;
    }
    for i in 0..guests {
        let ip = format!("192.0.2.{}", i % 250 + 1);
        let body = json!({"nickname": "spam", "password": GUEST_PASSWORD, "title": "spam", "body": "spam"});
        let written: Value = post("/boards/free/posts/guest".into(), None, body, Some(ip))
            .await?
            .json()
            .await?;
        let ban = json!({"post_id": written["id"], "reason": "seeded ban"});
        let status = post("/boards/free/bans".into(), Some(&admin), ban, None)
            .await?
            .status();
        anyhow::ensure!(status.as_u16() == 201, "banning guest {i}: {status}");
        banned += 1;
    }
    Ok(banned)
}

/// Reads only (report 1's readers alone): the baseline for the read P99
/// under `mixed`, at the same pacing.
pub(crate) async fn reads(api: Api, seed: Arc<Seed>, n: usize, pacing: Pacing, seconds: u64) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    users(n, deadline, |_| {
        let (api, seed) = (api.clone(), seed.clone());
        async move {
            pacing.stagger(deadline).await;
            while Instant::now() < deadline {
                read_post(&api, pick(&seed.posts)).await;
                pacing.pause(deadline).await;
            }
        }
    })
    .await;
}

/// Report 2: login + write at a constant arrival rate (an open model: new
/// arrivals do not wait for slow ones, as real clients would not).
pub(crate) async fn login_write(api: Api, seed: Arc<Seed>, rate: f64, seconds: u64) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let in_flight = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    while Instant::now() < deadline {
        ticker.tick().await;
        if in_flight.load(Ordering::Relaxed) > 5_000 {
            // The server has fallen this far behind: count the arrival as failed.
            api.recorder.record("member login", Duration::ZERO, None, false);
            continue;
        }
        let (api, seed, in_flight) = (api.clone(), seed.clone(), in_flight.clone());
        in_flight.fetch_add(1, Ordering::Relaxed);
        tasks.push(tokio::spawn(async move {
            member_login_and_write(&api, pick(&seed.usernames), pick(&seed.posts)).await;
            in_flight.fetch_sub(1, Ordering::Relaxed);
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
}

/// Report 3: users signing up continuously.
pub(crate) async fn signup(api: Api, run_id: String, n: usize, seconds: u64) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    users(n, deadline, |u| {
        let (api, run_id) = (api.clone(), run_id.clone());
        async move {
            let mut i = 0;
            while Instant::now() < deadline {
                i += 1;
                api.call(Call {
                    endpoint: "signup",
                    method: Method::POST,
                    path: "/members".into(),
                    token: None,
                    body: Some(
                        json!({"username": format!("s{run_id}_{u}_{i}"), "password": PASSWORD, "nickname": "n"}),
                    ),
                    forwarded_for: None,
                    expected: CREATED,
                })
                .await;
            }
        }
    })
    .await;
}

/// Report 3: wrong passwords for a random one of 200 usernames, as fast as
/// possible, from one client IP or from many (`X-Forwarded-For`, which the
/// server must be told to trust).
pub(crate) async fn login_attack(api: Api, seed: Arc<Seed>, n: usize, seconds: u64, many_ips: bool) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let names: Arc<Vec<String>> = Arc::new(
        seed.usernames
            .iter()
            .cloned()
            .chain((seed.usernames.len()..200).map(|i| format!("nobody_{i}")))
            .collect(),
    );
    users(n, deadline, |_| {
        let (api, names) = (api.clone(), names.clone());
        async move {
            while Instant::now() < deadline {
                let ip = many_ips.then(|| {
                    let mut r = rand::rng();
                    format!(
                        "10.{}.{}.{}",
                        r.random_range(0..255),
                        r.random_range(0..255),
                        r.random_range(1..255)
                    )
                });
                api.call(Call {
                    endpoint: "login (wrong password)",
                    method: Method::POST,
                    path: "/sessions".into(),
                    token: None,
                    body: Some(json!({"username": pick(&names), "password": "definitely-wrong"})),
                    forwarded_for: ip,
                    expected: &[401, 429],
                })
                .await;
            }
        }
    })
    .await;
}

/// Many users reading and liking one post.
pub(crate) async fn hot_post(api: Api, seed: Arc<Seed>, n: usize, seconds: u64) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let post = seed.posts[0].clone();
    users(n, deadline, |_| {
        let (api, seed, post) = (api.clone(), seed.clone(), post.clone());
        async move {
            while Instant::now() < deadline {
                if rand::rng().random_range(0..100) < 80 {
                    read_post(&api, &post).await;
                } else {
                    like_toggle(&api, pick(&seed.tokens), &post).await;
                }
            }
        }
    })
    .await;
}
