//! Roles and moderation, guest tags and blocked words (docs/API.md),
//! over real HTTP, each on both stores. The client address of a request is
//! set with `X-Forwarded-For` from a trusted 127.0.0.1.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Backend, TestApp, assert_error, body, spawn_app_in, spawn_app_with};

/// Admins `boss`; the proxy 127.0.0.1 is trusted, so tests choose addresses.
async fn board_app(backend: Backend, extra: &[(&str, &str)]) -> TestApp {
    let mut settings = vec![("ADMIN_USERNAMES", "boss"), ("TRUSTED_PROXIES", "127.0.0.1/32")];
    settings.extend_from_slice(extra);
    spawn_app_with(backend, &settings).await
}

/// A member: (id, token).
async fn member(app: &TestApp, username: &str) -> (String, String) {
    let signup = app.signup(username, "password-123").await;
    assert_eq!(signup.status(), 201);
    let id = body(signup).await["id"].as_str().unwrap().to_owned();
    let session = body(app.login(username, "password-123").await).await;
    (id, session["token"].as_str().unwrap().to_owned())
}

async fn appoint(app: &TestApp, admin: &str, board: &str, member_id: &str) -> reqwest::Response {
    app.request(
        Method::PUT,
        &format!("/boards/{board}/moderators/{member_id}"),
        Some(admin),
        None,
    )
    .await
}

/// A request from `address` (through the trusted proxy).
async fn from(
    app: &TestApp,
    address: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    payload: Option<Value>,
) -> reqwest::Response {
    app.request_from(address, method, path, token, payload).await
}

/// A guest post on `free` from `address`; its body.
async fn guest_post_from(app: &TestApp, address: &str, nickname: &str) -> Value {
    let response = from(
        app,
        address,
        Method::POST,
        "/boards/free/posts/guest",
        None,
        Some(json!({"nickname": nickname, "password": "guest-pass", "title": "hello", "body": "from a guest"})),
    )
    .await;
    assert_eq!(response.status(), 201);
    body(response).await
}

async fn member_post_from(app: &TestApp, address: &str, token: &str, board: &str) -> reqwest::Response {
    from(
        app,
        address,
        Method::POST,
        &format!("/boards/{board}/posts"),
        Some(token),
        Some(json!({"title": "t", "body": "b"})),
    )
    .await
}

async fn ban(app: &TestApp, token: &str, board: &str, payload: Value) -> reqwest::Response {
    app.request(
        Method::POST,
        &format!("/boards/{board}/bans"),
        Some(token),
        Some(payload),
    )
    .await
}

async fn modlog(app: &TestApp, board: &str) -> Vec<Value> {
    let page = body(app.get(&format!("/boards/{board}/modlog?limit=100")).await).await;
    page["entries"].as_array().unwrap().clone()
}

on_both_stores!(
    admins_appoint_and_dismiss_moderators_and_staff_routes_are_for_staff_of_that_board,
    a_removed_post_goes_with_its_comments_and_reports_and_the_log_keeps_its_title_only,
    a_removed_comment_leaves_its_replies_and_uncounts_itself,
    a_member_ban_stops_every_write_on_its_board_until_lifted_or_expired,
    a_guest_ban_through_a_post_stops_that_address_and_members_writing_from_it,
    staff_cannot_be_banned,
    reports_are_one_per_target_and_count_each_reporter_once,
    the_moderation_log_pages_newest_first_without_gaps,
    guests_show_a_tag_members_none_and_nothing_shows_a_client_address,
    blocked_words_are_refused_in_every_field_naming_it,
    address_bans_hold_across_a_tag_key_rotation_while_the_old_key_is_kept,
    guest_bans_hold_across_a_pepper_rotation_with_a_derived_tag_key,
    a_ban_through_a_members_post_also_stops_guest_writes_from_where_it_was_written,
    a_range_ban_stops_the_whole_24_or_48_and_its_target_says_so,
    a_banned_member_is_not_appointed_and_nobody_lifts_their_own_ban,
    a_deleted_accounts_leftovers_ban_no_one_and_show_as_deleted_member,
    blocked_words_are_screened_after_the_ban_check_and_the_quotas,
);

