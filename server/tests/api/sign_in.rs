//! Passwords and TOTP over real HTTP, each on both stores (docs/API.md,
//! Passwords and staff sign-in): the blocklist and the username and
//! nickname refused naming the field before any hash, the nist policy,
//! members already holding a listed password told so at login, TOTP
//! enrollment and confirmation, logins without, with wrong and with right
//! codes, replays, recovery codes once each, removal, and staff routes
//! refused to staff without TOTP.

use reqwest::{Method, Response};
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::helpers::{Backend, TestApp, assert_error, body, spawn_app_with};

/// A code of `secret` (base32) for the time step `offset` steps from now.
fn code(secret: &str, offset: i64) -> String {
    let totp = totp_rs::Builder::new()
        .with_secret(totp_rs::Secret::try_from_base32(secret).expect("a base32 secret"))
        .build()
        .expect("a TOTP generator");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    totp.generate((now + 30 * offset) as u64).to_string()
}

async fn refused_field(response: Response, status: u16, code: &str, field: &str, mentions: &str) {
    assert_eq!(response.status(), status, "expected {status} {code} on {field}");
    let answer = body(response).await;
    assert_eq!(answer["error"]["code"], code, "{answer}");
    assert_eq!(answer["error"]["field"], field, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(mentions), "{message:?} should mention {mentions:?}");
}

async fn signup(app: &TestApp, username: &str, nickname: &str, password: &str) -> Response {
    app.post(
        "/members",
        json!({"username": username, "password": password, "nickname": nickname}),
    )
    .await
}

async fn login(app: &TestApp, username: &str, password: &str, totp: Option<&str>) -> Response {
    let mut request = json!({"username": username, "password": password});
    if let Some(totp) = totp {
        request["totp"] = json!(totp);
    }
    app.post("/sessions", request).await
}

async fn token_of(response: Response) -> String {
    assert_eq!(response.status(), 200, "a login");
    body(response).await["token"].as_str().unwrap().to_owned()
}

/// A member stored with `password` as an older deployment would have
/// accepted it (no v4 rules), straight through the store.
async fn seed_member(app: &TestApp, username: &str, password: &str) {
    let hash = app
        .state
        .app
        .hashing()
        .unwrap()
        .hash(shared::hashing::Tier::Member, SecretString::from(password))
        .await
        .unwrap();
    let member = shared::domain::Member {
        id: shared::domain::new_id(),
        username: username.to_owned(),
        nickname: format!("{username}!"),
        created_at: shared::domain::now(),
    };
    app.state
        .app
        .store()
        .create_member(&member, &shared::domain::PasswordHash::new(hash), None)
        .await
        .unwrap();
}

/// `POST /members/me/totp` with `password`, and `Admin-Enroll-Token` when given.
async fn start_totp(app: &TestApp, token: &str, password: Option<&str>, enroll_token: Option<&str>) -> Response {
    let mut request = app
        .client
        .post(format!("{}/members/me/totp", app.address))
        .bearer_auth(token);
    if let Some(enroll_token) = enroll_token {
        request = request.header("Admin-Enroll-Token", enroll_token);
    }
    let body = password.map_or_else(|| json!({}), |password| json!({"password": password}));
    request.json(&body).send().await.unwrap()
}

