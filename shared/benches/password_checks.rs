//! What v3's "every password check counts" costs a request on the server
//! (docs/API.md, Throttling and quotas): logins and a guest check through
//! the application on SQLite (FULL, the server's default), with the v3
//! limits on and with `LIMIT_LOGINS_USER` and `LIMIT_PASSWORD_CHECKS_ADDRESS`
//! off (counting before any check), taking turns in rounds, medians side by side. The
//! tiers are bcrypt:4, the same in both, so the difference is the counters.
//! `cargo bench -p shared --bench password_checks`; in the test run it makes
//! a few requests of each only.

use std::time::Instant;

use shared::app::guest::{GuestPost, GuestProof};
use shared::app::sessions::LogIn;
use shared::app::{App, ClientAddress};
use shared::domain::{Nickname, Password, PostBody, PostId, PostKey, Title, Username};
use shared::runtime::{Config, Deployment, Env};

async fn app(dir: &std::path::Path, v3: bool) -> App {
    let data = dir.display().to_string();
    let mut settings = vec![
        ("DATA_DIR", data.as_str()),
        ("PEPPER", "bench-pepper-0123456789abcdefghijklmnopq"),
        ("JWT_SECRET", "bench-jwt-secret-0123456789abcdefghijkl"),
        ("MEMBER_TIER", "bcrypt:4"),
        ("GUEST_TIER", "bcrypt:4"),
        ("HASH_FLOOR_OVERRIDE", "1"),
        ("POW", "off"),
        ("LIMIT_LOGIN_USER_ADDRESS", "off"),
        ("LIMIT_LOGIN_FAILURES_USER", "off"),
        ("LIMIT_GUEST_TARGET_ADDRESS", "off"),
        ("LIMIT_GUEST_TARGET", "off"),
    ];
    // v3: counted, at a number the bench never reaches (one username logs in throughout).
    settings.extend(if v3 {
        [
            ("LIMIT_LOGINS_USER", "10000000/10m"),
            ("LIMIT_PASSWORD_CHECKS_ADDRESS", "120/10m"),
        ]
    } else {
        [("LIMIT_LOGINS_USER", "off"), ("LIMIT_PASSWORD_CHECKS_ADDRESS", "off")]
    });
    let config = Config::from(Deployment::Server, &Env::from_pairs(&settings)).unwrap();
    shared::runtime::build(config).await.unwrap().app.clone()
}

/// Each request from its own address, so no per-address limit is reached.
fn address(i: u32) -> ClientAddress {
    ClientAddress(format!("10.{}.{}.{}", i >> 16 & 255, i >> 8 & 255, i & 255))
}

struct Target {
    app: App,
    post: PostKey,
}

async fn target(dir: &std::path::Path, v3: bool) -> Target {
    let app = app(dir, v3).await;
    app.sign_up(shared::app::signup::SignUp {
        idempotency: None,
        admin_enroll_token: None,
        username: Username::parse("bench".into()).unwrap(),
        password: Password::member("password-123".into()).unwrap(),
        nickname: Nickname::parse("bench".into()).unwrap(),
        client: address(0),
        pow: None,
    })
    .await
    .unwrap();
    let detail = app
        .create_guest_post(GuestPost {
            category: None,
            idempotency: None,
            client: address(0),
            board: app.boards.resolve("free").unwrap(),
            nickname: Nickname::parse("g".into()).unwrap(),
            password: Password::guest("1234".into()).unwrap(),
            title: Title::parse("t".into()).unwrap(),
            body: PostBody::parse("b".into()).unwrap(),
            pow: None,
            media: Default::default(),
        })
        .await
        .unwrap()
        .into_created()
        .unwrap();
    let post = PostKey {
        board: app.boards.resolve("free").unwrap(),
        post: PostId::parse(&detail.post.summary.id).unwrap(),
    };
    Target { app, post }
}

/// Microseconds per request of `op` over `count` requests.
async fn per_request(target: &Target, op: &str, count: u32, first: u32) -> f64 {
    let started = Instant::now();
    for i in first..first + count {
        let login = |password: &str| LogIn {
            username: Username::parse("bench".into()).unwrap(),
            password: Password::attempt(password.into()).unwrap(),
            totp: None,
            client: address(i),
        };
        match op {
            "login, right password" => {
                target.app.log_in(login("password-123")).await.unwrap();
            }
            "login, wrong password" => {
                assert!(target.app.log_in(login("password-124")).await.is_err());
            }
            _ => {
                let proof = GuestProof {
                    password: Password::guest("9999".into()).unwrap(),
                    client: address(i),
                };
                let edit = shared::app::guest::GuestEdit {
                    category: None,
                    key: target.post.clone(),
                    password: proof.password,
                    title: Title::parse("t".into()).unwrap(),
                    body: PostBody::parse("b".into()).unwrap(),
                    client: proof.client,
                    if_match: None,
                    media: None,
                };
                assert!(target.app.update_guest_post(edit).await.is_err());
            }
        }
    }
    started.elapsed().as_secs_f64() * 1e6 / f64::from(count)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (rounds, per_round) = if measuring { (7, 200) } else { (1, 3) };
    let base = std::env::var("BENCH_DIR").unwrap_or_else(|_| ".".into());
    let (v2_dir, v3_dir) = (
        tempfile::tempdir_in(&base).unwrap(),
        tempfile::tempdir_in(&base).unwrap(),
    );
    let (uncounted, counted) = (target(v2_dir.path(), false).await, target(v3_dir.path(), true).await);
    let ops = [
        "login, right password",
        "login, wrong password",
        "guest edit, wrong password",
    ];
    if measuring {
        println!("| request (SQLite FULL, bcrypt:4) | v2 counting, µs | v3 counting, µs | v3 / v2 |");
        println!("|---|---:|---:|---:|");
    }
    let mut first = 1;
    for op in ops {
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            before.push(per_request(&uncounted, op, per_round, first).await);
            after.push(per_request(&counted, op, per_round, first).await);
            first += per_round;
        }
        if measuring {
            let (before, after) = (median(before), median(after));
            println!("| {op} | {before:.0} | {after:.0} | {:.2} |", after / before);
        }
    }
}