async fn admins_appoint_and_dismiss_moderators_and_staff_routes_are_for_staff_of_that_board(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (kim_id, kim) = member(&app, "kim").await;
    let (lee_id, _) = member(&app, "lee").await;

    // Not staff: every staff route is 403 forbidden, naming the board.
    let bans = app.request(Method::GET, "/boards/free/bans", Some(&kim), None).await;
    assert_error(bans, 403, "forbidden", "free").await;
    assert_error(appoint(&app, &kim, "free", &lee_id).await, 403, "forbidden", "admins").await;
    // Admins appoint, idempotently: one moderator, one log entry.
    assert_eq!(appoint(&app, &boss, "free", &kim_id).await.status(), 204);
    assert_eq!(appoint(&app, &boss, "free", &kim_id).await.status(), 204);
    let listed = body(app.get("/boards/free/moderators").await).await;
    assert_eq!(listed["moderators"].as_array().unwrap().len(), 1);
    assert_eq!(listed["moderators"][0]["id"], kim_id.as_str());
    assert_eq!(listed["moderators"][0]["username"], "kim");
    assert_eq!(
        body(app.get("/boards/qna/moderators").await).await,
        json!({"moderators": []})
    );
    // A moderator of free is staff there, not on qna.
    let free = app.request(Method::GET, "/boards/free/bans", Some(&kim), None).await;
    assert_eq!(free.status(), 200);
    assert_eq!(body(free).await, json!({"bans": [], "next_cursor": null}));
    let qna = app.request(Method::GET, "/boards/qna/reports", Some(&kim), None).await;
    assert_error(qna, 403, "forbidden", "qna").await;
    // Admins are staff of every board.
    let admin = app.request(Method::GET, "/boards/qna/reports", Some(&boss), None).await;
    assert_eq!(admin.status(), 200);
    // Unknown members, malformed ids: 404.
    let unknown = appoint(&app, &boss, "free", &shared::domain::new_id()).await;
    assert_error(unknown, 404, "not_found", "member").await;
    assert_eq!(appoint(&app, &boss, "free", "not-an-id").await.status(), 404);
    // Dismissed: staff no more, at once (the server keeps no stale role).
    let dismiss = app
        .request(
            Method::DELETE,
            &format!("/boards/free/moderators/{kim_id}"),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(dismiss.status(), 204);
    // At once in one process (a Lambda function's other environments may
    // remember a role for at most 10 seconds, docs/DESIGN.md).
    let after = app.request(Method::GET, "/boards/free/bans", Some(&kim), None).await;
    assert_eq!(after.status(), 403);
    let actions: Vec<Value> = modlog(&app, "free").await.iter().map(|e| e["action"].clone()).collect();
    assert_eq!(actions, vec![json!("remove_moderator"), json!("add_moderator")]);
    let entry = &modlog(&app, "free").await[1];
    assert_eq!(
        entry["target"],
        json!({"kind": "member", "member_id": kim_id, "nickname": "kim!"})
    );
    assert_eq!(entry["by"]["kind"], "member");
    assert_eq!(entry["by"]["nickname"], "boss!");
    assert_eq!(entry["reason"], Value::Null);
}

async fn a_removed_post_goes_with_its_comments_and_reports_and_the_log_keeps_its_title_only(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (_, kim) = member(&app, "kim").await;
    let created = app
        .request(
            Method::POST,
            "/boards/free/posts",
            Some(&kim),
            Some(json!({"title": "Buy now", "body": "the secret body of an ad"})),
        )
        .await;
    let post_id = body(created).await["id"].as_str().unwrap().to_owned();
    let comment = app
        .request(
            Method::POST,
            &format!("/boards/free/posts/{post_id}/comments"),
            Some(&kim),
            Some(json!({"body": "bump"})),
        )
        .await;
    let comment_id = body(comment).await["id"].as_str().unwrap().to_owned();
    let reported = from(
        &app,
        "198.51.100.20",
        Method::POST,
        &format!("/boards/free/posts/{post_id}/reports"),
        None,
        Some(json!({"reason": "spam"})),
    )
    .await;
    assert_eq!(reported.status(), 201);
    let comment_report = from(
        &app,
        "198.51.100.20",
        Method::POST,
        &format!("/boards/free/posts/{post_id}/comments/{comment_id}/reports"),
        None,
        Some(json!({"reason": "spam too"})),
    )
    .await;
    assert_eq!(comment_report.status(), 201);
    let open = body(
        app.request(Method::GET, "/boards/free/reports", Some(&boss), None)
            .await,
    )
    .await;
    assert_eq!(open["reports"].as_array().unwrap().len(), 2);

    // A member who is not staff cannot remove.
    let path = format!("/boards/free/posts/{post_id}/remove");
    let refused = app
        .request(Method::POST, &path, Some(&kim), Some(json!({"reason": "mine"})))
        .await;
    assert_error(refused, 403, "forbidden", "staff").await;
    let missing = app.request(Method::POST, &path, Some(&boss), Some(json!({}))).await;
    assert_error(missing, 400, "validation_failed", "reason").await;
    let removed = app
        .request(Method::POST, &path, Some(&boss), Some(json!({"reason": "advertising"})))
        .await;
    assert_eq!(removed.status(), 204);
    assert_eq!(app.get(&format!("/boards/free/posts/{post_id}")).await.status(), 404);
    let page = body(app.get("/boards/free/posts").await).await;
    assert!(page["posts"].as_array().unwrap().is_empty());
    let comments = app.get(&format!("/boards/free/posts/{post_id}/comments")).await;
    assert_eq!(comments.status(), 404);
    // Its reports, and its comments' reports, are resolved.
    let open = body(
        app.request(Method::GET, "/boards/free/reports", Some(&boss), None)
            .await,
    )
    .await;
    assert_eq!(open, json!({"reports": [], "next_cursor": null}));
    // Nothing accepts it any more.
    let again = app
        .request(Method::POST, &path, Some(&boss), Some(json!({"reason": "twice"})))
        .await;
    assert_error(again, 404, "not_found", "post").await;
    let late = app
        .post(
            &format!("/boards/free/posts/{post_id}/reports"),
            json!({"reason": "late"}),
        )
        .await;
    assert_error(late, 404, "not_found", "post").await;

    let log = modlog(&app, "free").await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["action"], "remove_post");
    assert_eq!(
        log[0]["target"],
        json!({"kind": "post", "post_id": post_id, "title": "Buy now"})
    );
    assert_eq!(log[0]["reason"], "advertising");
    let text = serde_json::to_string(&log).unwrap();
    assert!(!text.contains("secret body"), "the log keeps no removed body");
}

async fn a_removed_comment_leaves_its_replies_and_uncounts_itself(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (_, kim) = member(&app, "kim").await;
    let post_id = app.member_post(&kim).await;
    let path = format!("/boards/free/posts/{post_id}/comments");
    let top = body(
        app.request(Method::POST, &path, Some(&kim), Some(json!({"body": "rude"})))
            .await,
    )
    .await;
    let reply = app
        .request(
            Method::POST,
            &path,
            Some(&kim),
            Some(json!({"body": "a reply", "parent_id": top["id"]})),
        )
        .await;
    let reply = body(reply).await;
    let top_id = top["id"].as_str().unwrap();
    let report = app
        .post(&format!("{path}/{top_id}/reports"), json!({"reason": "rude"}))
        .await;
    assert_eq!(report.status(), 201);
    let removed = app
        .request(
            Method::POST,
            &format!("{path}/{top_id}/remove"),
            Some(&boss),
            Some(json!({"reason": "rude"})),
        )
        .await;
    assert_eq!(removed.status(), 204);
    let post = body(app.get(&format!("/boards/free/posts/{post_id}")).await).await;
    assert_eq!(post["comment_count"], 1);
    assert_eq!(post["comments"], json!([reply]));
    let open = body(
        app.request(Method::GET, "/boards/free/reports", Some(&boss), None)
            .await,
    )
    .await;
    assert_eq!(open["reports"], json!([]));
    let log = modlog(&app, "free").await;
    assert_eq!(log[0]["action"], "remove_comment");
    assert_eq!(
        log[0]["target"],
        json!({"kind": "comment", "post_id": post_id, "comment_id": top_id})
    );
    let again = app
        .request(
            Method::POST,
            &format!("{path}/{top_id}/remove"),
            Some(&boss),
            Some(json!({"reason": "rude"})),
        )
        .await;
    assert_error(again, 404, "not_found", "comment").await;
}