/// Starts and confirms TOTP for the member; answers the secret and the recovery codes.
async fn turn_on_totp(app: &TestApp, token: &str, password: &str) -> (String, Vec<String>) {
    let started = start_totp(app, token, Some(password), None).await;
    assert_eq!(started.status(), 200);
    let secret = body(started).await["secret"].as_str().unwrap().to_owned();
    let confirmed = app
        .request(
            Method::POST,
            "/members/me/totp/confirm",
            Some(token),
            Some(json!({"code": code(&secret, 0)})),
        )
        .await;
    assert_eq!(confirmed.status(), 200);
    let codes = body(confirmed).await["recovery_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    (secret, codes)
}

pub(crate) async fn common_and_personal_passwords_are_refused_naming_the_field_before_any_hash(backend: Backend) {
    let app = spawn_app_with(backend, &[]).await;
    let hashes = app.hashes();
    for common in [
        "password123",
        "qwerty123",
        "12345678",
        "Password123",
        "ＱＷＥＲＴＹ１２３",
        // The audit's variants: a trailing space or NBSP, a ZWSP inside,
        // Cyrillic look-alikes (р, а), a Hangul filler inside.
        "password123 ",
        "password123\u{00A0}",
        "pass\u{200B}word123",
        "\u{0440}\u{0430}ssword123",
        "password\u{3164}123",
    ] {
        let response = signup(&app, "kim", "Kim", common).await;
        refused_field(response, 400, "validation_failed", "password", "password is too common").await;
    }
    // Nothing that shows: 8 spaces, 8 Hangul fillers.
    for blank in [
        "        ",
        "\u{3164}\u{3164}\u{3164}\u{3164}\u{3164}\u{3164}\u{3164}\u{3164}",
    ] {
        let response = signup(&app, "kim", "Kim", blank).await;
        refused_field(response, 400, "validation_failed", "password", "characters that show").await;
    }
    let response = signup(&app, "dragon_rider", "Kim", "Dragon_Rider").await;
    refused_field(response, 400, "validation_failed", "password", "username or nickname").await;
    let response = signup(&app, "kim", "별빛 속의 여행자", "별빛 속의 여행자").await;
    refused_field(response, 400, "validation_failed", "password", "username or nickname").await;
    assert_eq!(app.hashes(), hashes, "refused before any hash");

    assert_eq!(
        signup(&app, "jjigae_lover_kr", "Kim", "password-123").await.status(),
        201
    );
    let session = body(login(&app, "jjigae_lover_kr", "password-123", None).await).await;
    assert!(session.get("password_warning").is_none(), "{session}");
    let token = session["token"].as_str().unwrap();
    let change = |new: &'static str| {
        app.request(
            Method::PUT,
            "/members/me/password",
            Some(token),
            Some(json!({"current_password": "password-123", "new_password": new})),
        )
    };
    let hashes = app.hashes();
    refused_field(
        change("qwerty123").await,
        400,
        "validation_failed",
        "new_password",
        "too common",
    )
    .await;
    refused_field(
        change("JJIGAE_LOVER_KR").await,
        400,
        "validation_failed",
        "new_password",
        "username",
    )
    .await;
    refused_field(change("short").await, 400, "validation_failed", "new_password", "8-256").await;
    assert_eq!(app.hashes(), hashes, "refused before any hash");
    assert_eq!(change("a long and rare one").await.status(), 204);

    // A member whose password an older deployment accepted keeps signing
    // in, and is told.
    seed_member(&app, "old_timer", "iloveyou1").await;
    let session = body(login(&app, "old_timer", "iloveyou1", None).await).await;
    assert!(session["token"].is_string(), "{session}");
    assert_eq!(session["password_warning"], "too_common", "{session}");
}

pub(crate) async fn the_nist_policy_asks_fifteen_characters_of_a_password_alone(backend: Backend) {
    let app = spawn_app_with(backend, &[("PASSWORD_POLICY", "nist")]).await;
    let response = signup(&app, "lee", "Lee", "fourteen-chars").await;
    refused_field(response, 400, "validation_failed", "password", "15-256").await;
    assert_eq!(signup(&app, "lee", "Lee", "fifteen-chars!!").await.status(), 201);

    // With TOTP on, 8 is enough again: the password is no longer the only factor.
    let token = token_of(login(&app, "lee", "fifteen-chars!!", None).await).await;
    let (secret, codes) = turn_on_totp(&app, &token, "fifteen-chars!!").await;
    let response = app
        .request(
            Method::PUT,
            "/members/me/password",
            Some(&token),
            Some(json!({"current_password": "fifteen-chars!!", "new_password": "short-ok"})),
        )
        .await;
    assert_eq!(response.status(), 204);
    let session = body(login(&app, "lee", "short-ok", Some(&code(&secret, 1))).await).await;
    assert!(session.get("password_warning").is_none(), "{session}");
    // Turning TOTP off would leave the short password alone: refused.
    let token = session["token"].as_str().unwrap();
    let response = app
        .request(
            Method::DELETE,
            "/members/me/totp",
            Some(token),
            Some(json!({"password": "short-ok", "code": codes[0]})),
        )
        .await;
    refused_field(response, 400, "validation_failed", "password", "only factor").await;

    // A member with a short password from before is told at login.
    seed_member(&app, "old_lee", "ten-chars!").await;
    let session = body(login(&app, "old_lee", "ten-chars!", None).await).await;
    assert_eq!(session["password_warning"], "too_short", "{session}");

    let app = spawn_app_with(backend, &[("MEMBER_PASSWORD_MIN", "12")]).await;
    let response = signup(&app, "park", "Park", "eleven-char").await;
    refused_field(response, 400, "validation_failed", "password", "12-256").await;
    assert_eq!(signup(&app, "park", "Park", "twelve-chars").await.status(), 201);
}

