//! The scenarios of the field reports. Each runs for a bounded time and
//! records every request under an endpoint name with the statuses it expects.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::RngExt as _;
use reqwest::Method;
use serde_json::{Value, json};

use crate::metrics::Recorder;

pub const PASSWORD: &str = "load-test-password";
pub const GUEST_PASSWORD: &str = "guest-pw";

#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub http: reqwest::Client,
    pub recorder: Arc<Recorder>,
    /// Sent as `X-Forwarded-For` when a call names no address of its own.
    pub client_ip: Option<String>,
}

pub struct Call<'a> {
    pub endpoint: &'static str,
    pub method: Method,
    pub path: String,
    pub token: Option<&'a str>,
    pub body: Option<Value>,
    pub forwarded_for: Option<String>,
    pub expected: &'static [u16],
}

impl Api {
    pub fn new(base: &str, recorder: Arc<Recorder>) -> Self {
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
    pub fn as_user_ip(&self, u: usize) -> Self {
        Api {
            client_ip: Some(format!("10.{}.{}.{}", (u >> 16) & 255, (u >> 8) & 255, u & 255)),
            ..self.clone()
        }
    }

    /// Sends the request and records it; returns status and JSON body when it answered.
    pub async fn call(&self, call: Call<'_>) -> Option<(u16, Value)> {
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
pub struct Seed {
    pub usernames: Vec<String>,
    pub tokens: Vec<String>,
    pub posts: Vec<String>,
}

pub async fn seed(api: &Api, members: usize, posts: usize, run_id: &str) -> anyhow::Result<Seed> {
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

async fn member_login_and_write(api: &Api, username: &str, post: &str) {
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
        return;
    };
    let token = session["token"].as_str().unwrap_or_default().to_owned();
    if rand::rng().random_bool(0.5) {
        api.call(Call {
            endpoint: "member post",
            method: Method::POST,
            path: "/boards/free/posts".into(),
            token: Some(&token),
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
            token: Some(&token),
            body: Some(json!({"body": "a member comment"})),
            forwarded_for: None,
            expected: CREATED,
        })
        .await;
    }
}

/// Report 1's mix: read post 50%, member login + post/comment 20%,
/// guest post/comment 20%, like 10%. With `many_ips` each user has an
/// address of its own, as the report's users had.
pub async fn mixed(api: Api, seed: Arc<Seed>, n: usize, seconds: u64, many_ips: bool) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    users(n, deadline, |u| {
        let api = if many_ips { api.as_user_ip(u) } else { api.clone() };
        let seed = seed.clone();
        async move {
            while Instant::now() < deadline {
                let roll = rand::rng().random_range(0..100);
                let post = pick(&seed.posts).to_owned();
                match roll {
                    0..50 => read_post(&api, &post).await,
                    50..70 => member_login_and_write(&api, pick(&seed.usernames), &post).await,
                    70..90 => guest_write(&api, &post).await,
                    _ => like_toggle(&api, pick(&seed.tokens), &post).await,
                }
            }
        }
    })
    .await;
}

/// Reads only: the baseline for the read P99 under `mixed`.
pub async fn reads(api: Api, seed: Arc<Seed>, n: usize, seconds: u64) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    users(n, deadline, |_| {
        let (api, seed) = (api.clone(), seed.clone());
        async move {
            while Instant::now() < deadline {
                read_post(&api, pick(&seed.posts)).await;
            }
        }
    })
    .await;
}

/// Report 2: login + write at a constant arrival rate (an open model: new
/// arrivals do not wait for slow ones, as real clients would not).
pub async fn login_write(api: Api, seed: Arc<Seed>, rate: f64, seconds: u64) {
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
pub async fn signup(api: Api, run_id: String, n: usize, seconds: u64) {
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
pub async fn login_attack(api: Api, seed: Arc<Seed>, n: usize, seconds: u64, many_ips: bool) {
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
pub async fn hot_post(api: Api, seed: Arc<Seed>, n: usize, seconds: u64) {
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
