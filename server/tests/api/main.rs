//! End-to-end tests of docs/API.md over real HTTP against the server app, each on
//! both stores: SQLite and DynamoDB Local (`bash scripts/test-all` starts it).

use std::time::Instant;

use helpers::{Backend, assert_error, body, spawn_app, spawn_app_in, spawn_app_with};
use reqwest::Method;
use serde_json::{Value, json};
use shared::domain::Window;

/// Runs each named `async fn(Backend)` of the calling module as two tests,
/// `sqlite::name` and `dynamodb::name`. Those after `scenarios:` are long
/// load scenarios that print figures: ignored here, and run by
/// `bash scripts/scenarios` (a step of CI of their own).
macro_rules! on_both_stores {
    ($($name:ident),* $(,)? $(; scenarios: $($scenario:ident),* $(,)?)?) => {
        mod sqlite {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() { super::$name(super::Backend::Sqlite).await } )*
            $($( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                 #[ignore = "a scenario: bash scripts/scenarios runs it"]
                 async fn $scenario() { super::$scenario(super::Backend::Sqlite).await } )*)?
        }
        mod dynamodb {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() { super::$name(super::Backend::Dynamo).await } )*
            $($( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                 #[ignore = "a scenario: bash scripts/scenarios runs it"]
                 async fn $scenario() { super::$scenario(super::Backend::Dynamo).await } )*)?
        }
    };
}

mod account;
mod boards;
mod compression;
mod concurrency;
mod contract;
mod conventions;
mod faults;
mod guests;
mod helpers;
mod hostile;
mod idempotency;
mod media;
mod moderation;
mod notifications;
mod passwords;
mod prefixes;
mod process;
mod public;
mod purge;
mod reads;
mod secrets;
mod sign_in;
mod slowloris;
mod uploads;
mod web;

fn username(name: &str) -> shared::domain::Username {
    shared::domain::Username::parse(name.to_owned()).unwrap()
}

on_both_stores!(
    health_answers_ok,
    a_member_signs_up_logs_in_posts_comments_likes_and_reads,
    signing_up_twice_with_one_username_is_a_conflict,
    a_guest_post_needs_its_password_to_change_or_delete,
    a_guest_comment_is_created_and_deleted_with_its_password,
    every_field_rule_answers_validation_failed_naming_the_field,
    bodies_that_are_not_the_expected_json_are_malformed,
    bodies_over_64_kib_are_refused_with_413,
    member_routes_refuse_missing_malformed_and_forged_tokens,
    a_member_cannot_change_another_members_post,
    unknown_boards_posts_and_paths_are_404_and_wrong_methods_405,
    the_sixth_wrong_login_for_a_username_is_429_and_runs_no_hash,
    guest_password_checks_are_throttled_after_ten_failures,
    concurrent_wrong_logins_never_run_more_hashes_than_the_limit,
    a_successful_login_does_not_count_as_a_failure,
    refused_and_unanswered_logins_are_not_counted_as_failures,
    unknown_users_and_wrong_passwords_fail_alike,
    a_member_hash_at_an_old_cost_is_upgraded_at_login,
    reading_counts_views_and_listing_pages_through_everything,
    likes_over_http_are_idempotent,
    a_full_hashing_queue_answers_503_with_retry_after,
    every_response_carries_a_request_id_and_configured_origins_get_cors,
);

async fn health_answers_ok(backend: Backend) {
    let app = spawn_app(backend).await;
    let response = app.get("/health").await;
    assert_eq!(response.status(), 200);
    assert_eq!(body(response).await, json!({"status": "ok"}));
}