pub(crate) async fn totp_is_enrolled_confirmed_required_at_login_and_removed(backend: Backend) {
    // More wrong logins than the default limits allow: the limits have a test of their own.
    let unlimited = [
        ("LIMIT_LOGIN_USER_ADDRESS", "off"),
        ("LIMIT_LOGIN_ADDRESS", "off"),
        ("LIMIT_LOGIN_FAILURES_USER", "off"),
    ];
    let app = spawn_app_with(backend, &unlimited).await;
    assert_eq!(signup(&app, "choi", "Choi", "password-123").await.status(), 201);
    let token = token_of(login(&app, "choi", "password-123", None).await).await;

    // A stolen token alone starts nothing: the password is asked.
    let without = start_totp(&app, &token, None, None).await;
    refused_field(without, 400, "validation_failed", "password", "password").await;
    let started = start_totp(&app, &token, Some("password-123"), None).await;
    assert_eq!(started.status(), 200);
    assert_eq!(started.headers()["cache-control"], "no-store");
    let enrollment = body(started).await;
    let secret = enrollment["secret"].as_str().unwrap().to_owned();
    let uri = enrollment["otpauth_uri"].as_str().unwrap();
    assert!(
        uri.starts_with("otpauth://totp/") && uri.contains("choi") && uri.contains(&format!("secret={secret}")),
        "{uri}"
    );
    // Not on until confirmed: a login needs no code yet.
    assert_eq!(login(&app, "choi", "password-123", None).await.status(), 200);
    // Starting again replaces the waiting secret: a code of the first one no longer confirms.
    let restarted = body(start_totp(&app, &token, Some("password-123"), None).await).await;
    let secret_2 = restarted["secret"].as_str().unwrap().to_owned();
    assert_ne!(secret, secret_2);
    let confirm = |code: String| {
        app.request(
            Method::POST,
            "/members/me/totp/confirm",
            Some(&token),
            Some(json!({"code": code})),
        )
    };
    if code(&secret, 0) != code(&secret_2, 0) {
        let response = confirm(code(&secret, 0)).await;
        refused_field(response, 401, "invalid_credentials", "code", "code is incorrect").await;
    }
    let confirmed = confirm(code(&secret_2, 0)).await;
    assert_eq!(confirmed.status(), 200);
    assert_eq!(confirmed.headers()["cache-control"], "no-store");
    let codes: Vec<String> = body(confirmed).await["recovery_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(codes.len(), 10);
    assert_eq!(
        codes.iter().collect::<std::collections::HashSet<_>>().len(),
        10,
        "distinct"
    );
    let again = start_totp(&app, &token, Some("password-123"), None).await;
    assert_error(again, 403, "forbidden", "TOTP is on already").await;

    // Login: without a code, with a wrong one, with a right one, replayed.
    let response = login(&app, "choi", "password-123", None).await;
    refused_field(response, 401, "totp_required", "totp", "totp").await;
    let response = login(&app, "choi", "wrong-password", None).await;
    assert_error(response, 401, "invalid_credentials", "incorrect").await;
    let wrong = if code(&secret_2, 1) == "000000" {
        "111111"
    } else {
        "000000"
    };
    let response = login(&app, "choi", "password-123", Some(wrong)).await;
    assert_error(response, 401, "invalid_credentials", "incorrect").await;
    let next = code(&secret_2, 1);
    let session = body(login(&app, "choi", "password-123", Some(&next)).await).await;
    assert!(session["token"].is_string(), "{session}");
    let response = login(&app, "choi", "password-123", Some(&next)).await;
    assert_error(response, 401, "invalid_credentials", "incorrect").await;
    let response = login(&app, "choi", "password-123", Some(&code(&secret_2, 0))).await;
    assert_error(response, 401, "invalid_credentials", "incorrect").await;
    // The right code with a wrong password is a failed login too.
    let response = login(&app, "choi", "wrong-password", Some(&code(&secret_2, 1))).await;
    assert_error(response, 401, "invalid_credentials", "incorrect").await;

    // Recovery codes: each once, in any case and with or without the dash.
    assert_eq!(login(&app, "choi", "password-123", Some(&codes[0])).await.status(), 200);
    let response = login(&app, "choi", "password-123", Some(&codes[0])).await;
    assert_error(response, 401, "invalid_credentials", "incorrect").await;
    let shouted = codes[1].to_uppercase().replace('-', "");
    let session = body(login(&app, "choi", "password-123", Some(&shouted)).await).await;
    let token = session["token"].as_str().unwrap().to_owned();

    // Removal: password and code, each checked.
    let remove = |body: Value| app.request(Method::DELETE, "/members/me/totp", Some(&token), Some(body));
    let response = remove(json!({"password": "password-123"})).await;
    refused_field(response, 400, "validation_failed", "code", "code is required").await;
    let response = remove(json!({"password": "wrong-password", "code": codes[2]})).await;
    refused_field(response, 401, "invalid_credentials", "password", "incorrect").await;
    let response = remove(json!({"password": "password-123", "code": codes[1]})).await;
    refused_field(response, 401, "invalid_credentials", "code", "incorrect").await;
    assert_eq!(
        remove(json!({"password": "password-123", "code": codes[2]}))
            .await
            .status(),
        204
    );
    assert_eq!(login(&app, "choi", "password-123", None).await.status(), 200);
    // Removing again is no error; neither secret nor codes were ever logged.
    assert_eq!(remove(json!({"password": "password-123"})).await.status(), 204);
    let logs = crate::helpers::logs().text_since(app.logs_from);
    for secret in [secret.as_str(), secret_2.as_str()]
        .into_iter()
        .chain(codes.iter().map(String::as_str))
    {
        assert!(!logs.contains(secret), "a TOTP secret or recovery code was logged");
    }
}

pub(crate) async fn wrong_totp_codes_count_as_failed_logins(backend: Backend) {
    let app = spawn_app_with(backend, &[("LIMIT_LOGIN_USER_ADDRESS", "3/10m")]).await;
    assert_eq!(signup(&app, "yoon", "Yoon", "password-123").await.status(), 201);
    let token = token_of(login(&app, "yoon", "password-123", None).await).await;
    let (secret, _) = turn_on_totp(&app, &token, "password-123").await;
    let wrong = if code(&secret, 1) == "000000" {
        "111111"
    } else {
        "000000"
    };
    for _ in 0..3 {
        let response = login(&app, "yoon", "password-123", Some(wrong)).await;
        assert_error(response, 401, "invalid_credentials", "incorrect").await;
    }
    let hashes = app.hashes();
    let response = login(&app, "yoon", "password-123", Some(&code(&secret, 1))).await;
    assert_error(response, 429, "too_many_attempts", "retry").await;
    assert_eq!(app.hashes(), hashes, "refused before any hash");
    // A login without a code (the password right) is not a failure.
    let app = spawn_app_with(backend, &[("LIMIT_LOGIN_USER_ADDRESS", "2/10m")]).await;
    assert_eq!(signup(&app, "yoon", "Yoon", "password-123").await.status(), 201);
    let token = token_of(login(&app, "yoon", "password-123", None).await).await;
    let (secret, _) = turn_on_totp(&app, &token, "password-123").await;
    for _ in 0..4 {
        let response = login(&app, "yoon", "password-123", None).await;
        assert_error(response, 401, "totp_required", "totp").await;
    }
    assert_eq!(
        login(&app, "yoon", "password-123", Some(&code(&secret, 1)))
            .await
            .status(),
        200
    );
}

/// The audit guessed codes under the login limits alone (100 per username
/// in 15 minutes: 58% in 30 days). Now 10 wrong codes in a row, each from
/// another address (no address limit is near), stop the account's code
/// checks: even the right code is `429`; a recovery code before the tenth
/// resets the run.
pub(crate) async fn ten_wrong_codes_from_any_addresses_stop_code_checks_until_a_right_one_resets_them(
    backend: Backend,
) {
    let app = spawn_app_with(backend, &[("TRUSTED_PROXIES", "127.0.0.1/32")]).await;
    assert_eq!(signup(&app, "yoon", "Yoon", "password-123").await.status(), 201);
    let token = token_of(login(&app, "yoon", "password-123", None).await).await;
    let (secret, recovery) = turn_on_totp(&app, &token, "password-123").await;
    let right = || code(&secret, 0);
    let wrong = || {
        let near = [code(&secret, -1), code(&secret, 0), code(&secret, 1)];
        (0..10u32)
            .map(|d| format!("{d}{d}{d}{d}{d}{d}"))
            .find(|c| !near.contains(c))
            .unwrap()
    };
    let guess = |n: u32, totp: String| {
        let body = json!({"username": "yoon", "password": "password-123", "totp": totp});
        let app = &app;
        async move {
            app.request_from(&format!("203.0.113.{n}"), Method::POST, "/sessions", None, Some(body))
                .await
        }
    };
    for n in 0..9 {
        assert_error(guess(n, wrong()).await, 401, "invalid_credentials", "incorrect").await;
    }
    assert_eq!(
        guess(9, recovery[0].clone()).await.status(),
        200,
        "the run was 9: a recovery code resets it"
    );
    for n in 10..20 {
        assert_error(guess(n, wrong()).await, 401, "invalid_credentials", "incorrect").await;
    }
    let stopped = guess(20, right()).await;
    let retry: u64 = stopped.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry), "{retry}");
    assert_error(stopped, 429, "too_many_attempts", "retry").await;
    assert_error(guess(21, recovery[1].clone()).await, 429, "too_many_attempts", "retry").await;
}

