//! Concurrency end to end: racing requests over HTTP on both stores, and the
//! counts and answers that must hold however they interleave.

use futures::future::join_all;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{Backend, TestApp, body, spawn_app_with};

on_both_stores!(
    a_hundred_members_liking_and_unliking_at_once_leave_the_count_equal_to_the_likes_that_stand,
    concurrent_guest_deletes_of_one_post_answer_one_204_and_the_rest_404,
    concurrent_signups_of_one_username_answer_one_201_and_the_rest_409,
);

/// Enough hashing queue for a burst of cheap test hashes, and a per-IP login
/// limit above the burst: attempts count before they hash, so 100 logins in
/// flight at once from one address would otherwise pass the limit of 50.
async fn spawn(backend: Backend) -> TestApp {
    spawn_app_with(backend, &[("HASH_QUEUE", "512"), ("LIMIT_LOGIN_ADDRESS", "500/5m")]).await
}

async fn a_hundred_members_liking_and_unliking_at_once_leave_the_count_equal_to_the_likes_that_stand(backend: Backend) {
    let app = spawn(backend).await;
    let tokens: Vec<String> = {
        let signups = (0..100).map(|i| {
            let app = &app;
            async move { app.member_token(&format!("crowd_{i:03}")).await }
        });
        join_all(signups).await
    };
    // Written by someone outside the crowd: nobody votes on their own post.
    let writer = app.member_token("crowd_writer").await;
    let post = app.member_post(&writer).await;
    let path = format!("/boards/free/posts/{post}/like");
    // Member i likes; every third one then unlikes, every fifth likes twice.
    let members = tokens.iter().enumerate().map(|(i, token)| {
        let (app, path) = (&app, &path);
        async move {
            let mut last = None;
            let mut steps = vec![Method::PUT];
            if i % 5 == 0 {
                steps.push(Method::PUT);
            }
            if i % 3 == 0 {
                steps.push(Method::DELETE);
            }
            for method in steps {
                let response = app.request(method, path, Some(token), None).await;
                assert_eq!(response.status(), 200, "member {i}");
                last = Some(body(response).await["liked"].as_bool().unwrap());
            }
            last.unwrap()
        }
    });
    let liked: Vec<bool> = join_all(members).await;
    let standing = liked.iter().filter(|l| **l).count();
    assert_eq!(standing, 66, "the script leaves 66 likes");
    let detail = body(app.get(&format!("/boards/free/posts/{post}")).await).await;
    assert_eq!(detail["like_count"], standing);
    for (token, liked) in tokens.iter().zip(&liked) {
        let member = app.state.app.verify_token(token).unwrap().id;
        let post = shared::domain::PostId::parse(&post).unwrap();
        assert_eq!(app.state.app.store().has_liked(&post, &member).await.unwrap(), *liked);
    }
}

async fn concurrent_guest_deletes_of_one_post_answer_one_204_and_the_rest_404(backend: Backend) {
    let app = spawn(backend).await;
    let post = app.guest_post("guest-pw").await;
    let comment = app
        .post(
            &format!("/boards/free/posts/{post}/comments/guest"),
            json!({"nickname": "n", "password": "comment-pw", "body": "c"}),
        )
        .await;
    let comment = body(comment).await["id"].as_str().unwrap().to_owned();

    // Ten at once, the per-target limit: password checks count as attempts
    // while they are in flight (so that no burst hashes past the limit), and
    // an eleventh concurrent check from one address would be answered 429.
    let comment_path = format!("/boards/free/posts/{post}/comments/{comment}/guest");
    let deletes = (0..10).map(|_| {
        app.request(
            Method::DELETE,
            &comment_path,
            None,
            Some(json!({"password": "comment-pw"})),
        )
    });
    let statuses: Vec<u16> = join_all(deletes).await.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 204).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 404).count(), 9, "{statuses:?}");
    let detail = body(app.get(&format!("/boards/free/posts/{post}")).await).await;
    assert_eq!(detail["comment_count"], 0, "the comment was uncounted once");

    let post_path = format!("/boards/free/posts/{post}/guest");
    let deletes = (0..10).map(|_| app.request(Method::DELETE, &post_path, None, Some(json!({"password": "guest-pw"}))));
    let statuses: Vec<u16> = join_all(deletes).await.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 204).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 404).count(), 9, "{statuses:?}");
    assert_eq!(app.get(&format!("/boards/free/posts/{post}")).await.status(), 404);
}

async fn concurrent_signups_of_one_username_answer_one_201_and_the_rest_409(backend: Backend) {
    // Eleven wrong passwords follow for one username: lift the login throttle.
    let app = spawn_app_with(
        backend,
        &[("HASH_QUEUE", "512"), ("LIMIT_LOGIN_USER_ADDRESS", "100/5m")],
    )
    .await;
    let passwords: Vec<String> = (0..12).map(|i| format!("password-{i:02}")).collect();
    let signups = passwords.iter().map(|password| app.signup("contested", password));
    let responses = join_all(signups).await;
    let statuses: Vec<u16> = responses.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 409).count(), 11, "{statuses:?}");
    // The one that won is the one whose password logs in.
    let winner = statuses.iter().position(|s| *s == 201).unwrap();
    for (i, password) in passwords.iter().enumerate() {
        let login = app.login("contested", password).await;
        assert_eq!(login.status(), if i == winner { 200 } else { 401 }, "password {i}");
    }
}
