//! Guests over real HTTP, each on both stores (docs/API.md, Proof of
//! work for anonymous writes, Edit history and edit locks): free writes then
//! `428 pow_required`, solutions accepted once, forged, expired and
//! malformed ones refused, members never asked; revisions and their limit;
//! answered posts locked for their authors. Client addresses are set with
//! `X-Forwarded-For` from a trusted 127.0.0.1.

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use reqwest::{Method, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::helpers::{ADMIN_ENROLL_TOKEN, Backend, TestApp, assert_error, body, spawn_app_with};

/// The signing key the proof-of-work tests configure (`POW_KEY`), so they
/// can sign challenges of their own.
const POW_KEY: &str = "a proof-of-work key for the e2e tests 4242";

/// Small challenges: a test solves each in a millisecond or two.
const EASY: &str = "2000";

async fn pow_app(backend: Backend, extra: &[(&str, &str)]) -> TestApp {
    let mut settings = vec![
        ("ADMIN_USERNAMES", "boss"),
        ("TRUSTED_PROXIES", "127.0.0.1/32"),
        ("POW_KEY", POW_KEY),
        ("POW_MAXNUMBER", EASY),
    ];
    settings.extend_from_slice(extra);
    spawn_app_with(backend, &settings).await
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(salt: &str, number: u64) -> String {
    hex(&Sha256::digest(format!("{salt}{number}").as_bytes()))
}

fn sign(key: &str, challenge: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(challenge.as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// What a client sends in `X-Pow` for `challenge`: it searches the number.
fn solve(challenge: &Value) -> String {
    let salt = challenge["salt"].as_str().unwrap();
    let max = challenge["maxnumber"].as_u64().unwrap();
    let number = (0..=max)
        .find(|n| digest(salt, *n) == challenge["challenge"].as_str().unwrap())
        .expect("a challenge the server issued has a number");
    payload(challenge, number)
}

fn payload(challenge: &Value, number: u64) -> String {
    let json = json!({
        "algorithm": challenge["algorithm"],
        "challenge": challenge["challenge"],
        "number": number,
        "salt": challenge["salt"],
        "signature": challenge["signature"],
        "took": 3,
    });
    base64::engine::general_purpose::STANDARD.encode(json.to_string())
}

/// A challenge made here under `key`, expiring at `expires`.
fn own_challenge(key: &str, expires: i64) -> Value {
    let salt = format!("0123456789abcdef01234567?expires={expires}&");
    let challenge = digest(&salt, 42);
    json!({"algorithm": "SHA-256", "challenge": challenge, "salt": salt,
           "signature": sign(key, &challenge), "maxnumber": 100})
}

fn now() -> i64 {
    shared::app::throttle::unix_now()
}

/// A request from `address` with an optional `X-Pow` and bearer token.
async fn send(
    app: &TestApp,
    address: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    pow: Option<&str>,
    payload: Value,
) -> Response {
    let mut request = app
        .client
        .request(method, format!("{}{path}", app.address))
        .header("x-forwarded-for", address)
        .json(&payload);
    if let Some(pow) = pow {
        request = request.header("x-pow", pow);
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.expect("request failed")
}

/// Signs up with a solved challenge (`POW=always` asks signups too) and
/// logs in: the bearer token.
async fn member_token(app: &TestApp, username: &str) -> String {
    let challenge = body(app.get("/challenge").await).await;
    let signup = app
        .client
        .post(format!("{}/members", app.address))
        .header("x-forwarded-for", "192.0.2.200")
        .header("x-pow", solve(&challenge))
        .header("admin-enroll-token", ADMIN_ENROLL_TOKEN)
        .json(&json!({"username": username, "password": "password-123", "nickname": username}))
        .send()
        .await
        .unwrap();
    assert_eq!(signup.status(), 201);
    let session = body(app.login(username, "password-123").await).await;
    session["token"].as_str().unwrap().to_owned()
}

async fn guest_post(app: &TestApp, address: &str, board: &str, pow: Option<&str>) -> Response {
    let fields = json!({"nickname": "손님", "password": "guest-pw", "title": "질문", "body": "내용"});
    send(
        app,
        address,
        Method::POST,
        &format!("/boards/{board}/posts/guest"),
        None,
        pow,
        fields,
    )
    .await
}

/// A `428 pow_required`: its fresh challenge, after checking its shape and message.
async fn refused(response: Response, mentions: &str) -> Value {
    assert_eq!(response.status(), 428);
    let answer = body(response).await;
    assert_eq!(answer["error"]["code"], "pow_required", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(mentions), "{message:?} should mention {mentions:?}");
    let challenge = answer["challenge"].clone();
    for field in ["algorithm", "challenge", "salt", "signature", "maxnumber"] {
        assert!(!challenge[field].is_null(), "the challenge has {field}: {challenge}");
    }
    assert_eq!(challenge["algorithm"], "SHA-256");
    assert_eq!(challenge["maxnumber"], 2000);
    challenge
}

on_both_stores!(
    anonymous_writes_are_free_up_to_the_limit_then_need_a_solution_accepted_once,
    forged_expired_and_malformed_solutions_are_refused_and_a_challenge_comes_with_each,
    every_kind_of_anonymous_write_asks_and_members_never_do,
    a_busy_board_asks_every_anonymous_writer_while_others_stay_free,
    only_accepted_writes_make_a_board_busy,
    a_write_refused_for_want_of_a_proof_costs_no_quota_and_no_hash,
    field_rules_and_bans_answer_before_the_proof_is_asked,
    every_edit_keeps_the_version_it_replaces_newest_first,
    a_post_keeps_its_last_fifty_revisions_and_they_go_with_it,
    revisions_page_and_one_is_deleted_by_its_author_or_staff_only,
    edits_count_against_the_write_quota,
    answered_posts_lock_for_their_authors_on_boards_that_lock,
    a_guests_answered_post_locks_before_its_password_is_checked,
    an_answer_acknowledged_while_its_author_deletes_the_post_keeps_it,
);

async fn anonymous_writes_are_free_up_to_the_limit_then_need_a_solution_accepted_once(backend: Backend) {
    let app = pow_app(backend, &[("POW", "auto"), ("POW_FREE_WRITES", "2")]).await;
    // An address's free writes count per 10 minutes: start well inside one.
    let into_window = now() % 600;
    if into_window > 570 {
        tokio::time::sleep(std::time::Duration::from_secs((601 - into_window) as u64)).await;
    }
    for _ in 0..2 {
        assert_eq!(guest_post(&app, "198.51.100.1", "free", None).await.status(), 201);
    }
    let challenge = refused(guest_post(&app, "198.51.100.1", "free", None).await, "X-Pow").await;
    let solution = solve(&challenge);
    let created = guest_post(&app, "198.51.100.1", "free", Some(&solution)).await;
    assert_eq!(created.status(), 201);
    refused(
        guest_post(&app, "198.51.100.1", "free", Some(&solution)).await,
        "used already",
    )
    .await;
    // A challenge from GET /challenge works the same way.
    let fetched = body(app.get("/challenge").await).await;
    let created = guest_post(&app, "198.51.100.1", "free", Some(&solve(&fetched))).await;
    assert_eq!(created.status(), 201);
    // Another address has its own free writes.
    assert_eq!(guest_post(&app, "198.51.100.2", "free", None).await.status(), 201);
}

async fn forged_expired_and_malformed_solutions_are_refused_and_a_challenge_comes_with_each(backend: Backend) {
    let app = pow_app(backend, &[("POW", "always")]).await;
    let address = "203.0.113.9";
    refused(guest_post(&app, address, "free", None).await, "needs a proof of work").await;

    let forged = own_challenge("somebody else's key, forty bytes long....", now() + 300);
    refused(
        guest_post(&app, address, "free", Some(&payload(&forged, 42))).await,
        "signature",
    )
    .await;
    let expired = own_challenge(POW_KEY, now() - 5);
    refused(
        guest_post(&app, address, "free", Some(&payload(&expired, 42))).await,
        "expired",
    )
    .await;
    let ours = own_challenge(POW_KEY, now() + 300);
    refused(
        guest_post(&app, address, "free", Some(&payload(&ours, 43))).await,
        "does not solve",
    )
    .await;
    refused(
        guest_post(&app, address, "free", Some("not base64 at all!")).await,
        "base64",
    )
    .await;
    // The same challenge, signed with the configured key and solved, is accepted once.
    assert_eq!(
        guest_post(&app, address, "free", Some(&payload(&ours, 42)))
            .await
            .status(),
        201
    );
    refused(
        guest_post(&app, address, "free", Some(&payload(&ours, 42))).await,
        "used already",
    )
    .await;
}

async fn every_kind_of_anonymous_write_asks_and_members_never_do(backend: Backend) {
    let app = pow_app(backend, &[("POW", "always")]).await;
    let token = member_token(&app, "member_01").await;
    let post = app.member_post(&token).await;
    let address = "192.0.2.30";
    let comment = json!({"nickname": "손님", "password": "guest-pw", "body": "댓글"});
    let signup = json!({"username": "newcomer", "password": "password-123", "nickname": "newcomer"});
    let writes = [
        (format!("/boards/free/posts/{post}/comments/guest"), comment, 201),
        (
            format!("/boards/free/posts/{post}/votes/guest"),
            json!({"vote": "like"}),
            200,
        ),
        (
            format!("/boards/free/posts/{post}/reports"),
            json!({"reason": "spam"}),
            201,
        ),
        ("/members".to_owned(), signup, 201),
    ];
    for (path, payload, status) in writes {
        let asked = send(&app, address, Method::POST, &path, None, None, payload.clone()).await;
        let challenge = refused(asked, "X-Pow").await;
        let solution = solve(&challenge);
        let done = send(&app, address, Method::POST, &path, None, Some(&solution), payload).await;
        assert_eq!(done.status(), status, "{path}: {}", done.text().await.unwrap());
    }
    // Members write, like and report with no proof at all.
    let other = member_token(&app, "member_02").await;
    let written = send(
        &app,
        address,
        Method::POST,
        "/boards/free/posts",
        Some(&other),
        None,
        json!({"title": "t", "body": "b"}),
    )
    .await;
    assert_eq!(written.status(), 201);
    let liked = send(
        &app,
        address,
        Method::PUT,
        &format!("/boards/free/posts/{post}/like"),
        Some(&other),
        None,
        json!({}),
    )
    .await;
    assert_eq!(liked.status(), 200);
    let reported = send(
        &app,
        address,
        Method::POST,
        &format!("/boards/free/posts/{post}/reports"),
        Some(&other),
        None,
        json!({"reason": "off topic"}),
    )
    .await;
    assert!(reported.status().is_success(), "{}", reported.status());
}

async fn a_busy_board_asks_every_anonymous_writer_while_others_stay_free(backend: Backend) {
    let app = pow_app(
        backend,
        &[("POW", "auto"), ("POW_FREE_WRITES", "100"), ("POW_BOARD_RATE", "3")],
    )
    .await;
    // The board's count is per minute: start well inside one.
    let second = now() % 60;
    if second > 45 {
        tokio::time::sleep(std::time::Duration::from_secs((61 - second) as u64)).await;
    }
    for i in 0..3 {
        let address = format!("198.51.100.{}", 10 + i);
        assert_eq!(guest_post(&app, &address, "free", None).await.status(), 201);
    }
    // A fourth writer, new to the board, pays: the board is busy.
    refused(guest_post(&app, "198.51.100.50", "free", None).await, "X-Pow").await;
    // Another board is not busy.
    assert_eq!(guest_post(&app, "198.51.100.51", "qna", None).await.status(), 201);
}

/// The audit's 61 unsolved requests a minute made every writer on a board
/// solve. A write refused at the gate (428) or after it (here a vote on
/// one's own post) gives its board count back: only accepted writes count.
async fn only_accepted_writes_make_a_board_busy(backend: Backend) {
    let app = pow_app(
        backend,
        &[("POW", "auto"), ("POW_FREE_WRITES", "2"), ("POW_BOARD_RATE", "3")],
    )
    .await;
    let second = now() % 60;
    if second > 40 {
        tokio::time::sleep(std::time::Duration::from_secs((61 - second) as u64)).await;
    }
    let spammer = "198.51.100.70";
    let own = guest_post(&app, spammer, "free", None).await;
    assert_eq!(own.status(), 201);
    let own = body(own).await["id"].as_str().unwrap().to_owned();
    let vote = send(
        &app,
        spammer,
        Method::POST,
        &format!("/boards/free/posts/{own}/votes/guest"),
        None,
        None,
        json!({"vote": "like"}),
    )
    .await;
    assert_eq!(vote.status(), 403, "its own post: refused after the gate");
    for _ in 0..10 {
        refused(guest_post(&app, spammer, "free", None).await, "X-Pow").await;
    }
    // One accepted write so far: two more writers are free, the next pays.
    for writer in ["198.51.100.71", "198.51.100.72"] {
        assert_eq!(guest_post(&app, writer, "free", None).await.status(), 201, "{writer}");
    }
    refused(guest_post(&app, "198.51.100.73", "free", None).await, "X-Pow").await;
}

async fn a_write_refused_for_want_of_a_proof_costs_no_quota_and_no_hash(backend: Backend) {
    let app = pow_app(backend, &[("POW", "always"), ("LIMIT_CREATES_ADDRESS", "2/10m")]).await;
    let hashes = app.hashes();
    for _ in 0..5 {
        refused(guest_post(&app, "203.0.113.77", "free", None).await, "X-Pow").await;
    }
    assert_eq!(app.hashes(), hashes, "no guest password was hashed");
    // The quota is whole: two writes with proofs, then the quota refuses.
    for _ in 0..2 {
        let challenge = body(app.get("/challenge").await).await;
        let created = guest_post(&app, "203.0.113.77", "free", Some(&solve(&challenge))).await;
        assert_eq!(created.status(), 201);
    }
    let challenge = body(app.get("/challenge").await).await;
    let over = guest_post(&app, "203.0.113.77", "free", Some(&solve(&challenge))).await;
    assert_eq!(over.status(), 429);
}

async fn field_rules_and_bans_answer_before_the_proof_is_asked(backend: Backend) {
    let app = pow_app(backend, &[("POW", "always")]).await;
    let no_title = json!({"nickname": "손님", "password": "guest-pw", "title": "", "body": "내용"});
    let answer = send(
        &app,
        "192.0.2.1",
        Method::POST,
        "/boards/free/posts/guest",
        None,
        None,
        no_title,
    )
    .await;
    assert_error(answer, 400, "validation_failed", "title").await;
    let unknown = guest_post(&app, "192.0.2.1", "no-such-board", None).await;
    assert_eq!(unknown.status(), 404);
    // A banned address is told so, not asked for work it could never use.
    let boss = member_token(&app, "boss").await;
    let challenge = body(app.get("/challenge").await).await;
    let post = guest_post(&app, "192.0.2.66", "free", Some(&solve(&challenge))).await;
    let post = body(post).await["id"].as_str().unwrap().to_owned();
    let ban = app
        .request(
            Method::POST,
            "/boards/free/bans",
            Some(&boss),
            Some(json!({"post_id": post, "reason": "spam", "duration_s": 86400})),
        )
        .await;
    assert_eq!(ban.status(), 201, "{}", ban.text().await.unwrap());
    assert_error(
        guest_post(&app, "192.0.2.66", "free", None).await,
        403,
        "banned",
        "spam",
    )
    .await;
}

/// Edits `post` as its member author with `title` and `body`.
async fn edit(app: &TestApp, token: &str, board: &str, post: &str, title: &str, text: &str) -> Response {
    app.request(
        Method::PUT,
        &format!("/boards/{board}/posts/{post}"),
        Some(token),
        Some(json!({"title": title, "body": text})),
    )
    .await
}

async fn revisions(app: &TestApp, board: &str, post: &str) -> Vec<Value> {
    let response = app.get(&format!("/boards/{board}/posts/{post}/revisions")).await;
    assert_eq!(response.status(), 200);
    body(response).await["revisions"].as_array().unwrap().clone()
}

async fn every_edit_keeps_the_version_it_replaces_newest_first(backend: Backend) {
    let app = pow_app(backend, &[("POW", "off")]).await;
    let token = app.member_token("writer_01").await;
    let created = app
        .request(
            Method::POST,
            "/boards/free/posts",
            Some(&token),
            Some(json!({"title": "first", "body": "one"})),
        )
        .await;
    let created = body(created).await;
    let post = created["id"].as_str().unwrap();
    assert_eq!(created["revision_count"], 0);
    assert_eq!(revisions(&app, "free", post).await, Vec::<Value>::new());

    assert_eq!(edit(&app, &token, "free", post, "second", "two").await.status(), 200);
    let edited = body(edit(&app, &token, "free", post, "third", "three").await).await;
    assert_eq!(edited["revision_count"], 2);
    assert_eq!(
        (edited["title"].as_str(), edited["body"].as_str()),
        (Some("third"), Some("three"))
    );
    let kept = revisions(&app, "free", post).await;
    let texts: Vec<(&str, &str)> = kept
        .iter()
        .map(|r| (r["title"].as_str().unwrap(), r["body"].as_str().unwrap()))
        .collect();
    assert_eq!(texts, [("second", "two"), ("first", "one")]);
    // Each version's time is when it was written: the first is the post's creation.
    assert_eq!(kept[1]["edited_at"], created["created_at"]);
    assert!(kept[0]["edited_at"].as_str() >= kept[1]["edited_at"].as_str());
    let detail = body(app.get(&format!("/boards/free/posts/{post}")).await).await;
    assert_eq!(detail["revision_count"], 2);

    // A guest's edit keeps its version too.
    let guest = app.guest_post("guest-pw").await;
    let guest_edit = app
        .request(
            Method::PUT,
            &format!("/boards/free/posts/{guest}/guest"),
            None,
            Some(json!({"password": "guest-pw", "title": "고침", "body": "고친 내용"})),
        )
        .await;
    assert_eq!(guest_edit.status(), 200);
    let kept = revisions(&app, "free", &guest).await;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["title"], "guest title");

    // An edit refused by If-Match keeps nothing.
    let stale = app
        .client
        .put(format!("{}/boards/free/posts/{post}", app.address))
        .bearer_auth(&token)
        .header("if-match", "\"not-this-version\"")
        .json(&json!({"title": "lost", "body": "lost"}))
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 412);
    assert_eq!(revisions(&app, "free", post).await.len(), 2);
    let missing = app.get("/boards/free/posts/01JD3Z8Q6W4G7T2N5B8K1M0ZZZ/revisions").await;
    assert_error(missing, 404, "not_found", "post").await;
}

async fn a_post_keeps_its_last_fifty_revisions_and_they_go_with_it(backend: Backend) {
    let app = pow_app(backend, &[("POW", "off")]).await;
    let token = app.member_token("writer_02").await;
    let post = app.member_post(&token).await;
    for version in 1..=52 {
        let edited = edit(&app, &token, "free", &post, &format!("v{version}"), "b").await;
        assert_eq!(edited.status(), 200);
    }
    let detail = body(app.get(&format!("/boards/free/posts/{post}")).await).await;
    assert_eq!(detail["revision_count"], 50);
    let kept = revisions(&app, "free", &post).await;
    let titles: Vec<&str> = kept.iter().map(|r| r["title"].as_str().unwrap()).collect();
    assert_eq!(titles.len(), 50);
    // Newest first: v51 (replaced by v52) down to v2; the original and v1 are gone.
    assert_eq!((titles[0], titles[49]), ("v51", "v2"));

    let deleted = app
        .request(
            Method::DELETE,
            &format!("/boards/free/posts/{post}"),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(deleted.status(), 204);
    let gone = app.get(&format!("/boards/free/posts/{post}/revisions")).await;
    assert_eq!(gone.status(), 404);
}

async fn revisions_page_and_one_is_deleted_by_its_author_or_staff_only(backend: Backend) {
    let app = pow_app(backend, &[("POW", "off")]).await;
    let (author, other, boss) = (
        app.member_token("author").await,
        app.member_token("other").await,
        app.member_token("boss").await,
    );
    let post = app.member_post(&author).await;
    for n in 1..=5 {
        assert_eq!(
            edit(&app, &author, "free", &post, &format!("v{n}"), "text")
                .await
                .status(),
            200
        );
    }
    let path = format!("/boards/free/posts/{post}/revisions");
    let first = body(app.get(&format!("{path}?limit=2")).await).await;
    let numbers = |page: &Value| -> Vec<u64> {
        page["revisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["number"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(numbers(&first), [5, 4]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = body(app.get(&format!("{path}?limit=2&cursor={cursor}")).await).await;
    assert_eq!(numbers(&second), [3, 2]);
    assert_error(
        app.get(&format!("{path}?cursor=nonsense")).await,
        400,
        "validation_failed",
        "cursor",
    )
    .await;

    let delete = |token: String, revision: &str| {
        let (app, path) = (&app, format!("{path}/{revision}"));
        async move { app.request(Method::DELETE, &path, Some(&token), None).await }
    };
    assert_error(delete(other.clone(), "4").await, 403, "forbidden", "author or staff").await;
    assert_error(
        delete(author.clone(), "zero").await,
        400,
        "validation_failed",
        "revision",
    )
    .await;
    assert_eq!(delete(author.clone(), "4").await.status(), 204);
    assert_error(delete(author.clone(), "4").await, 404, "not_found", "revision").await;
    assert_eq!(delete(boss.clone(), "2").await.status(), 204);
    let all = body(app.get(&path).await).await;
    assert_eq!(numbers(&all), [5, 3, 1]);
    let detail = body(app.get(&format!("/boards/free/posts/{post}")).await).await;
    assert_eq!(detail["revision_count"], 3);
    // Staff's delete is logged; the author's is not.
    let log = body(app.get("/boards/free/modlog").await).await;
    let actions: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(actions, ["delete_revision"]);
    // A banned author deletes nothing, as they write nothing.
    let ban = json!({"post_id": post, "reason": "spam", "duration_s": 600});
    let banned = app
        .request(Method::POST, "/boards/free/bans", Some(&boss), Some(ban))
        .await;
    assert_eq!(banned.status(), 201);
    assert_error(delete(author.clone(), "5").await, 403, "banned", "").await;
    assert_eq!(numbers(&body(app.get(&path).await).await), [5, 3, 1]);
}

async fn edits_count_against_the_write_quota(backend: Backend) {
    let app = pow_app(backend, &[("POW", "off"), ("LIMIT_CREATES_MEMBER", "3/1h")]).await;
    let token = app.member_token("editor").await;
    let post = app.member_post(&token).await;
    assert_eq!(edit(&app, &token, "free", &post, "one", "1").await.status(), 200);
    assert_eq!(edit(&app, &token, "free", &post, "two", "2").await.status(), 200);
    // The create and two edits: the fourth write is one too many.
    assert_error(
        edit(&app, &token, "free", &post, "three", "3").await,
        429,
        "rate_limited",
        "",
    )
    .await;
    let detail = body(app.get(&format!("/boards/free/posts/{post}")).await).await;
    assert_eq!(
        (detail["title"].as_str(), detail["revision_count"].as_u64()),
        (Some("two"), Some(2))
    );
}

/// `qa` locks answered posts; `boss` is admin.
async fn locking_board(app: &TestApp, boss: &str) {
    let opened = app
        .request(
            Method::PUT,
            "/boards/qa",
            Some(boss),
            Some(json!({"name": "질문", "lock_after_comments": true})),
        )
        .await;
    assert_eq!(opened.status(), 201);
}

/// `token`'s question on `qa`: its id.
async fn question(app: &TestApp, token: &str) -> String {
    let created = app
        .request(
            Method::POST,
            "/boards/qa/posts",
            Some(token),
            Some(json!({"title": "how?", "body": "question"})),
        )
        .await;
    assert_eq!(created.status(), 201);
    body(created).await["id"].as_str().unwrap().to_owned()
}

async fn comment_as(app: &TestApp, token: &str, board: &str, post: &str, text: &str) -> String {
    let response = app
        .request(
            Method::POST,
            &format!("/boards/{board}/posts/{post}/comments"),
            Some(token),
            Some(json!({"body": text})),
        )
        .await;
    assert_eq!(response.status(), 201);
    body(response).await["id"].as_str().unwrap().to_owned()
}

async fn answered_posts_lock_for_their_authors_on_boards_that_lock(backend: Backend) {
    let app = pow_app(backend, &[("POW", "off")]).await;
    let boss = app.member_token("boss").await;
    locking_board(&app, &boss).await;
    let asker = app.member_token("asker").await;
    let helper = app.member_token("helper").await;
    let post = question(&app, &asker).await;
    // The author's own comment locks nothing.
    comment_as(&app, &asker, "qa", &post, "more detail").await;
    assert_eq!(
        edit(&app, &asker, "qa", &post, "how?", "question, clearer")
            .await
            .status(),
        200
    );

    let answer = comment_as(&app, &helper, "qa", &post, "like this").await;
    assert_error(
        edit(&app, &asker, "qa", &post, "x", "emptied").await,
        409,
        "locked",
        "commented",
    )
    .await;
    let delete = app
        .request(Method::DELETE, &format!("/boards/qa/posts/{post}"), Some(&asker), None)
        .await;
    assert_error(delete, 409, "locked", "commented").await;
    let detail = body(app.get(&format!("/boards/qa/posts/{post}")).await).await;
    assert_eq!(detail["body"], "question, clearer", "nothing changed");

    // While the answer stands; once it is gone, the post is its author's again.
    let withdrawn = app
        .request(
            Method::DELETE,
            &format!("/boards/qa/posts/{post}/comments/{answer}"),
            Some(&helper),
            None,
        )
        .await;
    assert_eq!(withdrawn.status(), 204);
    assert_eq!(edit(&app, &asker, "qa", &post, "how?", "solved").await.status(), 200);

    // On a board that does not lock, an answered post stays editable.
    let free_post = app.member_post(&asker).await;
    comment_as(&app, &helper, "free", &free_post, "answer").await;
    assert_eq!(
        edit(&app, &asker, "free", &free_post, "t", "changed").await.status(),
        200
    );

    // Staff removal is not locked.
    comment_as(&app, &helper, "qa", &post, "answer again").await;
    let removed = app
        .request(
            Method::POST,
            &format!("/boards/qa/posts/{post}/remove"),
            Some(&boss),
            Some(json!({"reason": "off topic"})),
        )
        .await;
    assert!(removed.status().is_success(), "{}", removed.status());
    assert_eq!(app.get(&format!("/boards/qa/posts/{post}")).await.status(), 404);
}

/// The audit's race, ten rounds: the author deletes while another answers.
/// Whichever comes first wins; an answer that got `201` keeps its post.
async fn an_answer_acknowledged_while_its_author_deletes_the_post_keeps_it(backend: Backend) {
    let app = pow_app(backend, &[("POW", "off")]).await;
    let boss = app.member_token("boss").await;
    locking_board(&app, &boss).await;
    let (asker, helper) = (app.member_token("asker").await, app.member_token("helper").await);
    let mut outcomes = std::collections::BTreeMap::new();
    for _ in 0..10 {
        let post = question(&app, &asker).await;
        let path = format!("/boards/qa/posts/{post}");
        let comments = format!("{path}/comments");
        let (answered, deleted) = tokio::join!(
            app.request(
                Method::POST,
                &comments,
                Some(&helper),
                Some(json!({"body": "like this"}))
            ),
            app.request(Method::DELETE, &path, Some(&asker), None),
        );
        let statuses = (answered.status().as_u16(), deleted.status().as_u16());
        match statuses {
            (201, 409) => assert_eq!(app.get(&path).await.status(), 200, "the answered post stays"),
            (404, 204) => {}
            other => panic!("both or neither went through: {other:?}"),
        }
        *outcomes.entry(statuses).or_insert(0) += 1;
    }
    eprintln!("answer, delete: {outcomes:?}");
}

async fn a_guests_answered_post_locks_before_its_password_is_checked(backend: Backend) {
    let app = pow_app(backend, &[("POW", "off")]).await;
    // The seeded `qna` board locks answered posts.
    let board = body(app.get("/boards/qna").await).await;
    assert_eq!(board["lock_after_comments"], true);
    let created = guest_post(&app, "198.51.100.80", "qna", None).await;
    let post = body(created).await["id"].as_str().unwrap().to_owned();
    let guest_comment = |address: &'static str| {
        let path = format!("/boards/qna/posts/{post}/comments/guest");
        let app = &app;
        async move {
            let fields = json!({"nickname": "손님", "password": "pw-1234", "body": "댓글"});
            send(app, address, Method::POST, &path, None, None, fields).await
        }
    };
    let guest_edit = |password: &'static str| {
        let path = format!("/boards/qna/posts/{post}/guest");
        let app = &app;
        async move {
            let fields = json!({"password": password, "title": "질문", "body": "지움"});
            send(app, "198.51.100.80", Method::PUT, &path, None, None, fields).await
        }
    };
    // A comment from the writer's own address is the writer's.
    assert_eq!(guest_comment("198.51.100.80").await.status(), 201);
    assert_eq!(guest_edit("guest-pw").await.status(), 200);
    assert_eq!(guest_comment("198.51.100.81").await.status(), 201);
    let hashes = app.hashes();
    assert_error(guest_edit("wrong-pw").await, 409, "locked", "commented").await;
    assert_eq!(app.hashes(), hashes, "a locked post costs no password check");
    let delete = send(
        &app,
        "198.51.100.80",
        Method::DELETE,
        &format!("/boards/qna/posts/{post}/guest"),
        None,
        None,
        json!({"password": "guest-pw"}),
    )
    .await;
    assert_error(delete, 409, "locked", "commented").await;
}