async fn a_member_ban_stops_every_write_on_its_board_until_lifted_or_expired(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (kim_id, kim) = member(&app, "kim").await;
    let own_post = app.member_post(&kim).await;
    let other_post = app.member_post(&boss).await;

    let created = ban(
        &app,
        &boss,
        "free",
        json!({"member_id": kim_id, "reason": "trolling", "duration_s": 3600}),
    )
    .await;
    assert_eq!(created.status(), 201);
    let the_ban = body(created).await;
    assert_eq!(the_ban["board"], "free");
    assert_eq!(
        the_ban["target"],
        json!({"kind": "member", "member_id": kim_id, "nickname": "kim!"})
    );
    assert_eq!(the_ban["reason"], "trolling");
    assert!(the_ban["expires_at"].is_string());
    assert_eq!(the_ban["by"]["nickname"], "boss!");

    // Every write on free, from any address: 403 banned, saying until when and why.
    let post_path = format!("/boards/free/posts/{own_post}");
    let writes: Vec<(Method, String, Option<Value>)> = vec![
        (
            Method::POST,
            "/boards/free/posts".into(),
            Some(json!({"title": "t", "body": "b"})),
        ),
        (
            Method::PUT,
            post_path.clone(),
            Some(json!({"title": "t2", "body": "b2"})),
        ),
        (
            Method::POST,
            format!("/boards/free/posts/{other_post}/comments"),
            Some(json!({"body": "c"})),
        ),
        (Method::PUT, format!("/boards/free/posts/{other_post}/like"), None),
        (Method::DELETE, format!("/boards/free/posts/{other_post}/like"), None),
        (
            Method::POST,
            format!("/boards/free/posts/{other_post}/reports"),
            Some(json!({"reason": "r"})),
        ),
        (Method::DELETE, post_path.clone(), None),
    ];
    for (i, (method, path, payload)) in writes.iter().enumerate() {
        let address = format!("203.0.113.{}", i + 1);
        let response = from(&app, &address, method.clone(), path, Some(&kim), payload.clone()).await;
        assert_eq!(response.status(), 403, "{method} {path}");
        let error = body(response).await;
        assert_eq!(error["error"]["code"], "banned", "{method} {path}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("until") && message.contains("trolling"), "{message}");
    }
    // Reads stay open; other boards are not touched.
    assert_eq!(app.get(&post_path).await.status(), 200);
    assert_eq!(member_post_from(&app, "203.0.113.9", &kim, "qna").await.status(), 201);
    let listed = body(app.request(Method::GET, "/boards/free/bans", Some(&boss), None).await).await;
    assert_eq!(listed["bans"], json!([the_ban]));

    // Lifted: the next write goes through at once.
    let ban_id = the_ban["id"].as_str().unwrap();
    let lifted = app
        .request(
            Method::DELETE,
            &format!("/boards/free/bans/{ban_id}"),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(lifted.status(), 204);
    assert_eq!(member_post_from(&app, "203.0.113.9", &kim, "free").await.status(), 201);
    let gone = app
        .request(
            Method::DELETE,
            &format!("/boards/free/bans/{ban_id}"),
            Some(&boss),
            None,
        )
        .await;
    assert_error(gone, 404, "not_found", "ban").await;
    let actions: Vec<Value> = modlog(&app, "free").await.iter().map(|e| e["action"].clone()).collect();
    assert_eq!(actions, vec![json!("unban"), json!("ban")]);

    // A permanent ban says so; a ban that has expired stops nothing.
    let permanent = ban(&app, &boss, "free", json!({"member_id": kim_id, "reason": "again"})).await;
    assert_eq!(permanent.status(), 201);
    assert_eq!(body(permanent).await["expires_at"], Value::Null);
    let refused = member_post_from(&app, "203.0.113.9", &kim, "free").await;
    assert_error(refused, 403, "banned", "permanently").await;
    expire_bans_of(&app, &kim_id).await;
    assert_eq!(member_post_from(&app, "203.0.113.9", &kim, "free").await.status(), 201);
    let listed = body(app.request(Method::GET, "/boards/free/bans", Some(&boss), None).await).await;
    assert_eq!(listed["bans"], json!([]), "expired bans are not listed");

    // Field rules.
    for (payload, mentions) in [
        (json!({"reason": "r"}), "exactly one"),
        (
            json!({"member_id": kim_id, "post_id": own_post, "reason": "r"}),
            "exactly one",
        ),
        (json!({"member_id": kim_id}), "reason"),
        (
            json!({"member_id": kim_id, "reason": "r", "duration_s": 59}),
            "duration_s",
        ),
        (
            json!({"member_id": kim_id, "reason": "r", "duration_s": 31_536_001}),
            "duration_s",
        ),
        (json!({"member_id": "nope", "reason": "r"}), "member_id"),
    ] {
        assert_error(
            ban(&app, &boss, "free", payload).await,
            400,
            "validation_failed",
            mentions,
        )
        .await;
    }
    let wrong_type = ban(
        &app,
        &boss,
        "free",
        json!({"member_id": kim_id, "reason": "r", "duration_s": "1h"}),
    )
    .await;
    assert_error(wrong_type, 400, "malformed_json", "duration_s").await;
    let unknown = ban(
        &app,
        &boss,
        "free",
        json!({"member_id": shared::domain::new_id(), "reason": "r"}),
    )
    .await;
    assert_error(unknown, 404, "not_found", "member").await;
}

/// Rewrites the member's ban on `free` to have ended a second ago: the
/// store's own ban write, as a ban made an hour ago for an hour would be.
async fn expire_bans_of(app: &TestApp, member_id: &str) {
    use shared::domain::{BanSubject, BoardSlug, LogAction, LogEntry, LogTarget};
    let store = app.state.app.store();
    let board: BoardSlug = shared::domain::Boards::default().resolve("free").unwrap();
    let subject = BanSubject::Member(member_id.to_owned());
    let now = chrono::Utc::now().timestamp();
    let mut record = store
        .active_ban(&board, std::slice::from_ref(&subject), now)
        .await
        .unwrap()
        .expect("an active ban");
    // A new ban (its own id, as every ban has) that ended a second ago.
    record.ban.id = shared::domain::new_id();
    record.expires = Some(now - 1);
    let entry = LogEntry {
        id: shared::domain::new_id(),
        action: LogAction::Ban,
        target: LogTarget::Member {
            member_id: member_id.to_owned(),
            nickname: "kim!".into(),
            scope: None,
        },
        reason: Some("expired".into()),
        by: record.ban.by.clone(),
        at: shared::domain::now(),
    };
    store.ban(&record, &entry, None).await.unwrap();
    assert!(store.active_ban(&board, &[subject], now).await.unwrap().is_none());
}

async fn a_guest_ban_through_a_post_stops_that_address_and_members_writing_from_it(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (mod_id, moderator) = member(&app, "mod").await;
    let (_, lee) = member(&app, "lee").await;
    assert_eq!(appoint(&app, &boss, "free", &mod_id).await.status(), 204);
    let spammer = "198.51.100.7";
    let post = guest_post_from(&app, spammer, "ㅇㅇ").await;
    let tag = post["author"]["tag"].as_str().unwrap().to_owned();

    // The moderator bans, from another address, through the post.
    let created = ban(
        &app,
        &moderator,
        "free",
        json!({"post_id": post["id"], "reason": "spam", "duration_s": 86_400}),
    )
    .await;
    assert_eq!(created.status(), 201);
    let the_ban = body(created).await;
    assert_eq!(
        the_ban["target"],
        json!({"kind": "guest", "tag": tag, "scope": "address"})
    );

    let hashes = app.hashes();
    let again = from(
        &app,
        spammer,
        Method::POST,
        "/boards/free/posts/guest",
        None,
        Some(json!({"nickname": "ㅇㅇ", "password": "guest-pass", "title": "hello", "body": "again"})),
    )
    .await;
    assert_error(again, 403, "banned", "spam").await;
    assert_eq!(app.hashes(), hashes, "refused before any hashing");
    let edit = from(
        &app,
        spammer,
        Method::PUT,
        &format!("/boards/free/posts/{}/guest", post["id"].as_str().unwrap()),
        None,
        Some(json!({"password": "guest-pass", "title": "t", "body": "b"})),
    )
    .await;
    assert_error(edit, 403, "banned", "spam").await;
    assert_eq!(app.hashes(), hashes);
    // A member writing from the banned address is stopped too; not elsewhere.
    assert_error(
        member_post_from(&app, spammer, &lee, "free").await,
        403,
        "banned",
        "spam",
    )
    .await;
    assert_eq!(member_post_from(&app, "198.51.100.8", &lee, "free").await.status(), 201);
    // Staff of the board are never stopped by an address ban.
    assert_eq!(member_post_from(&app, spammer, &moderator, "free").await.status(), 201);
    // Another address, and the same address on another board, write on.
    guest_post_from(&app, "198.51.100.8", "ㅇㅇ").await;
    let elsewhere = from(
        &app,
        spammer,
        Method::POST,
        "/boards/qna/posts/guest",
        None,
        Some(json!({"nickname": "ㅇㅇ", "password": "guest-pass", "title": "hi", "body": "qna"})),
    )
    .await;
    assert_eq!(elsewhere.status(), 201);

    // IPv6: the ban holds for the writer's /64, through a comment.
    let v6 = "2001:db8:1:2::5";
    let target = app.member_post(&lee).await;
    let comment = from(
        &app,
        v6,
        Method::POST,
        &format!("/boards/free/posts/{target}/comments/guest"),
        None,
        Some(json!({"nickname": "v6", "password": "guest-pass", "body": "hi"})),
    )
    .await;
    assert_eq!(comment.status(), 201);
    let comment = body(comment).await;
    let by_comment = ban(
        &app,
        &moderator,
        "free",
        json!({"comment_id": comment["id"], "reason": "v6 spam"}),
    )
    .await;
    assert_eq!(by_comment.status(), 201);
    assert_eq!(body(by_comment).await["target"]["tag"], comment["author"]["tag"]);
    let same_64 = from(
        &app,
        "2001:db8:1:2::99",
        Method::POST,
        &format!("/boards/free/posts/{target}/comments/guest"),
        None,
        Some(json!({"nickname": "v6", "password": "guest-pass", "body": "hi again"})),
    )
    .await;
    assert_error(same_64, 403, "banned", "permanently").await;
    let other_64 = from(
        &app,
        "2001:db8:1:3::5",
        Method::POST,
        &format!("/boards/free/posts/{target}/comments/guest"),
        None,
        Some(json!({"nickname": "v6", "password": "guest-pass", "body": "hi"})),
    )
    .await;
    assert_eq!(other_64.status(), 201);
    let unknown = ban(
        &app,
        &moderator,
        "free",
        json!({"comment_id": shared::domain::new_id(), "reason": "r"}),
    )
    .await;
    assert_error(unknown, 404, "not_found", "comment").await;
}

async fn staff_cannot_be_banned(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (boss_id, boss) = member(&app, "boss").await;
    let (mod_id, moderator) = member(&app, "mod").await;
    assert_eq!(appoint(&app, &boss, "free", &mod_id).await.status(), 204);
    for target in [&mod_id, &boss_id] {
        let refused = ban(&app, &moderator, "free", json!({"member_id": target, "reason": "coup"})).await;
        assert_error(refused, 403, "forbidden", "staff").await;
    }
    let admins_post = app.member_post(&boss).await;
    let refused = ban(
        &app,
        &moderator,
        "free",
        json!({"post_id": admins_post, "reason": "coup"}),
    )
    .await;
    assert_error(refused, 403, "forbidden", "staff").await;
    // A moderator of another board is an ordinary member here.
    let (other_id, _) = member(&app, "other").await;
    assert_eq!(appoint(&app, &boss, "qna", &other_id).await.status(), 204);
    let fine = ban(&app, &moderator, "free", json!({"member_id": other_id, "reason": "r"})).await;
    assert_eq!(fine.status(), 201);
}

async fn reports_are_one_per_target_and_count_each_reporter_once(backend: Backend) {
    let app = board_app(backend, &[("LIMIT_REPORTS_ADDRESS", "3/1h")]).await;
    let (_, boss) = member(&app, "boss").await;
    let (_, kim) = member(&app, "kim").await;
    let post_id = app.member_post(&boss).await;
    let path = format!("/boards/free/posts/{post_id}/reports");
    let report = |address: &'static str, token: Option<String>, reason: &'static str| {
        let (app, path) = (&app, path.clone());
        async move {
            from(
                app,
                address,
                Method::POST,
                &path,
                token.as_deref(),
                Some(json!({"reason": reason})),
            )
            .await
        }
    };
    let first = report("198.51.100.1", None, "spam").await;
    assert_eq!(first.status(), 201);
    let first = body(first).await;
    assert_eq!(first["target"], json!({"kind": "post", "post_id": post_id}));
    assert_eq!(first["reason"], "spam");
    assert_eq!(first["board"], "free");
    assert!(first.get("reporters").is_none(), "the count is for staff");
    for (address, token) in [
        ("198.51.100.1", None),
        ("198.51.100.2", None),
        ("198.51.100.3", Some(kim.clone())),
        ("198.51.100.4", Some(kim.clone())),
    ] {
        let again = report(address, token, "me too").await;
        assert_eq!(again.status(), 200, "{address}");
        assert_eq!(body(again).await, first, "the same report");
    }
    let listed = body(
        app.request(Method::GET, "/boards/free/reports", Some(&boss), None)
            .await,
    )
    .await;
    assert_eq!(listed["reports"].as_array().unwrap().len(), 1);
    assert_eq!(listed["reports"][0]["id"], first["id"]);
    assert_eq!(listed["reports"][0]["reporters"], 3, "two addresses and one member");
    // The quota per address (3 here) holds, joined reports included.
    assert_eq!(report("198.51.100.1", None, "x").await.status(), 200);
    let over = report("198.51.100.1", None, "x").await;
    assert_error(over, 429, "rate_limited", "retry").await;
    // Resolved: off the list; the next report opens a new one.
    let report_id = first["id"].as_str().unwrap();
    let not_staff = app
        .request(
            Method::POST,
            &format!("/boards/free/reports/{report_id}/resolve"),
            Some(&kim),
            None,
        )
        .await;
    assert_error(not_staff, 403, "forbidden", "staff").await;
    let resolved = app
        .request(
            Method::POST,
            &format!("/boards/free/reports/{report_id}/resolve"),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(resolved.status(), 204);
    let twice = app
        .request(
            Method::POST,
            &format!("/boards/free/reports/{report_id}/resolve"),
            Some(&boss),
            None,
        )
        .await;
    assert_error(twice, 404, "not_found", "report").await;
    let listed = body(
        app.request(Method::GET, "/boards/free/reports", Some(&boss), None)
            .await,
    )
    .await;
    assert_eq!(listed["reports"], json!([]));
    let reopened = report("198.51.100.9", None, "still spam").await;
    assert_eq!(reopened.status(), 201);
    assert_ne!(body(reopened).await["id"], first["id"]);
    // A report of something that is not there is 404; of another board too.
    let missing = app
        .post(
            &format!("/boards/free/posts/{}/reports", shared::domain::new_id()),
            json!({"reason": "r"}),
        )
        .await;
    assert_error(missing, 404, "not_found", "post").await;
    let other_board = app
        .post(&format!("/boards/qna/posts/{post_id}/reports"), json!({"reason": "r"}))
        .await;
    assert_error(other_board, 404, "not_found", "post").await;
    let bad_token = app
        .request(Method::POST, &path, Some("not-a-token"), Some(json!({"reason": "r"})))
        .await;
    assert_eq!(bad_token.status(), 401, "a token sent must be valid");
}

async fn the_moderation_log_pages_newest_first_without_gaps(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (kim_id, _) = member(&app, "kim").await;
    for _ in 0..13 {
        assert_eq!(appoint(&app, &boss, "free", &kim_id).await.status(), 204);
        let dismissed = app
            .request(
                Method::DELETE,
                &format!("/boards/free/moderators/{kim_id}"),
                Some(&boss),
                None,
            )
            .await;
        assert_eq!(dismissed.status(), 204);
    }
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/boards/free/modlog?cursor={c}"),
            None => "/boards/free/modlog".into(),
        };
        let page = body(app.get(&path).await).await;
        let entries = page["entries"].as_array().unwrap();
        assert!(entries.len() <= 20, "20 to a page by default");
        ids.extend(entries.iter().map(|e| e["id"].as_str().unwrap().to_owned()));
        pages += 1;
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 2);
    assert_eq!(ids.len(), 26, "every entry once");
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.reverse();
    assert_eq!(ids, sorted, "newest first");
    let bad = app.get("/boards/free/modlog?cursor=bm90LWlzc3VlZA").await;
    assert_error(bad, 400, "validation_failed", "cursor").await;
}

async fn guests_show_a_tag_members_none_and_nothing_shows_a_client_address(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, kim) = member(&app, "kim").await;
    let first = guest_post_from(&app, "192.0.2.44", "ㅇㅇ").await;
    let second = guest_post_from(&app, "192.0.2.45", "ㅇㅇ").await;
    let tag = first["author"]["tag"].as_str().unwrap();
    assert_eq!(tag.len(), 8);
    assert!(
        tag.bytes()
            .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b)),
        "{tag}"
    );
    assert_ne!(
        second["author"]["tag"], first["author"]["tag"],
        "two guests of one nickname"
    );
    // The same client shows the same tag on its comment and on every read.
    let post_id = first["id"].as_str().unwrap();
    let comment = from(
        &app,
        "192.0.2.44",
        Method::POST,
        &format!("/boards/free/posts/{post_id}/comments/guest"),
        None,
        Some(json!({"nickname": "other name", "password": "guest-pass", "body": "me again"})),
    )
    .await;
    assert_eq!(body(comment).await["author"]["tag"], tag);
    let detail = body(app.get(&format!("/boards/free/posts/{post_id}")).await).await;
    assert_eq!(detail["author"]["tag"], tag);
    assert_eq!(detail["comments"][0]["author"]["tag"], tag);
    let page = body(app.get("/boards/free/posts").await).await;
    let listed: Vec<&Value> = page["posts"].as_array().unwrap().iter().map(|p| &p["author"]).collect();
    assert!(
        listed.iter().any(|a| a["tag"] == tag),
        "the board page shows tags: {listed:?}"
    );
    // Members show none.
    let member_post = member_post_from(&app, "192.0.2.44", &kim, "free").await;
    let author = body(member_post).await["author"].clone();
    assert_eq!(author["kind"], "member");
    assert!(author.get("tag").is_none());
    // No response and no log line holds a client address (the recorder
    // checks every request's X-Forwarded-For client when the app drops).
    assert!(app.recorder.responses_seen() > 5);
}