async fn a_member_signs_up_logs_in_posts_comments_likes_and_reads(backend: Backend) {
    let app = spawn_app(backend).await;
    let signup = app.signup("kim_01", "password-123").await;
    assert_eq!(signup.status(), 201);
    let member = body(signup).await;
    assert_eq!(member["username"], "kim_01");
    assert_eq!(member["nickname"], "kim_01!");
    assert!(member.get("password").is_none() && member.get("password_hash").is_none());

    let session = body(app.login("kim_01", "password-123").await).await;
    assert_eq!(session["token_type"], "Bearer");
    assert_eq!(session["expires_in"], 3600);
    assert_eq!(session["member"], member);
    let token = session["token"].as_str().unwrap();

    let created = app
        .request(
            Method::POST,
            "/boards/free/posts",
            Some(token),
            Some(json!({"title": " Hello ", "body": "First!"})),
        )
        .await;
    assert_eq!(created.status(), 201);
    let post = body(created).await;
    assert_eq!(post["title"], "Hello", "titles are trimmed");
    assert_eq!(
        post["author"],
        json!({"kind": "member", "member_id": member["id"], "nickname": "kim_01!"})
    );
    assert_eq!(post["comments"], json!([]));
    let id = post["id"].as_str().unwrap();

    let comment = app
        .request(
            Method::POST,
            &format!("/boards/free/posts/{id}/comments"),
            Some(token),
            Some(json!({"body": "me first"})),
        )
        .await;
    assert_eq!(comment.status(), 201);
    let comment = body(comment).await;
    let reply = app
        .request(
            Method::POST,
            &format!("/boards/free/posts/{id}/comments"),
            Some(token),
            Some(json!({"body": "a reply", "parent_id": comment["id"]})),
        )
        .await;
    assert_eq!(reply.status(), 201);
    let reply = body(reply).await;
    assert_eq!(reply["parent_id"], comment["id"]);

    // Nobody votes on their own post: another member likes it.
    let fan = app.member_token("fan_01").await;
    let liked = body(
        app.request(Method::PUT, &format!("/boards/free/posts/{id}/like"), Some(&fan), None)
            .await,
    )
    .await;
    assert_eq!(
        liked,
        json!({"liked": true, "disliked": false, "like_count": 1, "dislike_count": 0})
    );

    let read = body(app.get(&format!("/boards/free/posts/{id}")).await).await;
    assert_eq!(read["view_count"], 1);
    assert_eq!(read["like_count"], 1);
    assert_eq!(read["comment_count"], 2);
    assert_eq!(read["comments"], json!([comment, reply]));

    let updated = app
        .request(
            Method::PUT,
            &format!("/boards/free/posts/{id}"),
            Some(token),
            Some(json!({"title": "Hi", "body": "edited"})),
        )
        .await;
    assert_eq!(updated.status(), 200);
    let updated = body(updated).await;
    assert_eq!(
        (updated["title"].as_str(), updated["body"].as_str()),
        (Some("Hi"), Some("edited"))
    );
    assert_eq!(updated["comments"].as_array().unwrap().len(), 2);

    let deleted = app
        .request(Method::DELETE, &format!("/boards/free/posts/{id}"), Some(token), None)
        .await;
    assert_eq!(deleted.status(), 204);
    assert_error(
        app.get(&format!("/boards/free/posts/{id}")).await,
        404,
        "not_found",
        "post",
    )
    .await;
}

async fn signing_up_twice_with_one_username_is_a_conflict(backend: Backend) {
    let app = spawn_app(backend).await;
    assert_eq!(app.signup("lee", "password-123").await.status(), 201);
    assert_error(
        app.signup("lee", "another-password").await,
        409,
        "username_taken",
        "username",
    )
    .await;
}

async fn a_guest_post_needs_its_password_to_change_or_delete(backend: Backend) {
    let app = spawn_app(backend).await;
    let id = app.guest_post("guest-pw").await;
    let path = format!("/boards/free/posts/{id}/guest");
    let wrong = app
        .request(
            Method::PUT,
            &path,
            None,
            Some(json!({"password": "nope", "title": "x", "body": "y"})),
        )
        .await;
    assert_error(wrong, 403, "wrong_password", "password").await;
    let unchanged = body(app.get(&format!("/boards/free/posts/{id}")).await).await;
    assert_eq!(unchanged["title"], "guest title");

    let right = app
        .request(
            Method::PUT,
            &path,
            None,
            Some(json!({"password": "guest-pw", "title": "new", "body": "newer"})),
        )
        .await;
    assert_eq!(right.status(), 200);
    let post = body(right).await;
    assert_eq!(
        (post["title"].as_str(), post["author"]["kind"].as_str()),
        (Some("new"), Some("guest"))
    );
    assert!(post["author"].get("member_id").is_none());

    let wrong = app
        .request(Method::DELETE, &path, None, Some(json!({"password": "nope"})))
        .await;
    assert_error(wrong, 403, "wrong_password", "password").await;
    assert_eq!(
        app.request(Method::DELETE, &path, None, Some(json!({"password": "guest-pw"})))
            .await
            .status(),
        204
    );
    assert_error(
        app.get(&format!("/boards/free/posts/{id}")).await,
        404,
        "not_found",
        "post",
    )
    .await;
}

