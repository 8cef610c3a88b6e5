//! Idempotent creates (docs/API.md, "Idempotent creates"), over HTTP on both
//! stores: every create route replays its first answer for the same key and
//! request without writing or hashing again, refuses the key for another
//! request, keeps concurrent duplicates out, and forgets client errors.

use futures::future::join_all;
use reqwest::{Method, Response};
use serde_json::{Value, json};

use crate::helpers::{Backend, TestApp, assert_error, body, spawn_app, spawn_app_with};

on_both_stores!(
    every_create_route_replays_its_answer_for_the_same_key_without_writing_or_hashing,
    a_key_reused_for_another_request_is_refused_with_422,
    concurrent_requests_with_one_key_create_one_item,
    client_errors_are_not_remembered,
    malformed_keys_are_refused_naming_the_header,
    a_key_belongs_to_its_sender_and_never_replays_across_identities,
);

async fn with_key(
    app: &TestApp,
    key: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    fields: &Value,
) -> Response {
    let mut request = app
        .client
        .request(method, format!("{}{path}", app.address))
        .header("idempotency-key", key)
        .json(fields);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.expect("request failed")
}

fn replayed(response: &Response) -> bool {
    response
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|v| v == "true")
}

async fn comments(app: &TestApp, post: &str) -> Vec<Value> {
    body(app.get(&format!("/boards/free/posts/{post}/comments?limit=100")).await).await["comments"]
        .as_array()
        .unwrap()
        .clone()
}