async fn blocked_words_are_refused_in_every_field_naming_it(backend: Backend) {
    let app = board_app(backend, &[("BLOCKED_WORDS", "spam, 카지노")]).await;
    let (_, boss) = member(&app, "boss").await;
    let post_id = app.member_post(&boss).await;
    let guest = |nickname: &str, title: &str, text: &str| json!({"nickname": nickname, "password": "guest-pass", "title": title, "body": text});
    for (payload, field) in [
        (guest("SPAM king", "t", "b"), "nickname"),
        (guest("n", "ＳＰＡＭ", "b"), "title"),
        (guest("n", "t", "바카지노사이트 방문"), "body"),
    ] {
        let refused = app.post("/boards/free/posts/guest", payload).await;
        assert_error(
            refused,
            400,
            "validation_failed",
            &format!("{field} contains a blocked word"),
        )
        .await;
    }
    let comment = app
        .request(
            Method::POST,
            &format!("/boards/free/posts/{post_id}/comments"),
            Some(&boss),
            Some(json!({"body": "Spam!"})),
        )
        .await;
    assert_error(comment, 400, "validation_failed", "body contains a blocked word").await;
    let signup = app
        .post(
            "/members",
            json!({"username": "spammer", "password": "password-123", "nickname": "SpamKing"}),
        )
        .await;
    assert_error(signup, 400, "validation_failed", "nickname contains a blocked word").await;
    let report = app
        .post(
            &format!("/boards/free/posts/{post_id}/reports"),
            json!({"reason": "spam"}),
        )
        .await;
    assert_error(report, 400, "validation_failed", "reason contains a blocked word").await;
    let removal = app
        .request(
            Method::POST,
            &format!("/boards/free/posts/{post_id}/remove"),
            Some(&boss),
            Some(json!({"reason": "SPAM"})),
        )
        .await;
    assert_error(removal, 400, "validation_failed", "reason contains a blocked word").await;
    let fine = app
        .post("/boards/free/posts/guest", guest("n", "s p a m", "casino"))
        .await;
    assert_eq!(fine.status(), 201);
}