pub(crate) async fn staff_routes_refuse_staff_without_totp(backend: Backend) {
    let app = spawn_app_with(backend, &[("STAFF_REQUIRE_TOTP", "true"), ("ADMIN_USERNAMES", "boss")]).await;
    let boss = app.member_token("boss").await;
    let member = app.member_token("jung").await;
    let app_ref = &app;
    let reports = |token: String| async move {
        app_ref
            .request(Method::GET, "/boards/free/reports", Some(&token), None)
            .await
    };
    assert_error(reports(member.clone()).await, 403, "forbidden", "staff").await;
    assert_error(reports(boss.clone()).await, 403, "totp_required", "TOTP").await;
    let board = app
        .request(
            Method::PUT,
            "/boards/photos",
            Some(&boss),
            Some(json!({"name": "사진"})),
        )
        .await;
    assert_error(board, 403, "totp_required", "TOTP").await;
    // A listed admin enrolls with the current password and the deployment's
    // Admin-Enroll-Token: the audit's phished password alone enrolled an
    // authenticator (200) and acted as admin.
    let no_password = start_totp(&app, &boss, None, Some(crate::helpers::ADMIN_ENROLL_TOKEN)).await;
    refused_field(no_password, 400, "validation_failed", "password", "password").await;
    let wrong = start_totp(
        &app,
        &boss,
        Some("password-124"),
        Some(crate::helpers::ADMIN_ENROLL_TOKEN),
    )
    .await;
    refused_field(wrong, 401, "invalid_credentials", "password", "password").await;
    let phished = start_totp(&app, &boss, Some("password-123"), None).await;
    assert_error(phished, 403, "forbidden", "Admin-Enroll-Token").await;
    let guessed = start_totp(&app, &boss, Some("password-123"), Some("not-the-enroll-token")).await;
    assert_error(guessed, 403, "forbidden", "Admin-Enroll-Token").await;
    // A waiting enrollment is not TOTP.
    let started = start_totp(
        &app,
        &boss,
        Some("password-123"),
        Some(crate::helpers::ADMIN_ENROLL_TOKEN),
    )
    .await;
    assert_eq!(started.status(), 200);
    let secret = body(started).await["secret"].as_str().unwrap().to_owned();
    assert_error(reports(boss.clone()).await, 403, "totp_required", "TOTP").await;
    let confirmed = app
        .request(
            Method::POST,
            "/members/me/totp/confirm",
            Some(&boss),
            Some(json!({"code": code(&secret, 0)})),
        )
        .await;
    assert_eq!(confirmed.status(), 200);
    let codes = body(confirmed).await["recovery_codes"].clone();
    assert_eq!(
        reports(boss.clone()).await.status(),
        200,
        "the same token, once TOTP is on"
    );
    assert_error(reports(member).await, 403, "forbidden", "staff").await;
    let removed = app
        .request(
            Method::DELETE,
            "/members/me/totp",
            Some(&boss),
            Some(json!({"password": "password-123", "code": codes[0]})),
        )
        .await;
    assert_eq!(removed.status(), 204);
    assert_error(reports(boss).await, 403, "totp_required", "TOTP").await;
}