async fn a_guest_comment_is_created_and_deleted_with_its_password(backend: Backend) {
    let app = spawn_app(backend).await;
    let token = app.member_token("author").await;
    let id = app.member_post(&token).await;
    let created = app
        .post(
            &format!("/boards/free/posts/{id}/comments/guest"),
            json!({"nickname": " Lee ", "password": "pw12", "body": "hello"}),
        )
        .await;
    assert_eq!(created.status(), 201);
    let comment = body(created).await;
    assert_eq!(comment["author"]["kind"], "guest");
    assert_eq!(comment["author"]["nickname"], "Lee");
    assert_eq!(
        comment["author"]["tag"].as_str().map(str::len),
        Some(8),
        "a guest shows a tag"
    );
    let path = format!(
        "/boards/free/posts/{id}/comments/{}/guest",
        comment["id"].as_str().unwrap()
    );
    assert_error(
        app.request(Method::DELETE, &path, None, Some(json!({"password": "pw13"})))
            .await,
        403,
        "wrong_password",
        "password",
    )
    .await;
    assert_eq!(
        app.request(Method::DELETE, &path, None, Some(json!({"password": "pw12"})))
            .await
            .status(),
        204
    );
    assert_error(
        app.request(Method::DELETE, &path, None, Some(json!({"password": "pw12"})))
            .await,
        404,
        "not_found",
        "comment",
    )
    .await;
    let post = body(app.get(&format!("/boards/free/posts/{id}")).await).await;
    assert_eq!(post["comment_count"], 0);
}

async fn every_field_rule_answers_validation_failed_naming_the_field(backend: Backend) {
    let app = spawn_app(backend).await;
    let token = app.member_token("validator").await;
    let id = app.member_post(&token).await;
    let long = |n: usize| "x".repeat(n);
    let guest = |nickname: &str, password: &str, title: &str, body: &str| json!({"nickname": nickname, "password": password, "title": title, "body": body});
    let cases: Vec<(Method, String, Option<&str>, Value, &str)> = vec![
        (
            Method::POST,
            "/members".into(),
            None,
            json!({"username": "ab", "password": "password-1", "nickname": "n"}),
            "username",
        ),
        (
            Method::POST,
            "/members".into(),
            None,
            json!({"username": "Bad!", "password": "password-1", "nickname": "n"}),
            "username",
        ),
        (
            Method::POST,
            "/members".into(),
            None,
            json!({"username": "okname", "password": "short", "nickname": "n"}),
            "password",
        ),
        (
            Method::POST,
            "/members".into(),
            None,
            json!({"username": "okname", "password": long(257), "nickname": "n"}),
            "password",
        ),
        (
            Method::POST,
            "/members".into(),
            None,
            json!({"username": "okname", "password": "password-1", "nickname": "   "}),
            "nickname",
        ),
        (
            Method::POST,
            "/members".into(),
            None,
            json!({"username": "okname", "password": "password-1", "nickname": long(31)}),
            "nickname",
        ),
        (
            Method::POST,
            "/members".into(),
            None,
            json!({"username": "okname", "password": "password-1"}),
            "nickname",
        ),
        (
            Method::POST,
            "/sessions".into(),
            None,
            json!({"password": "password-1"}),
            "username",
        ),
        (
            Method::POST,
            "/boards/free/posts".into(),
            Some(&token),
            json!({"title": " ", "body": "b"}),
            "title",
        ),
        (
            Method::POST,
            "/boards/free/posts".into(),
            Some(&token),
            json!({"title": long(201), "body": "b"}),
            "title",
        ),
        (
            Method::POST,
            "/boards/free/posts".into(),
            Some(&token),
            json!({"title": "t", "body": long(20_001)}),
            "body",
        ),
        (
            Method::POST,
            "/boards/free/posts".into(),
            Some(&token),
            json!({"title": "t"}),
            "body",
        ),
        (
            Method::POST,
            format!("/boards/free/posts/{id}/comments"),
            Some(&token),
            json!({"body": long(2001)}),
            "body",
        ),
        (
            Method::POST,
            format!("/boards/free/posts/{id}/comments"),
            Some(&token),
            json!({"body": "b", "parent_id": "nope"}),
            "parent_id",
        ),
        (
            Method::POST,
            "/boards/free/posts/guest".into(),
            None,
            guest("n", "abc", "t", "b"),
            "password",
        ),
        (
            Method::POST,
            "/boards/free/posts/guest".into(),
            None,
            guest("a\u{1}b", "abcd", "t", "b"),
            "nickname",
        ),
        (
            Method::POST,
            format!("/boards/free/posts/{id}/comments/guest"),
            None,
            json!({"nickname": "n", "password": "abcd", "body": ""}),
            "body",
        ),
        (
            Method::GET,
            "/boards/free/posts?limit=0".into(),
            None,
            Value::Null,
            "limit",
        ),
        (
            Method::GET,
            "/boards/free/posts?limit=101".into(),
            None,
            Value::Null,
            "limit",
        ),
        (
            Method::GET,
            "/boards/free/posts?cursor=garbage".into(),
            None,
            Value::Null,
            "cursor",
        ),
    ];
    for (method, path, token, request, field) in cases {
        let body = (!request.is_null()).then_some(request.clone());
        let response = app.request(method.clone(), &path, token, body).await;
        assert_eq!(response.status(), 400, "{method} {path} {request}");
        let value = helpers::body(response).await;
        assert_eq!(
            value["error"]["code"], "validation_failed",
            "{method} {path} {request}: {value}"
        );
        // The field by name, and the message starting with it.
        assert_eq!(value["error"]["field"], field, "{method} {path} {request}: {value}");
        assert!(
            value["error"]["message"].as_str().unwrap().starts_with(field),
            "{value} should name {field}"
        );
    }
    // Nothing was written by any of them.
    let page = helpers::body(app.get("/boards/free/posts").await).await;
    assert_eq!(page["posts"].as_array().unwrap().len(), 1);
    assert_eq!(page["posts"][0]["comment_count"], 0);
}

