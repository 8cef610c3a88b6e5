//! Contract v4 for clients (docs/API.md, Conventions): errors that name
//! their field, and the RateLimit headers a client paces its writes by.
//! Each on both stores.

use reqwest::{Method, Response};
use serde_json::{Value, json};

use crate::helpers::{Backend, TestApp, body, spawn_app_with};

on_both_stores!(
    an_error_about_one_input_names_it_in_field_and_other_errors_name_none,
    quota_writes_say_what_is_left_down_to_the_429_that_says_when,
    the_tightest_of_several_quotas_is_named_and_an_ipv6_client_sees_its_48,
    every_429_names_the_throttle_that_refused_and_other_answers_carry_no_pacing,
);

/// The error's `field`, or `None` when the answer carries none; asserts
/// status and code on the way.
async fn field_of(response: Response, status: u16, code: &str, what: &str) -> Option<String> {
    assert_eq!(response.status(), status, "{what}");
    let value = body(response).await;
    assert_eq!(value["error"]["code"], code, "{what}: {value}");
    let field = value["error"]
        .get("field")
        .map(|f| f.as_str().expect("field is a string").to_owned());
    if let Some(field) = &field {
        let message = value["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(field.as_str()),
            "{what}: {message:?} starts with {field}"
        );
    }
    field
}

async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    payload: Option<Value>,
) -> Response {
    let mut request = app.client.request(method, format!("{}{path}", app.address));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(payload) = payload {
        request = request.json(&payload);
    }
    request.send().await.unwrap()
}

/// docs/API.md, Conventions: body fields, query parameters and headers
/// by the names the client sent; none where no one input is at fault. (The
/// field rules of every create are in `main.rs`, each with its field.)
async fn an_error_about_one_input_names_it_in_field_and_other_errors_name_none(backend: Backend) {
    let app = spawn_app_with(backend, &[("ADMIN_USERNAMES", "boss")]).await;
    let boss = app.member_token("boss").await;
    let kim = app.member_token("kim").await;
    let post = app.member_post(&kim).await;
    let guest_post = app.guest_post("guest-pw").await;
    let ban = |extra: Value| {
        let mut payload = json!({"reason": "spam"});
        payload
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        payload
    };
    let edit = format!("/boards/free/posts/{post}");
    let guest_delete = format!("/boards/free/posts/{guest_post}/guest");
    let bad_tag = [("if-match", "not-a-tag")];
    let long_key = "k".repeat(256);
    let long_key = [("idempotency-key", long_key.as_str())];
    // (method, path, token, headers, body, status, code, field)
    type Case<'a> = (
        Method,
        &'a str,
        Option<&'a str>,
        &'a [(&'a str, &'a str)],
        Value,
        u16,
        &'a str,
        &'a str,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            Method::PUT,
            &edit,
            Some(&kim),
            &bad_tag,
            json!({"title": "t", "body": "b"}),
            400,
            "validation_failed",
            "If-Match",
        ),
        (
            Method::POST,
            "/boards/free/posts",
            Some(&kim),
            &long_key,
            json!({"title": "t", "body": "b"}),
            400,
            "validation_failed",
            "Idempotency-Key",
        ),
        (
            Method::POST,
            "/boards/free/bans",
            Some(&boss),
            &[],
            ban(json!({"post_id": post, "duration_s": 5})),
            400,
            "validation_failed",
            "duration_s",
        ),
        (
            Method::POST,
            "/boards/free/bans",
            Some(&boss),
            &[],
            ban(json!({"post_id": post, "scope": "planet"})),
            400,
            "validation_failed",
            "scope",
        ),
        (
            Method::POST,
            "/boards/free/bans",
            Some(&boss),
            &[],
            ban(json!({"member_id": "not-an-id"})),
            400,
            "validation_failed",
            "member_id",
        ),
        (
            Method::POST,
            "/boards/free/bans",
            Some(&boss),
            &[],
            json!({"post_id": post}),
            400,
            "validation_failed",
            "reason",
        ),
        (
            Method::PUT,
            "/members/me/password",
            Some(&kim),
            &[],
            json!({"current_password": "password-123", "new_password": "short"}),
            400,
            "validation_failed",
            "new_password",
        ),
        (
            Method::PUT,
            "/members/me/password",
            Some(&kim),
            &[],
            json!({"current_password": "not-kims-password", "new_password": "password-456"}),
            401,
            "invalid_credentials",
            "current_password",
        ),
        (
            Method::DELETE,
            "/members/me",
            Some(&kim),
            &[],
            json!({"password": "password-123"}),
            400,
            "validation_failed",
            "delete_content",
        ),
        (
            Method::DELETE,
            "/members/me",
            Some(&kim),
            &[],
            json!({"password": "not-kims-password", "delete_content": false}),
            401,
            "invalid_credentials",
            "password",
        ),
        (
            Method::DELETE,
            &guest_delete,
            None,
            &[],
            json!({"password": "not-it"}),
            403,
            "wrong_password",
            "password",
        ),
    ];
    let mut named = Vec::new();
    for (method, path, token, headers, payload, status, code, field) in cases {
        named.push((
            send(&app, method, path, token, headers, Some(payload)).await,
            status,
            code,
            field,
        ));
    }
    named.push((
        app.signup("kim", "password-123").await,
        409,
        "username_taken",
        "username",
    ));
    named.push((
        app.raw(
            Method::POST,
            "/members",
            br#"{"username": 12, "password": "password-1", "nickname": "n"}"#.to_vec(),
        )
        .await,
        400,
        "malformed_json",
        "username",
    ));
    for (response, status, code, field) in named {
        let what = format!("{code} about {field}");
        assert_eq!(
            field_of(response, status, code, &what).await.as_deref(),
            Some(field),
            "{what}"
        );
    }
    let unnamed: Vec<(Response, u16, &str, &str)> = vec![
        (
            app.login("kim", "not-kims-password").await,
            401,
            "invalid_credentials",
            "a failed login (one answer for every cause)",
        ),
        (
            app.login("nobody_here", "password-123").await,
            401,
            "invalid_credentials",
            "a login of nobody",
        ),
        (
            app.raw(Method::POST, "/members", b"not json".to_vec()).await,
            400,
            "malformed_json",
            "a body that is not JSON",
        ),
        (
            send(
                &app,
                Method::POST,
                "/boards/free/bans",
                Some(&boss),
                &[],
                Some(ban(json!({"post_id": post, "member_id": "01J00000000000000000000000"}))),
            )
            .await,
            400,
            "validation_failed",
            "a ban naming two targets",
        ),
        (
            app.get("/boards/free/posts/01J00000000000000000000000").await,
            404,
            "not_found",
            "an unknown post",
        ),
        (
            send(
                &app,
                Method::POST,
                &format!("/boards/free/posts/{post}"),
                Some(&kim),
                &[],
                None,
            )
            .await,
            405,
            "method_not_allowed",
            "a wrong method",
        ),
    ];
    for (response, status, code, what) in unnamed {
        assert_eq!(field_of(response, status, code, what).await, None, "{what}");
    }
}