/// A moderator is appointed only with TOTP on, so a moderator's password
/// alone never acts as staff; a member who is not a listed admin enrolls
/// with the password only.
pub(crate) async fn a_moderator_is_appointed_only_with_totp_on(backend: Backend) {
    let app = spawn_app_with(backend, &[("STAFF_REQUIRE_TOTP", "true"), ("ADMIN_USERNAMES", "boss")]).await;
    let boss = app.member_token("boss").await;
    let enrolled = start_totp(
        &app,
        &boss,
        Some("password-123"),
        Some(crate::helpers::ADMIN_ENROLL_TOKEN),
    )
    .await;
    let secret = body(enrolled).await["secret"].as_str().unwrap().to_owned();
    let confirm = json!({"code": code(&secret, 0)});
    let confirmed = app
        .request(Method::POST, "/members/me/totp/confirm", Some(&boss), Some(confirm))
        .await;
    assert_eq!(confirmed.status(), 200);
    let mod_token = app.member_token("mod").await;
    let me = body(app.request(Method::GET, "/members/me", Some(&mod_token), None).await).await;
    let path = format!("/boards/free/moderators/{}", me["id"].as_str().unwrap());
    let appointed = app.request(Method::PUT, &path, Some(&boss), None).await;
    assert_error(appointed, 409, "totp_required", "TOTP").await;
    let log = body(app.get("/boards/free/modlog").await).await;
    assert_eq!(
        log["entries"].as_array().map(Vec::len),
        Some(0),
        "nothing appointed: {log}"
    );
    turn_on_totp(&app, &mod_token, "password-123").await;
    assert_eq!(app.request(Method::PUT, &path, Some(&boss), None).await.status(), 204);
    let reports = app
        .request(Method::GET, "/boards/free/reports", Some(&mod_token), None)
        .await;
    assert_eq!(reports.status(), 200, "the moderator acts as staff with TOTP on");
}

on_both_stores!(
    common_and_personal_passwords_are_refused_naming_the_field_before_any_hash,
    the_nist_policy_asks_fifteen_characters_of_a_password_alone,
    totp_is_enrolled_confirmed_required_at_login_and_removed,
    wrong_totp_codes_count_as_failed_logins,
    ten_wrong_codes_from_any_addresses_stop_code_checks_until_a_right_one_resets_them,
    staff_routes_refuse_staff_without_totp,
    a_moderator_is_appointed_only_with_totp_on,
);