async fn bodies_that_are_not_the_expected_json_are_malformed(backend: Backend) {
    let app = spawn_app(backend).await;
    for (raw, mentions) in [
        (b"not json".to_vec(), "JSON"),
        (b"[1, 2]".to_vec(), "object"),
        (
            b"{\"username\": 12, \"password\": \"password-1\", \"nickname\": \"n\"}".to_vec(),
            "username",
        ),
        (vec![0xff, 0xfe, 0x00], "UTF-8"),
        (
            format!("{}{}", "{\"a\":".repeat(200), "}".repeat(200)).into_bytes(),
            "JSON",
        ),
    ] {
        assert_error(
            app.raw(Method::POST, "/members", raw).await,
            400,
            "malformed_json",
            mentions,
        )
        .await;
    }
    // Unknown fields are ignored.
    let extra = json!({"username": "extra", "password": "password-1", "nickname": "n", "admin": true});
    assert_eq!(app.post("/members", extra).await.status(), 201);
}

async fn bodies_over_64_kib_are_refused_with_413(backend: Backend) {
    let app = spawn_app(backend).await;
    let big = json!({"nickname": "n", "password": "abcd", "title": "t", "body": "x".repeat(70_000)});
    assert_error(
        app.post("/boards/free/posts/guest", big).await,
        413,
        "payload_too_large",
        "65536",
    )
    .await;
    // A 10 MB body is refused from its Content-Length, before it is read:
    // send only the headers and a little of the body, and the answer comes.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(app.address.trim_start_matches("http://"))
        .await
        .unwrap();
    let head =
        "POST /members HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&[b'x'; 4096]).await.unwrap();
    let mut answer = vec![0; 4096];
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("payload_too_large"), "{answer}");
    assert!(
        answer.contains("connection: close"),
        "the unread connection is closed: {answer}"
    );
    assert_eq!(app.get("/health").await.status(), 200, "the server keeps serving");
}

