//! What the scenarios act on, created before the clock starts: members,
//! their tokens and posts, and bans.

use serde_json::{Value, json};

use super::{Api, GUEST_PASSWORD, PASSWORD};

/// What the scenarios act on, created before the clock starts.
pub(crate) struct Seed {
    pub usernames: Vec<String>,
    pub tokens: Vec<String>,
    pub posts: Vec<String>,
}

/// `members` accounts (each logged in) and `posts` posts. The posts are
/// written by an account of their own that no scenario uses, so that no
/// loaded member votes on their own post (`403 forbidden` since version 4).
pub(crate) async fn seed(api: &Api, members: usize, posts: usize, run_id: &str) -> anyhow::Result<Seed> {
    let mut joins = Vec::new();
    for i in 0..members {
        let (api, username) = (api.clone(), format!("m{run_id}_{i}"));
        joins.push(tokio::spawn(async move { signup_and_login(&api, username).await }));
    }
    let mut usernames = Vec::new();
    let mut tokens = Vec::new();
    for join in joins {
        let (username, token) = join.await??;
        usernames.push(username);
        tokens.push(token);
    }
    let (_, author) = signup_and_login(api, format!("a{run_id}")).await?;
    let mut post_ids = Vec::new();
    for i in 0..posts {
        let post: Value = api
            .http
            .post(format!("{}/boards/free/posts", api.base))
            .bearer_auth(&author)
            .json(&json!({"title": format!("seed {i}"), "body": "seeded for the load run"}))
            .send()
            .await?
            .json()
            .await?;
        let id = post["id"].as_str().unwrap_or_default();
        anyhow::ensure!(!id.is_empty(), "seeding post {i}: {post}");
        post_ids.push(id.to_owned());
    }
    Ok(Seed {
        usernames,
        tokens,
        posts: post_ids,
    })
}

/// A new member `username`, logged in: (username, token).
async fn signup_and_login(api: &Api, username: String) -> anyhow::Result<(String, String)> {
    let body = json!({"username": username, "password": PASSWORD, "nickname": "load"});
    let created = send_shed_aware(api.http.post(format!("{}/members", api.base)).json(&body)).await?;
    anyhow::ensure!(
        created.status().as_u16() == 201,
        "seeding {username}: {}",
        created.status()
    );
    let login = json!({"username": username, "password": PASSWORD});
    let session: Value = send_shed_aware(api.http.post(format!("{}/sessions", api.base)).json(&login))
        .await?
        .json()
        .await?;
    let token = session["token"].as_str().unwrap_or_default().to_owned();
    anyhow::ensure!(!token.is_empty(), "seeding {username}: no token");
    Ok((username, token))
}

/// Sends `request`, again after `Retry-After` while the server sheds it
/// with `503`: the seeding's signups and logins come all at once from one
/// address, and a server at its default hashing queue gives one address
/// only a share of it (before the measured part, so waiting costs nothing).
async fn send_shed_aware(request: reqwest::RequestBuilder) -> anyhow::Result<reqwest::Response> {
    const ATTEMPTS: usize = 20;
    for _ in 1..ATTEMPTS {
        let attempt = request
            .try_clone()
            .ok_or_else(|| anyhow::anyhow!("a seeding request with a stream body"))?;
        let response = attempt.send().await?;
        if response.status().as_u16() != 503 {
            return Ok(response);
        }
        let wait = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1)
            .min(5);
        tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
    }
    Ok(request.send().await?)
}

/// The admin mixed-moderated's server is told of (`ADMIN_USERNAMES`).
pub(crate) const ADMIN: &str = "load_admin";
/// What its signup carries: an unclaimed admin name is reserved.
pub(crate) const ADMIN_ENROLL_TOKEN: &str = "load-admin-enroll-token";

/// Bans on the board the load writes on, none of them of a loaded
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

/// `per_post` member comments on each of `posts`, 16 at a time, so that a
/// post's detail carries its first comments as a read post does.
pub(crate) async fn seed_comments(
    api: &Api,
    tokens: &[String],
    posts: &[String],
    per_post: usize,
) -> anyhow::Result<()> {
    anyhow::ensure!(!tokens.is_empty(), "seeding comments: no member to write them");
    let mut writing = tokio::task::JoinSet::new();
    for (i, post) in posts.iter().enumerate() {
        for c in 0..per_post {
            if writing.len() >= 16 {
                writing.join_next().await.expect("a comment is being written")??;
            }
            let (api, token) = (api.clone(), tokens[(i + c) % tokens.len()].clone());
            let path = format!("{}/boards/free/posts/{post}/comments", api.base);
            writing.spawn(async move {
                let status = api
                    .http
                    .post(path)
                    .bearer_auth(token)
                    .json(&json!({"body": format!("seeded comment {c}")}))
                    .send()
                    .await?
                    .status();
                anyhow::ensure!(status.as_u16() == 201, "seeding a comment: {status}");
                Ok(())
            });
        }
    }
    while let Some(written) = writing.join_next().await {
        written??;
    }
    Ok(())
}
