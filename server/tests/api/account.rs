//! A member's own account (docs/API.md, Accounts) over real HTTP, each
//! on both stores: roles, password change, sign-out everywhere, their own
//! posts and comments, and deletion both ways with every count exact.

use reqwest::Method;
use serde_json::{Value, json};
use shared::domain::{BoardSlug, MemberId, PostId, PostKey};

use crate::helpers::{Backend, TestApp, assert_error, body, spawn_app_with};

const PASSWORD: &str = "password-123";

async fn account_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, &[("ADMIN_USERNAMES", "boss")]).await
}

/// A member: (id, token).
async fn member(app: &TestApp, username: &str) -> (String, String) {
    let signup = app.signup(username, PASSWORD).await;
    assert_eq!(signup.status(), 201);
    let id = body(signup).await["id"].as_str().unwrap().to_owned();
    (id, token(app, username, PASSWORD).await)
}

async fn token(app: &TestApp, username: &str, password: &str) -> String {
    let session = app.login(username, password).await;
    assert_eq!(session.status(), 200, "login of {username}");
    body(session).await["token"].as_str().unwrap().to_owned()
}

async fn me(app: &TestApp, token: &str) -> reqwest::Response {
    app.request(Method::GET, "/members/me", Some(token), None).await
}

/// A member post on `board`; its id.
async fn post_on(app: &TestApp, token: &str, board: &str, title: &str) -> String {
    let response = app
        .request(
            Method::POST,
            &format!("/boards/{board}/posts"),
            Some(token),
            Some(json!({"title": title, "body": "b"})),
        )
        .await;
    assert_eq!(response.status(), 201);
    body(response).await["id"].as_str().unwrap().to_owned()
}

/// A member comment on a post of `board`; its id.
async fn comment_on(app: &TestApp, token: &str, board: &str, post: &str, parent: Option<&str>) -> String {
    let mut payload = json!({"body": "a comment"});
    if let Some(parent) = parent {
        payload["parent_id"] = json!(parent);
    }
    let response = app
        .request(
            Method::POST,
            &format!("/boards/{board}/posts/{post}/comments"),
            Some(token),
            Some(payload),
        )
        .await;
    assert_eq!(response.status(), 201);
    body(response).await["id"].as_str().unwrap().to_owned()
}

async fn like(app: &TestApp, token: &str, board: &str, post: &str) {
    let path = format!("/boards/{board}/posts/{post}/like");
    assert_eq!(app.request(Method::PUT, &path, Some(token), None).await.status(), 200);
}

async fn delete_me(app: &TestApp, token: &str, password: &str, delete_content: bool) -> reqwest::Response {
    app.request(
        Method::DELETE,
        "/members/me",
        Some(token),
        Some(json!({"password": password, "delete_content": delete_content})),
    )
    .await
}

/// `(like_count, comment_count)` of a post, and its body.
async fn post(app: &TestApp, board: &str, id: &str) -> (u64, u64, Value) {
    let response = app.get(&format!("/boards/{board}/posts/{id}")).await;
    assert_eq!(response.status(), 200, "post {id}");
    let detail = body(response).await;
    let counts = (
        detail["like_count"].as_u64().unwrap(),
        detail["comment_count"].as_u64().unwrap(),
    );
    (counts.0, counts.1, detail)
}

/// Every page of `path` (a listing keyed `key`), `limit` at a time: the ids in order.
async fn all_pages(app: &TestApp, token: &str, path: &str, key: &str, limit: usize) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let url = match &cursor {
            Some(c) => format!("{path}?limit={limit}&cursor={c}"),
            None => format!("{path}?limit={limit}"),
        };
        let response = app.request(Method::GET, &url, Some(token), None).await;
        assert_eq!(response.status(), 200, "{url}");
        let page = body(response).await;
        let items = page[key].as_array().unwrap();
        assert!(items.len() <= limit);
        ids.extend(items.iter().map(|i| i["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return ids,
        }
    }
}

async fn assert_revoked(app: &TestApp, token: &str) {
    let response = me(app, token).await;
    assert_eq!(response.status(), 401);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(challenge.contains("invalid_token"), "{challenge}");
    assert_error(response, 401, "unauthorized", "revoked").await;
}