async fn member_routes_refuse_missing_malformed_and_forged_tokens(backend: Backend) {
    let app = spawn_app(backend).await;
    let token = app.member_token("tokens").await;
    let id = app.member_post(&token).await;
    let forged = {
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        parts[2] = parts[2].chars().rev().collect();
        parts.join(".")
    };
    for bad in [None, Some("garbage"), Some(forged.as_str())] {
        let response = app
            .request(
                Method::POST,
                "/boards/free/posts",
                bad,
                Some(json!({"title": "t", "body": "b"})),
            )
            .await;
        assert_error(response, 401, "unauthorized", "token").await;
        let like = app
            .request(Method::PUT, &format!("/boards/free/posts/{id}/like"), bad, None)
            .await;
        assert_eq!(like.status(), 401);
    }
    let basic = app
        .client
        .post(format!("{}/boards/free/posts", app.address))
        .header("authorization", "Basic a2ltOnB3")
        .json(&json!({"title": "t", "body": "b"}))
        .send()
        .await
        .unwrap();
    assert_error(basic, 401, "unauthorized", "Bearer").await;
}

async fn a_member_cannot_change_another_members_post(backend: Backend) {
    let app = spawn_app(backend).await;
    let owner = app.member_token("owner").await;
    let other = app.member_token("other").await;
    let id = app.member_post(&owner).await;
    let path = format!("/boards/free/posts/{id}");
    let edit = app
        .request(
            Method::PUT,
            &path,
            Some(&other),
            Some(json!({"title": "mine", "body": "now"})),
        )
        .await;
    assert_error(edit, 403, "forbidden", "member").await;
    assert_error(
        app.request(Method::DELETE, &path, Some(&other), None).await,
        403,
        "forbidden",
        "member",
    )
    .await;
    // A guest post cannot be changed through the member route either.
    let guest = app.guest_post("guest-pw").await;
    let edit = app
        .request(
            Method::PUT,
            &format!("/boards/free/posts/{guest}"),
            Some(&owner),
            Some(json!({"title": "t", "body": "b"})),
        )
        .await;
    assert_eq!(edit.status(), 403);
    assert_eq!(body(app.get(&path).await).await["title"], "t");
}

async fn unknown_boards_posts_and_paths_are_404_and_wrong_methods_405(backend: Backend) {
    let app = spawn_app(backend).await;
    let token = app.member_token("finder").await;
    let id = app.member_post(&token).await;
    assert_error(app.get("/boards/nope/posts").await, 404, "not_found", "board").await;
    assert_error(
        app.get(&format!("/boards/qna/posts/{id}")).await,
        404,
        "not_found",
        "post",
    )
    .await;
    assert_error(
        app.get("/boards/free/posts/01ARZ3NDEKTSV4RRFFQ69G5FAV").await,
        404,
        "not_found",
        "post",
    )
    .await;
    assert_error(app.get("/boards/free/posts/..%2F..%2Fetc").await, 404, "not_found", "").await;
    assert_error(
        app.get("/boards/free/posts/1%27%20OR%201=1").await,
        404,
        "not_found",
        "post",
    )
    .await;
    assert_error(app.get("/nowhere").await, 404, "not_found", "path").await;
    assert_error(
        app.request(Method::PATCH, "/members", None, None).await,
        405,
        "method_not_allowed",
        "PATCH",
    )
    .await;
    assert_error(
        app.request(Method::DELETE, "/sessions", None, None).await,
        405,
        "method_not_allowed",
        "DELETE",
    )
    .await;
    let like_other_board = app
        .request(Method::PUT, &format!("/boards/qna/posts/{id}/like"), Some(&token), None)
        .await;
    assert_error(like_other_board, 404, "not_found", "post").await;
}

async fn the_sixth_wrong_login_for_a_username_is_429_and_runs_no_hash(backend: Backend) {
    let app = spawn_app(backend).await;
    assert_eq!(app.signup("target", "password-123").await.status(), 201);
    for _ in 0..5 {
        assert_error(
            app.login("target", "wrong-password").await,
            401,
            "invalid_credentials",
            "incorrect",
        )
        .await;
    }
    let runs_before = app.state.app.hashing().unwrap().runs();
    let sixth = app.login("target", "wrong-password").await;
    let retry_after: u64 = sixth.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=300).contains(&retry_after));
    assert_error(sixth, 429, "too_many_attempts", "retry").await;
    // Even the right password waits out the window: the check comes before any hashing.
    assert_eq!(app.login("target", "password-123").await.status(), 429);
    assert_eq!(
        app.state.app.hashing().unwrap().runs(),
        runs_before,
        "no hash ran for refused attempts"
    );
    // Other usernames are not affected.
    assert_eq!(app.signup("bystander", "password-123").await.status(), 201);
    assert_eq!(app.login("bystander", "password-123").await.status(), 200);
}