/// docs/API.md, Guest tag: a rotated tag key changes tags from then on, and
/// address bans made under the old key hold while it is `TAG_KEY_PREVIOUS`.
async fn address_bans_hold_across_a_tag_key_rotation_while_the_old_key_is_kept(backend: Backend) {
    let (old, new) = (
        "old-tag-key-0123456789abcdefghijklmnop",
        "new-tag-key-0123456789abcdefghijklmnop",
    );
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let table = format!("e2e-{}", shared::domain::new_id().to_lowercase());
    let settings = |key: &'static str, previous: &'static str| {
        vec![
            ("ADMIN_USERNAMES", "boss"),
            ("TRUSTED_PROXIES", "127.0.0.1/32"),
            ("TAG_KEY", key),
            ("TAG_KEY_PREVIOUS", previous),
        ]
    };
    let before = spawn_app_in(backend, &settings(old, ""), dir.clone(), Some(table.clone())).await;
    let (_, boss) = member(&before, "boss").await;
    let spammer = "198.51.100.70";
    let post = guest_post_from(&before, spammer, "spam").await;
    let old_tag = post["author"]["tag"].as_str().unwrap().to_owned();
    let bystander = guest_post_from(&before, "198.51.100.71", "other").await;
    let banned = ban(&before, &boss, "free", json!({"post_id": post["id"], "reason": "spam"})).await;
    assert_eq!(banned.status(), 201);
    drop(before);

    // Rotated, the old key kept: the ban holds; new tags differ from old ones.
    let rotated = spawn_app_in(backend, &settings(new, old), dir.clone(), Some(table.clone())).await;
    let payload = json!({"nickname": "spam", "password": "guest-pass", "title": "t", "body": "b"});
    let again = from(
        &rotated,
        spammer,
        Method::POST,
        "/boards/free/posts/guest",
        None,
        Some(payload.clone()),
    )
    .await;
    assert_error(again, 403, "banned", "spam").await;
    let rekeyed = guest_post_from(&rotated, "198.51.100.71", "other").await;
    assert_ne!(
        rekeyed["author"]["tag"], bystander["author"]["tag"],
        "a new key, new tags"
    );
    let read = body(
        rotated
            .get(&format!("/boards/free/posts/{}", post["id"].as_str().unwrap()))
            .await,
    )
    .await;
    assert_eq!(
        read["author"]["tag"],
        old_tag.as_str(),
        "what was written keeps its tag"
    );
    drop(rotated);

    // The old key dropped: its bans no longer match (why it is kept).
    let after = spawn_app_in(backend, &settings(new, ""), dir, Some(table)).await;
    let free = from(
        &after,
        spammer,
        Method::POST,
        "/boards/free/posts/guest",
        None,
        Some(payload),
    )
    .await;
    assert_eq!(free.status(), 201);
}