on_both_stores!(
    a_member_reads_their_account_and_roles,
    a_password_change_revokes_every_earlier_token_and_the_old_password,
    a_wrong_current_password_counts_as_a_failed_login,
    signing_out_everywhere_ends_every_token_at_once,
    own_posts_and_comments_page_newest_first_across_boards_without_gaps,
    deleting_an_account_with_its_content_keeps_every_count_exact,
    deleting_an_account_keeping_its_content_leaves_a_deleted_member,
    an_interrupted_deletion_is_finished_by_the_next_one,
    account_bodies_name_the_field_they_break,
    an_unclaimed_admin_name_is_taken_unless_the_signup_carries_the_enroll_token,
    without_an_enroll_token_configured_an_unclaimed_admin_name_cannot_be_signed_up,
);

/// A signup, with `Admin-Enroll-Token: enroll` when given.
async fn signup_with(app: &TestApp, username: &str, enroll: Option<&str>) -> reqwest::Response {
    let mut request = app
        .client
        .post(format!("{}/members", app.address))
        .json(&json!({"username": username, "password": PASSWORD, "nickname": "n"}));
    if let Some(enroll) = enroll {
        request = request.header("admin-enroll-token", enroll);
    }
    request.send().await.unwrap()
}

/// docs/API.md, Hardening: whoever signed up a listed admin name first
/// was admin.
async fn an_unclaimed_admin_name_is_taken_unless_the_signup_carries_the_enroll_token(backend: Backend) {
    let app = account_app(backend).await;
    let warned = crate::helpers::logs().text_since(app.logs_from);
    assert!(
        warned.contains("ADMIN_USERNAMES names an account nobody has signed up yet") && warned.contains("boss"),
        "a warning names the unclaimed admin name at start"
    );
    for enroll in [None, Some("not-the-token-0123456789"), Some("")] {
        let squatter = signup_with(&app, "boss", enroll).await;
        assert_error(squatter, 409, "username_taken", "username").await;
    }
    let login = app.login("boss", PASSWORD).await;
    assert_eq!(login.status(), 401, "no account was made");
    // Other names ignore the header either way.
    assert_eq!(signup_with(&app, "plain", None).await.status(), 201);
    assert_eq!(
        signup_with(&app, "plain2", Some("whatever-it-says")).await.status(),
        201
    );

    let enrolled = signup_with(&app, "boss", Some(crate::helpers::ADMIN_ENROLL_TOKEN)).await;
    assert_eq!(enrolled.status(), 201);
    let boss = token(&app, "boss", PASSWORD).await;
    assert_eq!(body(me(&app, &boss).await).await["roles"]["admin"], true);
    // Claimed now: taken for everyone, the token no longer matters.
    let again = signup_with(&app, "boss", Some(crate::helpers::ADMIN_ENROLL_TOKEN)).await;
    assert_error(again, 409, "username_taken", "username").await;
}

async fn without_an_enroll_token_configured_an_unclaimed_admin_name_cannot_be_signed_up(backend: Backend) {
    let app = spawn_app_with(backend, &[("ADMIN_USERNAMES", "boss"), ("ADMIN_ENROLL_TOKEN", "")]).await;
    for enroll in [None, Some(crate::helpers::ADMIN_ENROLL_TOKEN), Some("")] {
        assert_error(
            signup_with(&app, "boss", enroll).await,
            409,
            "username_taken",
            "username",
        )
        .await;
    }
    assert_eq!(signup_with(&app, "plain", None).await.status(), 201);
}

