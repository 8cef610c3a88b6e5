//! What one user does in one step: read, like, write as a guest or a
//! member, log in, report. Each records its requests.

use rand::RngExt as _;
use reqwest::Method;
use serde_json::json;

use super::api::{CREATED, Call, OK};
use super::{Api, GUEST_PASSWORD, PASSWORD};

pub(super) async fn read_post(api: &Api, post: &str) {
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

pub(super) async fn like_toggle(api: &Api, token: &str, post: &str) {
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

pub(super) async fn guest_write(api: &Api, post: &str) {
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

pub(super) async fn member_login(api: &Api, username: &str) -> Option<String> {
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

pub(super) async fn member_write(api: &Api, token: &str, post: &str) {
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

pub(super) async fn member_login_and_write(api: &Api, username: &str, post: &str) {
    if let Some(token) = member_login(api, username).await {
        member_write(api, &token, post).await;
    }
}

/// An anonymous report of a post: the first opens it (201), the
/// rest join it (200).
pub(super) async fn report(api: &Api, post: &str) {
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