async fn every_create_route_replays_its_answer_for_the_same_key_without_writing_or_hashing(backend: Backend) {
    let app = spawn_app(backend).await;
    let token = app.member_token("idem_owner").await;
    let post = app.member_post(&token).await;
    let on_post = format!("/boards/free/posts/{post}");
    let creates: Vec<(&str, String, Option<&str>, Value)> = vec![
        (
            "signup",
            "/members".into(),
            None,
            json!({"username": "idem_new", "password": "password-123", "nickname": "n"}),
        ),
        (
            "member post",
            "/boards/free/posts".into(),
            Some(token.as_str()),
            json!({"title": "once", "body": "b"}),
        ),
        (
            "member comment",
            format!("{on_post}/comments"),
            Some(token.as_str()),
            json!({"body": "member once"}),
        ),
        (
            "guest post",
            "/boards/free/posts/guest".into(),
            None,
            json!({"nickname": "g", "password": "guest-pw", "title": "guest once", "body": "b"}),
        ),
        (
            "guest comment",
            format!("{on_post}/comments/guest"),
            None,
            json!({"nickname": "g", "password": "guest-pw", "body": "guest once"}),
        ),
    ];
    for (what, path, token, fields) in creates {
        let key = format!("key-{what}");
        let first = with_key(&app, &key, Method::POST, &path, token, &fields).await;
        assert_eq!(first.status(), 201, "{what}");
        assert!(!replayed(&first), "{what}: a first answer is no replay");
        let first: Value = first.json().await.unwrap();
        let hashes = app.hashes();
        for _ in 0..2 {
            let again = with_key(&app, &key, Method::POST, &path, token, &fields).await;
            assert_eq!(again.status(), 201, "{what}");
            assert!(replayed(&again), "{what}: Idempotent-Replayed: true");
            assert_eq!(again.json::<Value>().await.unwrap(), first, "{what}: the same answer");
        }
        assert_eq!(app.hashes(), hashes, "{what}: a replay runs no hash");
    }
    // One of each was written.
    let posts = body(app.get("/boards/free/posts").await).await["posts"]
        .as_array()
        .unwrap()
        .clone();
    let titles: Vec<&str> = posts.iter().map(|p| p["title"].as_str().unwrap()).collect();
    assert_eq!(titles.iter().filter(|t| **t == "once").count(), 1, "{titles:?}");
    assert_eq!(titles.iter().filter(|t| **t == "guest once").count(), 1, "{titles:?}");
    let bodies: Vec<String> = comments(&app, &post)
        .await
        .iter()
        .map(|c| c["body"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(bodies, ["member once", "guest once"]);
    let detail = body(app.get(&on_post).await).await;
    assert_eq!(detail["comment_count"], 2);
    assert_eq!(app.login("idem_new", "password-123").await.status(), 200);
}

/// The same owner's key for another request is `422`; another owner's is
/// its own key.
async fn a_key_reused_for_another_request_is_refused_with_422(backend: Backend) {
    let app = spawn_app(backend).await;
    let kim = app.member_token("idem_kim").await;
    let lee = app.member_token("idem_lee").await;
    let post = app.member_post(&kim).await;
    let path = format!("/boards/free/posts/{post}/comments");
    let fields = json!({"body": "first"});
    assert_eq!(
        with_key(&app, "k", Method::POST, &path, Some(&kim), &fields)
            .await
            .status(),
        201
    );
    let other_body = json!({"body": "second"});
    let other_path = "/boards/free/posts";
    let guest_path = format!("{path}/guest");
    let guest = json!({"nickname": "g", "password": "guest-pw", "body": "first"});
    for (what, response) in [
        (
            "another body",
            with_key(&app, "k", Method::POST, &path, Some(&kim), &other_body).await,
        ),
        (
            "another path",
            with_key(
                &app,
                "k",
                Method::POST,
                other_path,
                Some(&kim),
                &json!({"title": "t", "body": "b"}),
            )
            .await,
        ),
    ] {
        assert!(!replayed(&response), "{what}");
        assert_error(response, 422, "idempotency_key_reused", "Idempotency-Key").await;
    }
    assert_eq!(comments(&app, &post).await.len(), 1, "nothing more was written");
    // v3: the same key from another identity is another key: its own create.
    for (what, response) in [
        (
            "another member",
            with_key(&app, "k", Method::POST, &path, Some(&lee), &fields).await,
        ),
        (
            "no identity",
            with_key(&app, "k", Method::POST, &guest_path, None, &guest).await,
        ),
    ] {
        assert!(!replayed(&response), "{what}");
        assert_eq!(response.status(), 201, "{what}");
    }
    assert_eq!(comments(&app, &post).await.len(), 3, "each identity's own create");
}

async fn concurrent_requests_with_one_key_create_one_item(backend: Backend) {
    let app = spawn_app(backend).await;
    let post = app.guest_post("guest-pw").await;
    let path = format!("/boards/free/posts/{post}/comments/guest");
    let fields = json!({"nickname": "g", "password": "guest-pw", "body": "only once"});
    let hashes = app.hashes();
    let attempts = (0..12).map(|_| with_key(&app, "same-key", Method::POST, &path, None, &fields));
    let mut statuses = Vec::new();
    for response in join_all(attempts).await {
        let status = response.status().as_u16();
        if status == 409 {
            assert!(
                response.headers().contains_key("retry-after"),
                "409 without Retry-After"
            );
            assert_eq!(body(response).await["error"]["code"], "request_in_progress");
        }
        statuses.push(status);
    }
    assert!(statuses.iter().all(|s| matches!(s, 201 | 409)), "{statuses:?}");
    assert!(statuses.contains(&201), "{statuses:?}");
    assert_eq!(comments(&app, &post).await.len(), 1, "{statuses:?}");
    // The guest post's hash, then the one comment's: no request hashed twice.
    assert_eq!(app.hashes() - hashes, 1, "one hash for one comment");
    // Once answered, the key replays.
    let again = with_key(&app, "same-key", Method::POST, &path, None, &fields).await;
    assert!(replayed(&again));
    assert_eq!(again.status(), 201);
}

async fn client_errors_are_not_remembered(backend: Backend) {
    let app = spawn_app(backend).await;
    assert_eq!(app.signup("idem_taken", "password-123").await.status(), 201);
    let fields = json!({"username": "idem_taken", "password": "password-123", "nickname": "n"});
    for _ in 0..2 {
        let response = with_key(&app, "signup-key", Method::POST, "/members", None, &fields).await;
        assert!(!replayed(&response), "a 409 is answered afresh, not replayed");
        assert_error(response, 409, "username_taken", "username").await;
    }
    // A 404 after the key was claimed releases it too: the key serves
    // another request afterwards.
    let missing = format!("/boards/free/posts/{}/comments/guest", shared::domain::new_id());
    let guest = json!({"nickname": "g", "password": "guest-pw", "body": "x"});
    assert_eq!(
        with_key(&app, "k404", Method::POST, &missing, None, &guest)
            .await
            .status(),
        404
    );
    let post = app.guest_post("guest-pw").await;
    let path = format!("/boards/free/posts/{post}/comments/guest");
    assert_eq!(
        with_key(&app, "k404", Method::POST, &path, None, &guest).await.status(),
        201
    );
}

async fn malformed_keys_are_refused_naming_the_header(backend: Backend) {
    let app = spawn_app(backend).await;
    let fields = json!({"username": "idem_bad", "password": "password-123", "nickname": "n"});
    for key in ["".to_owned(), "k".repeat(256)] {
        let response = with_key(&app, &key, Method::POST, "/members", None, &fields).await;
        assert_error(response, 400, "validation_failed", "Idempotency-Key").await;
    }
    assert_eq!(
        with_key(&app, &"k".repeat(255), Method::POST, "/members", None, &fields)
            .await
            .status(),
        201
    );
}

/// docs/API.md, Idempotent creates: keys are scoped by identity (the
/// bearer's member, else the client address). Another client with the same
/// key and the same body gets its own create, not the first one's replay;
/// another body from another client is no `422` either.
async fn a_key_belongs_to_its_sender_and_never_replays_across_identities(backend: Backend) {
    let app = spawn_app_with(backend, &[("TRUSTED_PROXIES", "127.0.0.1/32")]).await;
    let guest = json!({"nickname": "g", "password": "guest-pw", "title": "same", "body": "same"});
    let from = |address: &'static str, fields: Value| {
        let app = &app;
        async move {
            app.client
                .post(format!("{}/boards/free/posts/guest", app.address))
                .header("idempotency-key", "shared-key")
                .header("x-forwarded-for", address)
                .json(&fields)
                .send()
                .await
                .unwrap()
        }
    };
    let first = from("198.51.100.1", guest.clone()).await;
    assert_eq!(first.status(), 201);
    let first = body(first).await;
    let again = from("198.51.100.1", guest.clone()).await;
    assert!(replayed(&again), "the sender's own retry replays");
    assert_eq!(body(again).await["id"], first["id"]);
    let other = from("198.51.100.2", guest.clone()).await;
    assert_eq!(other.status(), 201);
    assert!(!replayed(&other), "another address's key is another key");
    assert_ne!(body(other).await["id"], first["id"]);
    let different = from(
        "198.51.100.3",
        json!({"nickname": "g", "password": "guest-pw", "title": "t", "body": "b"}),
    )
    .await;
    assert_eq!(different.status(), 201, "no 422 for another sender's body");
    // A member's key is the member's, from any address, and not the address's.
    let token = app.member_token("key_owner").await;
    let member_post = |address: &'static str| {
        let (app, token) = (&app, token.clone());
        async move {
            app.client
                .post(format!("{}/boards/free/posts", app.address))
                .header("idempotency-key", "shared-key")
                .header("x-forwarded-for", address)
                .bearer_auth(token)
                .json(&json!({"title": "mine", "body": "mine"}))
                .send()
                .await
                .unwrap()
        }
    };
    let mine = member_post("198.51.100.1").await;
    assert_eq!(mine.status(), 201);
    assert!(!replayed(&mine), "the member's key is not the address's");
    let moved = member_post("203.0.113.50").await;
    assert!(replayed(&moved), "the member's retry from another address replays");
}