/// docs/API.md, Hardening, Key rotation: without `TAG_KEY` the server
/// derives the tag key from the pepper, and rotating the pepper lifted every
/// guest ban. The key derived from `PEPPER_PREVIOUS` keeps them, across a
/// restart with the new pepper, and what was written keeps its tag.
async fn guest_bans_hold_across_a_pepper_rotation_with_a_derived_tag_key(backend: Backend) {
    let (old, new) = (
        "old-pepper-0123456789abcdefghijklmnopqrstu",
        "new-pepper-0123456789abcdefghijklmnopqrstu",
    );
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let table = format!("e2e-{}", shared::domain::new_id().to_lowercase());
    let settings = |pepper: &'static str, previous: &'static str| {
        vec![
            ("ADMIN_USERNAMES", "boss"),
            ("TRUSTED_PROXIES", "127.0.0.1/32"),
            ("TAG_KEY", ""),
            ("PEPPER", pepper),
            ("PEPPER_PREVIOUS", previous),
        ]
    };
    let before = spawn_app_in(backend, &settings(old, ""), dir.clone(), Some(table.clone())).await;
    let (_, boss) = member(&before, "boss").await;
    let spammer = "198.51.100.80";
    let post = guest_post_from(&before, spammer, "spam").await;
    let old_tag = post["author"]["tag"].as_str().unwrap().to_owned();
    let banned = ban(&before, &boss, "free", json!({"post_id": post["id"], "reason": "spam"})).await;
    assert_eq!(banned.status(), 201);
    drop(before);

    let rotated = spawn_app_in(backend, &settings(new, old), dir.clone(), Some(table.clone())).await;
    let payload = json!({"nickname": "spam", "password": "guest-pass", "title": "t", "body": "b"});
    let again = from(
        &rotated,
        spammer,
        Method::POST,
        "/boards/free/posts/guest",
        None,
        Some(payload.clone()),
    )
    .await;
    assert_error(again, 403, "banned", "spam").await;
    let read = body(
        rotated
            .get(&format!("/boards/free/posts/{}", post["id"].as_str().unwrap()))
            .await,
    )
    .await;
    assert_eq!(
        read["author"]["tag"],
        old_tag.as_str(),
        "what was written keeps its tag"
    );
    // The ban is still listed, and lifting it lets the address write again.
    let boss = body(rotated.login("boss", "password-123").await).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let bans = body(
        rotated
            .request(Method::GET, "/boards/free/bans", Some(&boss), None)
            .await,
    )
    .await;
    let ban_id = bans["bans"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(bans["bans"][0]["target"]["tag"], old_tag.as_str());
    let lifted = rotated
        .request(
            Method::DELETE,
            &format!("/boards/free/bans/{ban_id}"),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(lifted.status(), 204);
    let free = from(
        &rotated,
        spammer,
        Method::POST,
        "/boards/free/posts/guest",
        None,
        Some(payload),
    )
    .await;
    assert_eq!(free.status(), 201);
    let new_tag = body(free).await["author"]["tag"].as_str().unwrap().to_owned();
    assert_ne!(new_tag, old_tag, "new writing carries the new key's tag");
}

/// A guest post or comment create from `address`: its status.
async fn guest_write_status(app: &TestApp, address: &str) -> u16 {
    from(
        app,
        address,
        Method::POST,
        "/boards/free/posts/guest",
        None,
        Some(json!({"nickname": "g", "password": "guest-pass", "title": "t", "body": "b"})),
    )
    .await
    .status()
    .as_u16()
}

/// docs/API.md, Hardening, Bans: a banned member went on writing as a
/// guest from the same address.
async fn a_ban_through_a_members_post_also_stops_guest_writes_from_where_it_was_written(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (lee_id, lee) = member(&app, "lee").await;
    let (_, kim) = member(&app, "kim").await;
    let home = "198.51.100.30";
    let post = body(member_post_from(&app, home, &lee, "free").await).await;
    let created = ban(&app, &boss, "free", json!({"post_id": post["id"], "reason": "spam"})).await;
    assert_eq!(created.status(), 201);
    let the_ban = body(created).await;
    assert_eq!(
        the_ban["target"],
        json!({"kind": "member", "member_id": lee_id, "nickname": "lee!", "scope": "address"})
    );

    assert_eq!(
        member_post_from(&app, "203.0.113.5", &lee, "free").await.status(),
        403,
        "the member, anywhere"
    );
    assert_eq!(
        guest_write_status(&app, home).await,
        403,
        "a guest from where the member wrote"
    );
    assert_eq!(
        guest_write_status(&app, "198.51.100.31").await,
        201,
        "a guest next door"
    );
    assert_eq!(
        member_post_from(&app, home, &kim, "free").await.status(),
        201,
        "another member from that address: the ban names guest writes only"
    );
    assert_eq!(
        guest_write_status(&app, "[2002:c633:641e::1]").await,
        403,
        "its 6to4 form is that address"
    );

    let lifted = app
        .request(
            Method::DELETE,
            &format!("/boards/free/bans/{}", the_ban["id"].as_str().unwrap()),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(lifted.status(), 204);
    assert_eq!(guest_write_status(&app, home).await, 201, "lifted with the ban");
    assert_eq!(member_post_from(&app, home, &lee, "free").await.status(), 201);
}

/// docs/API.md, Hardening, Bans: `"scope": "range"` bans the IPv4 /24
/// or the IPv6 /48 a post was written from, guests and members alike;
/// staff stay exempt.
async fn a_range_ban_stops_the_whole_24_or_48_and_its_target_says_so(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (lee_id, lee) = member(&app, "lee").await;
    let post = guest_post_from(&app, "198.51.100.40", "spam").await;
    let created = ban(
        &app,
        &boss,
        "free",
        json!({"post_id": post["id"], "reason": "a whole 대역", "scope": "range"}),
    )
    .await;
    assert_eq!(created.status(), 201);
    let the_ban = body(created).await;
    assert_eq!(the_ban["target"]["kind"], "guest");
    assert_eq!(the_ban["target"]["scope"], "range");
    assert_eq!(the_ban["target"]["tag"], post["author"]["tag"]);
    assert_eq!(guest_write_status(&app, "198.51.100.99").await, 403, "the same /24");
    assert_eq!(guest_write_status(&app, "198.51.101.99").await, 201, "the next /24");
    assert_eq!(
        member_post_from(&app, "198.51.100.77", &lee, "free").await.status(),
        403,
        "members too"
    );
    assert_eq!(
        member_post_from(&app, "198.51.100.77", &boss, "free").await.status(),
        201,
        "staff are exempt"
    );
    let log = modlog(&app, "free").await;
    assert_eq!(log[0]["target"]["scope"], "range", "{:?}", log[0]);

    let v6 = guest_post_from(&app, "2001:db8:5:1::1", "spam6").await;
    let created = ban(
        &app,
        &boss,
        "free",
        json!({"post_id": v6["id"], "reason": "r", "scope": "range"}),
    )
    .await;
    assert_eq!(created.status(), 201);
    assert_eq!(
        guest_write_status(&app, "2001:db8:5:ffff::9").await,
        403,
        "the same /48"
    );
    assert_eq!(guest_write_status(&app, "2001:db8:6::1").await, 201, "the next /48");

    // A member's post with a range: guest writes from its /24 stop.
    let at = body(member_post_from(&app, "192.0.2.10", &lee, "free").await).await;
    let created = ban(
        &app,
        &boss,
        "free",
        json!({"post_id": at["id"], "reason": "r", "scope": "range"}),
    )
    .await;
    assert_eq!(created.status(), 201);
    assert_eq!(
        body(created).await["target"],
        json!({"kind": "member", "member_id": lee_id, "nickname": "lee!", "scope": "range"})
    );
    assert_eq!(guest_write_status(&app, "192.0.2.200").await, 403);

    let by_id = ban(
        &app,
        &boss,
        "free",
        json!({"member_id": lee_id, "reason": "r", "scope": "range"}),
    )
    .await;
    assert_error(by_id, 400, "validation_failed", "scope").await;
    let wide = ban(
        &app,
        &boss,
        "free",
        json!({"post_id": post["id"], "reason": "r", "scope": "wide"}),
    )
    .await;
    assert_error(wide, 400, "validation_failed", "scope").await;
}

/// docs/API.md, Hardening, Bans: appointing a banned member lifted the
/// ban in effect; a member made admin while banned lifted their own.
async fn a_banned_member_is_not_appointed_and_nobody_lifts_their_own_ban(backend: Backend) {
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let table = format!("e2e-{}", shared::domain::new_id().to_lowercase());
    let settings = |admins: &'static str| vec![("ADMIN_USERNAMES", admins), ("TRUSTED_PROXIES", "127.0.0.1/32")];
    let app = spawn_app_in(backend, &settings("boss"), dir.clone(), Some(table.clone())).await;
    let (_, boss) = member(&app, "boss").await;
    let (lee_id, _) = member(&app, "lee").await;
    let banned = ban(&app, &boss, "free", json!({"member_id": lee_id, "reason": "spam"})).await;
    assert_eq!(banned.status(), 201);
    let ban_id = body(banned).await["id"].as_str().unwrap().to_owned();
    let appointed = appoint(&app, &boss, "free", &lee_id).await;
    assert_error(appointed, 403, "forbidden", "banned").await;
    assert_eq!(
        appoint(&app, &boss, "qna", &lee_id).await.status(),
        204,
        "another board's ban-free"
    );
    drop(app);

    // lee is made an admin while banned: still not the one to lift it.
    let app = spawn_app_in(backend, &settings("boss,lee"), dir, Some(table)).await;
    let lee = body(app.login("lee", "password-123").await).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/boards/free/bans/{ban_id}");
    let own = app.request(Method::DELETE, &path, Some(&lee), None).await;
    assert_error(own, 403, "forbidden", "themselves").await;
    let boss = body(app.login("boss", "password-123").await).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        app.request(Method::DELETE, &path, Some(&boss), None).await.status(),
        204
    );
}

/// docs/API.md, Hardening, Bans: deleting an account erases its writer
/// keys (a ban through what it left named an address with a public tag),
/// and the log and the bans show the deleted member as `deleted_member`.
async fn a_deleted_accounts_leftovers_ban_no_one_and_show_as_deleted_member(backend: Backend) {
    let app = board_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (mod_id, moderator) = member(&app, "mod").await;
    let (lee_id, lee) = member(&app, "lee").await;
    assert_eq!(appoint(&app, &boss, "free", &mod_id).await.status(), 204);
    let post = body(member_post_from(&app, "198.51.100.50", &lee, "free").await).await;
    let comment = from(
        &app,
        "198.51.100.50",
        Method::POST,
        &format!("/boards/free/posts/{}/comments", post["id"].as_str().unwrap()),
        Some(&lee),
        Some(json!({"body": "mine"})),
    )
    .await;
    assert_eq!(comment.status(), 201);
    let comment = body(comment).await;
    let banned = ban(&app, &moderator, "free", json!({"member_id": lee_id, "reason": "spam"})).await;
    assert_eq!(banned.status(), 201);

    // lee leaves, keeping the content; then the moderator leaves too.
    for (token, who) in [(&lee, "lee"), (&moderator, "mod")] {
        let left = app
            .request(
                Method::DELETE,
                "/members/me",
                Some(token),
                Some(json!({"password": "password-123", "delete_content": false})),
            )
            .await;
        assert_eq!(left.status(), 204, "{who} leaves");
    }
    let through_post = ban(&app, &boss, "free", json!({"post_id": post["id"], "reason": "r"})).await;
    assert_error(through_post, 400, "validation_failed", "post_id").await;
    let through_comment = ban(&app, &boss, "free", json!({"comment_id": comment["id"], "reason": "r"})).await;
    assert_error(through_comment, 400, "validation_failed", "comment_id").await;

    let bans = body(app.request(Method::GET, "/boards/free/bans", Some(&boss), None).await).await;
    assert_eq!(bans["bans"][0]["target"], json!({"kind": "deleted_member"}), "{bans}");
    assert_eq!(bans["bans"][0]["by"]["kind"], "deleted_member", "{bans}");
    let log = modlog(&app, "free").await;
    let ban_entry = log.iter().find(|e| e["action"] == "ban").unwrap();
    assert_eq!(ban_entry["target"], json!({"kind": "deleted_member"}));
    assert_eq!(ban_entry["by"]["kind"], "deleted_member");
    let appointment = log.iter().find(|e| e["action"] == "add_moderator").unwrap();
    assert_eq!(appointment["target"], json!({"kind": "deleted_member"}));
    assert!(appointment["by"]["member_id"].is_string(), "boss is still a member");
    let text = serde_json::to_string(&log).unwrap() + &bans.to_string();
    assert!(
        !text.contains(&lee_id) && !text.contains(&mod_id),
        "no deleted member's id is shown"
    );
}

/// docs/API.md, Hardening, Blocked words: screened after the ban
/// check and the quotas, so a banned or over-quota writer is refused for
/// that (and pays no screening); a refused text gives its quota back.
async fn blocked_words_are_screened_after_the_ban_check_and_the_quotas(backend: Backend) {
    let app = board_app(backend, &[("BLOCKED_WORDS", "스팸"), ("LIMIT_CREATES_ADDRESS", "2/1h")]).await;
    let (_, boss) = member(&app, "boss").await;
    let post = |address: &'static str, body: &'static str| {
        let app = &app;
        async move {
            from(
                app,
                address,
                Method::POST,
                "/boards/free/posts/guest",
                None,
                Some(json!({"nickname": "g", "password": "guest-pass", "title": "t", "body": body})),
            )
            .await
        }
    };
    let quota = "198.51.100.60";
    let refused = post(quota, "스팸 팝니다").await;
    assert_error(refused, 400, "validation_failed", "body").await;
    assert_eq!(
        post(quota, "one").await.status(),
        201,
        "a refused text gave its count back"
    );
    assert_eq!(post(quota, "two").await.status(), 201);
    assert_error(post(quota, "스팸 팝니다").await, 429, "rate_limited", "").await;

    let spammer = "198.51.100.61";
    let first = body(post(spammer, "first").await).await;
    let banned = ban(&app, &boss, "free", json!({"post_id": first["id"], "reason": "spam"})).await;
    assert_eq!(banned.status(), 201);
    assert_error(post(spammer, "스팸 팝니다").await, 403, "banned", "").await;
}