fn header(response: &Response, name: &str) -> Option<String> {
    response.headers().get(name).map(|v| v.to_str().unwrap().to_owned())
}

/// `"name";r=N;t=S` read back: (name, remaining, seconds).
fn pacing(response: &Response) -> (String, u64, u64) {
    let value = header(response, "ratelimit").expect("a RateLimit header");
    let (name, params) = value.split_once(';').expect("a name and parameters");
    let param = |key: &str| -> u64 {
        params
            .split(';')
            .find_map(|p| p.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{key} in {value}"))
            .parse()
            .unwrap()
    };
    (name.trim_matches('"').to_owned(), param("r"), param("t"))
}

/// docs/API.md, Conventions: each create under the per-address quota
/// says what is left; the create over it is `429` naming the same policy,
/// 0 left, and `t` equal to `Retry-After`. A replay counts nothing.
async fn quota_writes_say_what_is_left_down_to_the_429_that_says_when(backend: Backend) {
    let app = spawn_app_with(
        backend,
        &[("LIMIT_CREATES_ADDRESS", "3/10m"), ("LIMIT_SIGNUPS_ADDRESS", "5/1h")],
    )
    .await;
    let guest = json!({"nickname": "n", "password": "guest-pw", "title": "t", "body": "b"});
    let mut left = Vec::new();
    for key in ["first", "second"] {
        let created = send(
            &app,
            Method::POST,
            "/boards/free/posts/guest",
            None,
            &[("idempotency-key", key)],
            Some(guest.clone()),
        )
        .await;
        assert_eq!(created.status(), 201);
        assert_eq!(
            header(&created, "ratelimit-policy").as_deref(),
            Some(r#""creates";q=3;w=600"#)
        );
        let (name, remaining, reset) = pacing(&created);
        assert_eq!(name, "creates");
        assert!((1..=600).contains(&reset), "t={reset}");
        left.push(remaining);
    }
    assert_eq!(left, [2, 1]);
    // A replay creates nothing and counts nothing.
    let replay = send(
        &app,
        Method::POST,
        "/boards/free/posts/guest",
        None,
        &[("idempotency-key", "second")],
        Some(guest.clone()),
    )
    .await;
    assert_eq!(header(&replay, "idempotent-replayed").as_deref(), Some("true"));
    assert_eq!(pacing(&replay).1, 1);
    let last = app.post("/boards/free/posts/guest", guest.clone()).await;
    assert_eq!((last.status().as_u16(), pacing(&last).1), (201, 0));
    let refused = app.post("/boards/free/posts/guest", guest.clone()).await;
    assert_eq!(refused.status(), 429);
    let (name, remaining, reset) = pacing(&refused);
    assert_eq!((name.as_str(), remaining), ("creates", 0));
    assert_eq!(header(&refused, "retry-after"), Some(reset.to_string()));
    assert_eq!(
        header(&refused, "ratelimit-policy").as_deref(),
        Some(r#""creates";q=3;w=600"#)
    );
    // Signups are under their own quota.
    let signup = app.signup("paced", "password-123").await;
    assert_eq!(signup.status(), 201);
    assert_eq!(
        header(&signup, "ratelimit-policy").as_deref(),
        Some(r#""signups";q=5;w=3600"#)
    );
    assert_eq!(pacing(&signup).0, "signups");
    assert_eq!(pacing(&signup).1, 4);
}

/// A member's create counts per address and per member: the policy lists
/// both, `RateLimit` names the one with less left. Through a trusted proxy
/// an IPv6 client also counts per /48 at 8 times the number.
async fn the_tightest_of_several_quotas_is_named_and_an_ipv6_client_sees_its_48(backend: Backend) {
    let app = spawn_app_with(
        backend,
        &[
            ("LIMIT_CREATES_ADDRESS", "5/10m"),
            ("LIMIT_CREATES_MEMBER", "2/1h"),
            ("TRUSTED_PROXIES", "127.0.0.1/32"),
        ],
    )
    .await;
    let token = app.member_token("busy").await;
    let post = json!({"title": "t", "body": "b"});
    let created = app
        .request_from(
            "2001:db8:7:1::9",
            Method::POST,
            "/boards/free/posts",
            Some(&token),
            Some(post.clone()),
        )
        .await;
    assert_eq!(created.status(), 201);
    assert_eq!(
        header(&created, "ratelimit-policy").as_deref(),
        Some(r#""creates";q=5;w=600, "creates-48";q=40;w=600, "creates-member";q=2;w=3600"#)
    );
    let (name, remaining, reset) = pacing(&created);
    assert_eq!((name.as_str(), remaining), ("creates-member", 1));
    assert!(reset > 0 && reset <= 3600, "t={reset}");
    // The member's quota refuses first, and says so.
    app.request_from(
        "2001:db8:7:1::9",
        Method::POST,
        "/boards/free/posts",
        Some(&token),
        Some(post.clone()),
    )
    .await;
    let refused = app
        .request_from(
            "2001:db8:7:2::9",
            Method::POST,
            "/boards/free/posts",
            Some(&token),
            Some(post),
        )
        .await;
    assert_eq!(refused.status(), 429);
    assert_eq!(pacing(&refused).0, "creates-member");
    assert_eq!(pacing(&refused).1, 0);
}

/// Every `429`, a password throttle's too: the limit that refused, 0 left,
/// `t` as `Retry-After`. Reads, and answers of routes under no quota, carry
/// none; a login is not a write and is paced only when refused.
async fn every_429_names_the_throttle_that_refused_and_other_answers_carry_no_pacing(backend: Backend) {
    let app = spawn_app_with(backend, &[("LIMIT_LOGIN_USER_ADDRESS", "2/5m")]).await;
    let token = app.member_token("throttled").await;
    for _ in 0..2 {
        let wrong = app.login("throttled", "wrong-password").await;
        assert_eq!(wrong.status(), 401);
        assert_eq!(header(&wrong, "ratelimit"), None);
    }
    let refused = app.login("throttled", "wrong-password").await;
    assert_eq!(refused.status(), 429);
    let (name, remaining, reset) = pacing(&refused);
    assert_eq!((name.as_str(), remaining), ("login-failures", 0));
    assert_eq!(header(&refused, "retry-after"), Some(reset.to_string()));
    assert!(
        header(&refused, "ratelimit-policy")
            .unwrap()
            .starts_with(r#""login-failures";q=2;w=300"#)
    );
    // Another member's post: nobody votes on their own.
    let writer = app.member_token("quiet_writer").await;
    let post = app.member_post(&writer).await;
    for quiet in [
        app.get("/boards/free/posts").await,
        app.get(&format!("/boards/free/posts/{post}")).await,
        app.request(
            Method::PUT,
            &format!("/boards/free/posts/{post}/like"),
            Some(&token),
            None,
        )
        .await,
        app.get("/health").await,
    ] {
        assert!(quiet.status().is_success());
        assert_eq!(header(&quiet, "ratelimit"), None);
        assert_eq!(header(&quiet, "ratelimit-policy"), None);
    }
}
