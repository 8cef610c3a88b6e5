//! Board pages and post details that the server keeps in memory, and views
//! counted in memory (docs/API.md, Counting; docs/operations.md): a write is
//! seen by the very next read, and a stop or a kill loses no more views
//! than the contract says.

use futures::future::join_all;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Backend, TestApp, body, spawn_app_with};
use crate::process::ServerProcess;

on_both_stores!(every_write_is_seen_by_the_next_read_of_a_board_page_and_a_post_detail);

/// The post's summary on the board's first page (`None`: not listed) and
/// its detail (`None`: 404), each read twice so the second comes from
/// whatever the first left in the cache.
async fn seen(app: &TestApp, board: &str, post: &str) -> (Option<Value>, Option<Value>) {
    let mut last = (None, None);
    for _ in 0..2 {
        let page = body(app.get(&format!("/boards/{board}/posts?limit=50")).await).await;
        let summary = page["posts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == post)
            .cloned();
        let detail = app
            .request(Method::HEAD, &format!("/boards/{board}/posts/{post}"), None, None)
            .await;
        let detail = match detail.status().as_u16() {
            200 => Some(body(app.get(&format!("/boards/{board}/posts/{post}")).await).await),
            404 => None,
            other => panic!("a detail answered {other}"),
        };
        last = (summary, detail);
    }
    last
}

async fn field(app: &TestApp, board: &str, post: &str, name: &str) -> (Value, Value) {
    let (summary, detail) = seen(app, board, post).await;
    let summary = summary.unwrap_or_else(|| panic!("{post} is listed"));
    let detail = detail.unwrap_or_else(|| panic!("{post} has a detail"));
    (summary[name].clone(), detail[name].clone())
}

async fn is_gone(app: &TestApp, board: &str, post: &str) -> bool {
    seen(app, board, post).await == (None, None)
}

async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
    status: u16,
) -> Value {
    let response = app.request(method.clone(), path, token, body).await;
    let got = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    assert_eq!(got, status, "{method} {path}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

async fn every_write_is_seen_by_the_next_read_of_a_board_page_and_a_post_detail(backend: Backend) {
    let app = spawn_app_with(backend, &[("ADMIN_USERNAMES", "boss")]).await;
    let boss = app.member_token("boss").await;
    let kim = app.member_token("kim").await;
    let lee = app.member_token("lee").await;

    // A member's post, its edit.
    seen(&app, "free", "nothing-yet").await;
    let post = app.member_post(&kim).await;
    let path = format!("/boards/free/posts/{post}");
    assert_eq!(field(&app, "free", &post, "title").await, (json!("t"), json!("t")));
    send(
        &app,
        Method::PUT,
        &path,
        Some(&kim),
        Some(json!({"title": "edited", "body": "b2"})),
        200,
    )
    .await;
    assert_eq!(
        field(&app, "free", &post, "title").await,
        (json!("edited"), json!("edited"))
    );
    assert_eq!(seen(&app, "free", &post).await.1.unwrap()["body"], "b2");

    // Comments of a member and of a guest, and their deletes.
    let comments = format!("{path}/comments");
    let lees = send(
        &app,
        Method::POST,
        &comments,
        Some(&lee),
        Some(json!({"body": "c1"})),
        201,
    )
    .await;
    assert_eq!(field(&app, "free", &post, "comment_count").await, (json!(1), json!(1)));
    let guest = json!({"nickname": "n", "password": "guest-pw", "body": "c2"});
    let guests = send(&app, Method::POST, &format!("{comments}/guest"), None, Some(guest), 201).await;
    assert_eq!(field(&app, "free", &post, "comment_count").await, (json!(2), json!(2)));
    let shown = seen(&app, "free", &post).await.1.unwrap()["comments"].clone();
    assert_eq!(shown.as_array().unwrap().len(), 2, "{shown}");
    send(
        &app,
        Method::DELETE,
        &format!("{comments}/{}", lees["id"].as_str().unwrap()),
        Some(&lee),
        None,
        204,
    )
    .await;
    assert_eq!(field(&app, "free", &post, "comment_count").await, (json!(1), json!(1)));
    let guest_delete = format!("{comments}/{}/guest", guests["id"].as_str().unwrap());
    send(
        &app,
        Method::DELETE,
        &guest_delete,
        None,
        Some(json!({"password": "guest-pw"})),
        204,
    )
    .await;
    assert_eq!(field(&app, "free", &post, "comment_count").await, (json!(0), json!(0)));

    // Likes.
    send(&app, Method::PUT, &format!("{path}/like"), Some(&lee), None, 200).await;
    assert_eq!(field(&app, "free", &post, "like_count").await, (json!(1), json!(1)));
    send(&app, Method::DELETE, &format!("{path}/like"), Some(&lee), None, 200).await;
    assert_eq!(field(&app, "free", &post, "like_count").await, (json!(0), json!(0)));

    // Staff removing a comment, then the post.
    let kims = send(
        &app,
        Method::POST,
        &comments,
        Some(&kim),
        Some(json!({"body": "c3"})),
        201,
    )
    .await;
    assert_eq!(field(&app, "free", &post, "comment_count").await, (json!(1), json!(1)));
    let remove = format!("{comments}/{}/remove", kims["id"].as_str().unwrap());
    send(
        &app,
        Method::POST,
        &remove,
        Some(&boss),
        Some(json!({"reason": "rude"})),
        204,
    )
    .await;
    assert_eq!(field(&app, "free", &post, "comment_count").await, (json!(0), json!(0)));
    send(
        &app,
        Method::POST,
        &format!("{path}/remove"),
        Some(&boss),
        Some(json!({"reason": "spam"})),
        204,
    )
    .await;
    assert!(is_gone(&app, "free", &post).await);

    // A member deleting their post.
    let post = app.member_post(&kim).await;
    assert!(seen(&app, "free", &post).await.0.is_some());
    send(
        &app,
        Method::DELETE,
        &format!("/boards/free/posts/{post}"),
        Some(&kim),
        None,
        204,
    )
    .await;
    assert!(is_gone(&app, "free", &post).await);

    // A guest's post, its edit and delete.
    let post = app.guest_post("guest-pw").await;
    let guest_path = format!("/boards/free/posts/{post}/guest");
    assert_eq!(field(&app, "free", &post, "title").await.0, "guest title");
    let edit = json!({"password": "guest-pw", "title": "guest edited", "body": "b"});
    send(&app, Method::PUT, &guest_path, None, Some(edit), 200).await;
    assert_eq!(
        field(&app, "free", &post, "title").await,
        (json!("guest edited"), json!("guest edited"))
    );
    send(
        &app,
        Method::DELETE,
        &guest_path,
        None,
        Some(json!({"password": "guest-pw"})),
        204,
    )
    .await;
    assert!(is_gone(&app, "free", &post).await);

    // Account deletions: keeping the content (a deleted member wrote it)
    // and with it (gone).
    let lees_post = app.member_post(&lee).await;
    assert_eq!(field(&app, "free", &lees_post, "author").await.0["kind"], "member");
    let keep = json!({"password": "password-123", "delete_content": false});
    send(&app, Method::DELETE, "/members/me", Some(&lee), Some(keep), 204).await;
    let (summary, detail) = field(&app, "free", &lees_post, "author").await;
    assert_eq!(
        (&summary["kind"], &detail["kind"]),
        (&json!("deleted_member"), &json!("deleted_member"))
    );
    let kims_post = app.member_post(&kim).await;
    assert!(seen(&app, "free", &kims_post).await.0.is_some());
    let with_content = json!({"password": "password-123", "delete_content": true});
    send(&app, Method::DELETE, "/members/me", Some(&kim), Some(with_content), 204).await;
    assert!(is_gone(&app, "free", &kims_post).await);
}

/// `each` views at once of every post; the highest count answered per
/// post. The answers of one post are distinct: each view counted once.
async fn view_many(client: &reqwest::Client, server: &ServerProcess, posts: &[String], each: usize) -> Vec<u64> {
    let mut highest = Vec::new();
    for post in posts {
        let url = server.url(&format!("/boards/free/posts/{post}"));
        let views = (0..each).map(|_| {
            let (client, url) = (client.clone(), url.clone());
            async move {
                let detail: Value = client.get(url).send().await.unwrap().json().await.unwrap();
                detail["view_count"].as_u64().unwrap()
            }
        });
        let mut counts = join_all(views).await;
        counts.sort_unstable();
        let distinct = counts.windows(2).all(|pair| pair[0] < pair[1]);
        assert!(distinct, "{post}: {counts:?}");
        highest.push(*counts.last().unwrap());
    }
    highest
}

async fn counts_after_restart(data: &std::path::Path, posts: &[String]) -> Vec<u64> {
    let server = ServerProcess::start_in(data, &[]);
    let client = reqwest::Client::new();
    let mut counts = Vec::new();
    for post in posts {
        let page: Value = client
            .get(server.url("/boards/free/posts?limit=50"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let summary = page["posts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == *post)
            .cloned();
        counts.push(summary.unwrap()["view_count"].as_u64().unwrap());
    }
    assert!(server.stop_with("TERM"));
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_view_count_is_wrong_after_a_restart_and_a_clean_stop_loses_none() {
    let data = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_in(data.path(), &[]);
    let client = reqwest::Client::new();
    let token = {
        let signup = json!({"username": "kim", "password": "password-123", "nickname": "kim"});
        let created = client.post(server.url("/members")).json(&signup).send().await.unwrap();
        assert_eq!(created.status(), 201);
        let login = json!({"username": "kim", "password": "password-123"});
        let session: Value = client
            .post(server.url("/sessions"))
            .json(&login)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        session["token"].as_str().unwrap().to_owned()
    };
    let mut posts = Vec::new();
    for title in ["one", "two", "three"] {
        let created: Value = client
            .post(server.url("/boards/free/posts"))
            .bearer_auth(&token)
            .json(&json!({"title": title, "body": "b"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        posts.push(created["id"].as_str().unwrap().to_owned());
    }

    // A clean stop (SIGTERM) writes every counted view.
    let answered = view_many(&client, &server, &posts, 40).await;
    assert_eq!(answered, vec![40, 40, 40], "each answer counts its own view");
    assert!(server.stop_with("TERM"), "a clean stop exits with success");
    assert_eq!(counts_after_restart(data.path(), &posts).await, answered);

    // A kill loses at most what waited for the next flush: never more
    // than was answered, and whatever was written a flush interval
    // before the kill.
    let server = ServerProcess::start_in(data.path(), &[]);
    let answered = view_many(&client, &server, &posts, 40).await;
    assert_eq!(answered, vec![80, 80, 80]);
    tokio::time::sleep(shared::app::views::FLUSH_EVERY * 3).await;
    let last = view_many(&client, &server, &posts[..1], 5).await;
    assert_eq!(last, vec![85]);
    server.stop_with("KILL");
    let after = counts_after_restart(data.path(), &posts).await;
    assert!(
        (80..=85).contains(&after[0]),
        "{after:?}: at most the last flush interval's 5 views lost"
    );
    assert_eq!(after[1..], answered[1..], "views written before the kill are all there");
}