async fn a_member_reads_their_account_and_roles(backend: Backend) {
    let app = account_app(backend).await;
    let (_, boss) = member(&app, "boss").await;
    let (kim_id, kim) = member(&app, "kim").await;
    assert_error(app.get("/members/me").await, 401, "unauthorized", "Bearer").await;

    let mine = body(me(&app, &kim).await).await;
    assert_eq!(mine["id"], kim_id.as_str());
    assert_eq!(mine["username"], "kim");
    assert_eq!(mine["nickname"], "kim!");
    assert!(mine["created_at"].is_string());
    assert_eq!(mine["roles"], json!({"admin": false, "moderates": []}));
    assert!(mine.get("password_hash").is_none());

    let appointed = app
        .request(
            Method::PUT,
            &format!("/boards/qna/moderators/{kim_id}"),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(appointed.status(), 204);
    assert_eq!(body(me(&app, &kim).await).await["roles"]["moderates"], json!(["qna"]));
    assert_eq!(body(me(&app, &boss).await).await["roles"]["admin"], true);
}

async fn a_password_change_revokes_every_earlier_token_and_the_old_password(backend: Backend) {
    let app = account_app(backend).await;
    let (_, first) = member(&app, "kim").await;
    let second = token(&app, "kim", PASSWORD).await;
    let change = |current: &'static str, new: &'static str| {
        let app = &app;
        let first = first.clone();
        async move {
            app.request(
                Method::PUT,
                "/members/me/password",
                Some(&first),
                Some(json!({"current_password": current, "new_password": new})),
            )
            .await
        }
    };
    assert_error(
        change("not-the-password", "new-password-456").await,
        401,
        "invalid_credentials",
        "",
    )
    .await;
    assert_eq!(
        me(&app, &first).await.status(),
        200,
        "a wrong current password changes nothing"
    );

    assert_eq!(change(PASSWORD, "new-password-456").await.status(), 204);
    assert_revoked(&app, &first).await;
    assert_revoked(&app, &second).await;
    let write = app
        .request(
            Method::POST,
            "/boards/free/posts",
            Some(&second),
            Some(json!({"title": "t", "body": "b"})),
        )
        .await;
    assert_eq!(write.status(), 401, "every member route checks the session");
    assert_error(app.login("kim", PASSWORD).await, 401, "invalid_credentials", "").await;
    let fresh = token(&app, "kim", "new-password-456").await;
    assert_eq!(me(&app, &fresh).await.status(), 200);
}

async fn a_wrong_current_password_counts_as_a_failed_login(backend: Backend) {
    let app = account_app(backend).await;
    let (_, kim) = member(&app, "kim").await;
    for _ in 0..5 {
        let wrong = app
            .request(
                Method::PUT,
                "/members/me/password",
                Some(&kim),
                Some(json!({"current_password": "wrong-password", "new_password": "new-password-456"})),
            )
            .await;
        assert_eq!(wrong.status(), 401);
    }
    let hashes = app.hashes();
    // The login limit (5 per username and address) now holds for logins too.
    let response = app.login("kim", PASSWORD).await;
    assert_error(response, 429, "too_many_attempts", "").await;
    assert_eq!(app.hashes(), hashes, "refused before any hashing");
}

async fn signing_out_everywhere_ends_every_token_at_once(backend: Backend) {
    let app = account_app(backend).await;
    let (_, first) = member(&app, "kim").await;
    let second = token(&app, "kim", PASSWORD).await;
    // Not kim's own post: nobody votes on their own.
    let (_, lee) = member(&app, "lee").await;
    let post = post_on(&app, &lee, "free", "before").await;
    let ended = app
        .request(Method::DELETE, "/members/me/sessions", Some(&second), None)
        .await;
    assert_eq!(ended.status(), 204);
    assert_revoked(&app, &first).await;
    assert_revoked(&app, &second).await;
    let path = format!("/boards/free/posts/{post}/like");
    assert_eq!(app.request(Method::PUT, &path, Some(&first), None).await.status(), 401);
    // The password still works: a new session starts.
    let third = token(&app, "kim", PASSWORD).await;
    assert_eq!(me(&app, &third).await.status(), 200);
    like(&app, &third, "free", &post).await;
}

async fn own_posts_and_comments_page_newest_first_across_boards_without_gaps(backend: Backend) {
    let app = account_app(backend).await;
    let (_, kim) = member(&app, "kim").await;
    let (_, lee) = member(&app, "lee").await;
    let mut posts = Vec::new();
    let mut comments = Vec::new();
    for i in 0..7 {
        let board = ["free", "qna"][i % 2];
        posts.push((board, post_on(&app, &kim, board, &format!("kim {i}")).await));
        post_on(&app, &lee, board, "lee's").await;
        app.guest_post("guest-pass").await;
    }
    let lees = post_on(&app, &lee, "qna", "lee's last").await;
    for (i, (board, id)) in posts.iter().enumerate().take(4) {
        comments.push(comment_on(&app, &kim, board, id, None).await);
        comment_on(&app, &lee, board, id, None).await;
        if i == 0 {
            let parent = comments[0].clone();
            comments.push(comment_on(&app, &kim, board, id, Some(&parent)).await);
        }
    }
    comments.push(comment_on(&app, &kim, "qna", &lees, None).await);

    let newest_first: Vec<String> = posts.iter().rev().map(|(_, id)| id.clone()).collect();
    assert_eq!(
        all_pages(&app, &kim, "/members/me/posts", "posts", 3).await,
        newest_first
    );
    comments.reverse();
    assert_eq!(
        all_pages(&app, &kim, "/members/me/comments", "comments", 3).await,
        comments
    );
    let page = body(
        app.request(Method::GET, "/members/me/posts?limit=1", Some(&kim), None)
            .await,
    )
    .await;
    assert_eq!(page["posts"][0]["author"]["kind"], "member");
    assert_eq!(page["posts"][0]["board"], posts[6].0, "the newest is on its own board");
    let bad = app
        .request(Method::GET, "/members/me/comments?cursor=nonsense", Some(&kim), None)
        .await;
    assert_error(bad, 400, "validation_failed", "cursor").await;
}

async fn deleting_an_account_with_its_content_keeps_every_count_exact(backend: Backend) {
    let app = account_app(backend).await;
    let (_, boss) = member(&app, "boss").await;
    let (kim_id, kim) = member(&app, "kim").await;
    let (_, lee) = member(&app, "lee").await;
    let (_, park) = member(&app, "park").await;
    let appointed = app
        .request(
            Method::PUT,
            &format!("/boards/free/moderators/{kim_id}"),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(appointed.status(), 204);
    // kim's own post, with lee's comment and like on it.
    let kims = post_on(&app, &kim, "free", "kim's").await;
    comment_on(&app, &lee, "free", &kims, None).await;
    like(&app, &lee, "free", &kims).await;
    like(&app, &park, "free", &kims).await;
    // lee's post, where kim commented (one a reply to lee) and liked.
    let lees = post_on(&app, &lee, "qna", "lee's").await;
    let lees_comment = comment_on(&app, &lee, "qna", &lees, None).await;
    comment_on(&app, &kim, "qna", &lees, None).await;
    comment_on(&app, &kim, "qna", &lees, Some(&lees_comment)).await;
    like(&app, &kim, "qna", &lees).await;
    like(&app, &park, "qna", &lees).await;
    assert_eq!(post(&app, "qna", &lees).await.0, 2);
    assert_eq!(post(&app, "qna", &lees).await.1, 3);

    let wrong = delete_me(&app, &kim, "not-the-password", true).await;
    assert_error(wrong, 401, "invalid_credentials", "").await;
    assert_eq!(me(&app, &kim).await.status(), 200, "a wrong password deletes nothing");
    assert_eq!(delete_me(&app, &kim, PASSWORD, true).await.status(), 204);

    // Everything kim wrote is gone; lee's post lost exactly kim's share.
    assert_eq!(app.get(&format!("/boards/free/posts/{kims}")).await.status(), 404);
    let (likes, comment_count, detail) = post(&app, "qna", &lees).await;
    assert_eq!((likes, comment_count), (1, 1));
    let shown: Vec<&str> = detail["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(shown, [lees_comment.as_str()]);
    // The account is gone, its name kept.
    assert_revoked(&app, &kim).await;
    assert_error(app.login("kim", PASSWORD).await, 401, "invalid_credentials", "").await;
    let hashes = app.hashes();
    assert_error(app.signup("kim", PASSWORD).await, 409, "username_taken", "").await;
    assert_eq!(
        app.hashes(),
        hashes,
        "a deleted member's name is refused before any hash"
    );
    let moderators = body(app.get("/boards/free/moderators").await).await;
    assert_eq!(moderators["moderators"], json!([]));
    let reappoint = app
        .request(
            Method::PUT,
            &format!("/boards/free/moderators/{kim_id}"),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(reappoint.status(), 404, "nothing is found under the member's id");
    let board = body(app.get("/boards/free/posts").await).await;
    assert!(!board.to_string().contains(&kim_id), "{board}");
    let pending = app.state.app.store().pending_deletions(10).await.unwrap();
    assert!(pending.is_empty(), "{pending:?}");
}

async fn deleting_an_account_keeping_its_content_leaves_a_deleted_member(backend: Backend) {
    let app = account_app(backend).await;
    let (kim_id, kim) = member(&app, "kim").await;
    let (_, lee) = member(&app, "lee").await;
    let kims = post_on(&app, &kim, "free", "kim's").await;
    comment_on(&app, &kim, "free", &kims, None).await;
    let lees = post_on(&app, &lee, "qna", "lee's").await;
    comment_on(&app, &kim, "qna", &lees, None).await;
    like(&app, &kim, "qna", &lees).await;
    let before = (post(&app, "free", &kims).await, post(&app, "qna", &lees).await);

    assert_eq!(delete_me(&app, &kim, PASSWORD, false).await.status(), 204);

    let deleted = json!({"kind": "deleted_member", "nickname": "deleted member"});
    let (likes, comments, detail) = post(&app, "free", &kims).await;
    assert_eq!((likes, comments), (before.0.0, before.0.1), "counts stay");
    assert_eq!(detail["author"], deleted);
    assert_eq!(detail["comments"][0]["author"], deleted);
    let (likes, comments, detail) = post(&app, "qna", &lees).await;
    assert_eq!((likes, comments), (before.1.0, before.1.1), "counts stay");
    assert_eq!(detail["author"]["kind"], "member", "lee's post is lee's");
    assert_eq!(detail["comments"][0]["author"], deleted);
    for board in ["free", "qna"] {
        let page = body(app.get(&format!("/boards/{board}/posts")).await).await;
        assert!(!page.to_string().contains(&kim_id), "{page}");
    }
    let thread = body(app.get(&format!("/boards/free/posts/{kims}/comments")).await).await;
    assert!(!thread.to_string().contains(&kim_id), "{thread}");
    assert_revoked(&app, &kim).await;
    assert_error(app.signup("kim", PASSWORD).await, 409, "username_taken", "").await;
}

async fn an_interrupted_deletion_is_finished_by_the_next_one(backend: Backend) {
    let app = account_app(backend).await;
    let (kim_id, kim) = member(&app, "kim").await;
    let (_, lee) = member(&app, "lee").await;
    let (_, park) = member(&app, "park").await;
    let lees = post_on(&app, &lee, "free", "lee's").await;
    let mut kims = Vec::new();
    for i in 0..4 {
        kims.push(post_on(&app, &kim, "free", &format!("kim {i}")).await);
        comment_on(&app, &kim, "free", &lees, None).await;
    }
    like(&app, &kim, "free", &lees).await;
    assert_eq!(post(&app, "free", &lees).await.1, 4);

    // Step 1 and part of step 2 ran, then the process stopped.
    let store = app.state.app.store();
    let kim_id = MemberId::from_stored(kim_id);
    let username = shared::domain::Username::parse("kim".into()).unwrap();
    assert!(store.close_account(&kim_id, &username, true, &[]).await.unwrap());
    let first = PostKey {
        board: BoardSlug::from_stored("free".into()),
        post: PostId::from_stored(kims[0].clone()),
    };
    assert!(store.delete_post(&first, false).await.unwrap());
    assert_revoked(&app, &kim).await;
    assert_eq!(store.pending_deletions(10).await.unwrap().len(), 1);

    // The next account deletion finishes it.
    assert_eq!(delete_me(&app, &park, PASSWORD, true).await.status(), 204);
    assert!(store.pending_deletions(10).await.unwrap().is_empty());
    for id in &kims {
        assert_eq!(app.get(&format!("/boards/free/posts/{id}")).await.status(), 404);
    }
    let (likes, comments, _) = post(&app, "free", &lees).await;
    assert_eq!((likes, comments), (0, 0));
}

async fn account_bodies_name_the_field_they_break(backend: Backend) {
    let app = account_app(backend).await;
    let (_, kim) = member(&app, "kim").await;
    let cases = [
        (
            Method::PUT,
            "/members/me/password",
            json!({"new_password": "new-password-456"}),
            "current_password",
        ),
        (
            Method::PUT,
            "/members/me/password",
            json!({"current_password": PASSWORD}),
            "new_password",
        ),
        (
            Method::PUT,
            "/members/me/password",
            json!({"current_password": PASSWORD, "new_password": "short"}),
            "new_password must be 8-256",
        ),
        (
            Method::DELETE,
            "/members/me",
            json!({"password": PASSWORD}),
            "delete_content",
        ),
        (
            Method::DELETE,
            "/members/me",
            json!({"delete_content": true}),
            "password",
        ),
    ];
    for (method, path, payload, field) in cases {
        let response = app.request(method, path, Some(&kim), Some(payload)).await;
        assert_error(response, 400, "validation_failed", field).await;
    }
    let wrong_type = app
        .request(
            Method::DELETE,
            "/members/me",
            Some(&kim),
            Some(json!({"password": PASSWORD, "delete_content": "yes"})),
        )
        .await;
    assert_eq!(wrong_type.status(), 400);
    assert_eq!(body(wrong_type).await["error"]["code"], "malformed_json");
    assert_eq!(me(&app, &kim).await.status(), 200, "nothing changed");
}