async fn concurrent_wrong_logins_never_run_more_hashes_than_the_limit(backend: Backend) {
    let app = spawn_app(backend).await;
    assert_eq!(app.signup("besieged", "password-123").await.status(), 201);
    let runs_before = app.state.app.hashing().unwrap().runs();
    let attempts = (0..30).map(|_| {
        let (client, address) = (app.client.clone(), app.address.clone());
        tokio::spawn(async move {
            client
                .post(format!("{address}/sessions"))
                .json(&json!({"username": "besieged", "password": "wrong-password"}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    });
    let statuses: Vec<u16> = futures::future::join_all(attempts)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let hashed = app.state.app.hashing().unwrap().runs() - runs_before;
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 5, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 25, "{statuses:?}");
    assert_eq!(hashed, 5, "exactly the allowed attempts reached the hash");
}

async fn a_successful_login_does_not_count_as_a_failure(backend: Backend) {
    let app = spawn_app(backend).await;
    assert_eq!(app.signup("regular", "password-123").await.status(), 201);
    for _ in 0..8 {
        assert_eq!(app.login("regular", "password-123").await.status(), 200);
    }
    for _ in 0..5 {
        assert_eq!(app.login("regular", "wrong-password").await.status(), 401);
    }
    assert_eq!(app.login("regular", "wrong-password").await.status(), 429);
}

/// Only a wrong password counts: a login refused (429, too many in flight
/// from one address) or left without a verdict (503, hashing full) gives its
/// attempt back, so a burst of good logins does not lock the address out.
async fn refused_and_unanswered_logins_are_not_counted_as_failures(backend: Backend) {
    let app = spawn_app_with(
        backend,
        &[
            ("MEMBER_TIER", "bcrypt:8"),
            ("HASH_WORKERS", "1"),
            ("HASH_QUEUE", "2"),
            ("LIMIT_LOGIN_ADDRESS", "3/5m"),
        ],
    )
    .await;
    for i in 0..8 {
        assert_eq!(app.signup(&format!("burst_{i}"), "password-123").await.status(), 201);
    }
    let windows = |now| [Window::containing(now, 300), Window::containing(now + 5, 300)];
    let before = windows(shared::app::throttle::unix_now());
    let logins = (0..8).map(|i| {
        let app = &app;
        async move { app.login(&format!("burst_{i}"), "password-123").await.status().as_u16() }
    });
    let statuses = futures::future::join_all(logins).await;
    assert!(statuses.iter().all(|s| [200, 429, 503].contains(s)), "{statuses:?}");
    assert!(
        statuses.contains(&200) && statuses.iter().any(|s| *s != 200),
        "{statuses:?}"
    );
    for window in before {
        let counted = app
            .state
            .app
            .store()
            .failures(&shared::store::AttemptKey("login:address:127.0.0.1".into()), window)
            .await
            .unwrap();
        assert_eq!(counted, 0, "no wrong password was tried: {statuses:?}");
    }
    assert_eq!(
        app.login("burst_0", "password-123").await.status(),
        200,
        "not locked out"
    );
}

async fn guest_password_checks_are_throttled_after_ten_failures(backend: Backend) {
    let app = spawn_app(backend).await;
    let id = app.guest_post("right-pw").await;
    let path = format!("/boards/free/posts/{id}/guest");
    for _ in 0..10 {
        let wrong = app
            .request(Method::DELETE, &path, None, Some(json!({"password": "wrong"})))
            .await;
        assert_eq!(wrong.status(), 403);
    }
    let runs_before = app.state.app.hashing().unwrap().runs();
    let refused = app
        .request(Method::DELETE, &path, None, Some(json!({"password": "right-pw"})))
        .await;
    assert!(refused.headers().contains_key("retry-after"));
    assert_error(refused, 429, "too_many_attempts", "retry").await;
    assert_eq!(app.state.app.hashing().unwrap().runs(), runs_before);
    assert_eq!(
        app.get(&format!("/boards/free/posts/{id}")).await.status(),
        200,
        "still there"
    );
}

async fn unknown_users_and_wrong_passwords_fail_alike(backend: Backend) {
    // A real member cost, so a skipped hash would show in the timing.
    let app = spawn_app_with(
        backend,
        &[
            ("MEMBER_TIER", "bcrypt:8"),
            ("LIMIT_LOGIN_USER_ADDRESS", "100/5m"),
            ("LIMIT_LOGIN_ADDRESS", "100/5m"),
        ],
    )
    .await;
    assert_eq!(app.signup("known", "password-123").await.status(), 201);
    let (mut known_ms, mut unknown_ms) = (Vec::new(), Vec::new());
    let mut bodies = Vec::new();
    for _ in 0..7 {
        for (username, times) in [("known", &mut known_ms), ("unknown", &mut unknown_ms)] {
            let runs = app.hashes();
            let started = Instant::now();
            let response = app.login(username, "wrong-password").await;
            times.push(started.elapsed().as_secs_f64() * 1e3);
            assert_eq!(response.status(), 401);
            assert_eq!(
                app.hashes(),
                runs + 1,
                "{username}: one verify at the member tier, a dummy for nobody"
            );
            bodies.push(body(response).await);
        }
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "identical bodies: {bodies:?}");
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (known, unknown) = (median(&mut known_ms), median(&mut unknown_ms));
    // Both spend one bcrypt:8 verify (~20 ms; asserted above by the count,
    // which a loaded machine cannot blur as it did a ratio of these times:
    // 59.6 vs 165.6 ms once in CI); without the dummy hash the unknown user
    // would answer in about 1 ms.
    println!("median of 7 wrong logins: known user {known:.1} ms, unknown user {unknown:.1} ms");
}

async fn a_member_hash_at_an_old_cost_is_upgraded_at_login(backend: Backend) {
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let table = format!("e2e-{}", shared::domain::new_id().to_lowercase());
    let old = spawn_app_in(
        backend,
        &[("MEMBER_TIER", "bcrypt:4")],
        dir.clone(),
        Some(table.clone()),
    )
    .await;
    assert_eq!(old.signup("veteran", "password-123").await.status(), 201);
    let stored = old
        .state
        .app
        .store()
        .member_credentials(&username("veteran"))
        .await
        .unwrap()
        .unwrap()
        .password_hash;
    let stored = stored.as_str();
    assert!(stored.contains("$2b$04$"), "{stored}");

    let new = spawn_app_in(backend, &[("MEMBER_TIER", "bcrypt:5")], dir, Some(table)).await;
    assert_eq!(new.login("veteran", "password-123").await.status(), 200);
    let upgraded = new
        .state
        .app
        .store()
        .member_credentials(&username("veteran"))
        .await
        .unwrap()
        .unwrap()
        .password_hash;
    let upgraded = upgraded.as_str();
    assert!(upgraded.contains("$2b$05$"), "{upgraded}");
    assert_eq!(
        new.login("veteran", "password-123").await.status(),
        200,
        "the new hash verifies"
    );
    assert_eq!(new.login("veteran", "password-124").await.status(), 401);
}

async fn reading_counts_views_and_listing_pages_through_everything(backend: Backend) {
    let app = spawn_app(backend).await;
    let token = app.member_token("reader").await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(app.member_post(&token).await);
    }
    ids.reverse();
    for expected in 1..=3 {
        let post = body(app.get(&format!("/boards/free/posts/{}", ids[0])).await).await;
        assert_eq!(post["view_count"], expected, "the response includes its own view");
    }
    let mut seen = Vec::new();
    let mut path = "/boards/free/posts?limit=2".to_owned();
    loop {
        let page = body(app.get(&path).await).await;
        seen.extend(
            page["posts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["id"].as_str().unwrap().to_owned()),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/boards/free/posts?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, ids);
    let summary = &body(app.get("/boards/free/posts").await).await["posts"][0];
    assert_eq!(summary["view_count"], 3);
    assert!(summary.get("body").is_none(), "summaries carry no body");
}

async fn likes_over_http_are_idempotent(backend: Backend) {
    let app = spawn_app(backend).await;
    let a = app.member_token("liker_a").await;
    let b = app.member_token("liker_b").await;
    let writer = app.member_token("writer").await;
    let id = app.member_post(&writer).await;
    let path = format!("/boards/free/posts/{id}/like");
    for _ in 0..2 {
        assert_eq!(
            body(app.request(Method::PUT, &path, Some(&a), None).await).await,
            json!({"liked": true, "disliked": false, "like_count": 1, "dislike_count": 0})
        );
    }
    assert_eq!(
        body(app.request(Method::PUT, &path, Some(&b), None).await).await["like_count"],
        2
    );
    for _ in 0..2 {
        assert_eq!(
            body(app.request(Method::DELETE, &path, Some(&a), None).await).await,
            json!({"liked": false, "disliked": false, "like_count": 1, "dislike_count": 0})
        );
    }
}

async fn a_full_hashing_queue_answers_503_with_retry_after(backend: Backend) {
    let app = spawn_app_with(
        backend,
        &[("MEMBER_TIER", "bcrypt:12"), ("HASH_WORKERS", "1"), ("HASH_QUEUE", "0")],
    )
    .await;
    // The worker may still be busy a moment after the start (measuring the
    // batch break-even; longer on a loaded machine, where a rush once met
    // it busy and all four answered 503): one signup first, until served.
    let mut warm = 0;
    while app.signup("rush_warm", "password-123").await.status() != 201 {
        warm += 1;
        assert!(warm < 100, "the hashing worker never became free");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let signups = (0..4).map(|i| {
        let (client, address) = (app.client.clone(), app.address.clone());
        tokio::spawn(async move {
            client
                .post(format!("{address}/members"))
                .json(&json!({"username": format!("rush_{i}"), "password": "password-123", "nickname": "n"}))
                .send()
                .await
                .unwrap()
        })
    });
    let mut statuses = Vec::new();
    for signup in futures::future::join_all(signups).await {
        let response = signup.unwrap();
        if response.status() == 503 {
            assert!(response.headers().contains_key("retry-after"));
            assert_error(response, 503, "unavailable", "retry").await;
            statuses.push(503);
        } else {
            statuses.push(response.status().as_u16());
        }
    }
    assert!(statuses.contains(&201) && statuses.contains(&503), "{statuses:?}");
    // Refused signups wrote nothing.
    for (i, status) in statuses.iter().enumerate() {
        let stored = app
            .state
            .app
            .store()
            .member_credentials(&username(&format!("rush_{i}")))
            .await
            .unwrap();
        assert_eq!(stored.is_some(), *status == 201);
    }
}

async fn every_response_carries_a_request_id_and_configured_origins_get_cors(backend: Backend) {
    let app = spawn_app_with(backend, &[("CORS_ORIGINS", "https://board.example")]).await;
    let response = app
        .client
        .get(format!("{}/health", app.address))
        .header("origin", "https://board.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "https://board.example"
    );
    let id = response.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(id.len(), 26);
    let other = app
        .client
        .get(format!("{}/nowhere", app.address))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());
    assert_ne!(other.headers()["x-request-id"].to_str().unwrap(), id);
}

/// Passwords, tokens, hashes and the pepper never reach a log line.
#[tokio::test]
async fn the_logs_hold_no_password_hash_token_or_pepper() {
    let app = spawn_app(Backend::Sqlite).await;
    let token = app.member_token("secretive").await;
    app.guest_post("guest-secret-pw").await;
    app.login("secretive", "wrong-secret-pw").await;
    let hash = app
        .state
        .app
        .store()
        .member_credentials(&username("secretive"))
        .await
        .unwrap()
        .unwrap()
        .password_hash;
    let logs = helpers::logs().text();
    assert!(logs.contains("password hash timing"), "the logs were captured");
    for secret in [
        "password-123",
        "guest-secret-pw",
        "wrong-secret-pw",
        token.as_str(),
        hash.as_str(),
        helpers::PEPPER,
        helpers::JWT_SECRET,
        helpers::ADMIN_ENROLL_TOKEN,
    ] {
        assert!(!logs.contains(secret), "a secret reached the logs");
    }
}
