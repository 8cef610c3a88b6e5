//! Scenarios that load one path: login and write at a fixed rate, signups,
//! a login attack, a hot post.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::RngExt as _;
use reqwest::Method;
use serde_json::json;

use super::actions::{like_toggle, member_login_and_write, read_post};
use super::api::{CREATED, Call};
use super::{Api, PASSWORD, Seed, pick, users};

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
