//! Images over real HTTP on both stores, files on disk (docs/API.md, Images
//!): a grant, the upload to the server's own URL, the check off the
//! request (ready with width, height and thumbnail; EXIF and GPS gone; a
//! non-image, a lying type and a decoding bomb rejected), serving headers,
//! the attachment rules, files gone after every kind of delete, and the
//! grant's limits, bans and guest rules.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use test_support::images;

use crate::helpers::{Backend, TestApp, assert_error, body, spawn_app_with};

on_both_stores!(
    an_image_is_granted_uploaded_checked_served_and_attached,
    what_is_not_the_image_it_claims_or_breaks_a_limit_is_refused,
    images_attach_only_where_the_rules_allow,
    files_go_with_what_they_belong_to,
    grants_keep_their_limits_bans_and_guest_rules,
);

/// How long a check may take here (a debug build, a small image).
const WITHIN: Duration = Duration::from_secs(20);

async fn spawn(backend: Backend, extra: &[(&str, &str)]) -> TestApp {
    let mut settings = vec![("ADMIN_USERNAMES", "boss")];
    settings.extend_from_slice(extra);
    spawn_app_with(backend, &settings).await
}

/// A grant for `bytes` of `content_type` on `board`; the answer as is.
async fn grant_on(
    app: &TestApp,
    board: &str,
    token: Option<&str>,
    content_type: &str,
    bytes: usize,
) -> reqwest::Response {
    let body = json!({"content_type": content_type, "bytes": bytes});
    app.request(Method::POST, &format!("/boards/{board}/media"), token, Some(body))
        .await
}

/// Sends `file` where the grant says; the upload URL's status.
async fn upload(app: &TestApp, grant: &Value, file: Vec<u8>) -> u16 {
    let upload = &grant["upload"];
    assert_eq!(upload["method"], "PUT", "{grant}");
    let mut request = app
        .client
        .put(format!("{}{}", app.address, upload["url"].as_str().unwrap()));
    for (name, value) in upload["headers"].as_object().unwrap() {
        request = request.header(name.as_str(), value.as_str().unwrap());
    }
    request.body(file).send().await.unwrap().status().as_u16()
}

/// Waits until the upload's check ends; its state.
async fn checked(app: &TestApp, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let response = app.get(&format!("/media/{id}")).await;
        assert_eq!(response.status(), 200);
        let media = body(response).await;
        if media["status"] != "pending" {
            return media;
        }
        assert!(started.elapsed() < WITHIN, "still pending: {media}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Granted, uploaded and checked: the upload's state.
async fn uploaded(app: &TestApp, board: &str, token: Option<&str>, content_type: &str, file: Vec<u8>) -> Value {
    let response = grant_on(app, board, token, content_type, file.len()).await;
    assert_eq!(response.status(), 201);
    let grant = body(response).await;
    assert_eq!(upload(app, &grant, file).await, 204);
    checked(app, grant["id"].as_str().unwrap()).await
}

async fn ready_image(app: &TestApp, token: Option<&str>) -> String {
    let media = uploaded(app, "free", token, "image/png", images::png(40, 30)).await;
    assert_eq!(media["status"], "ready", "{media}");
    media["id"].as_str().unwrap().to_owned()
}

async fn file_status(app: &TestApp, url: &str) -> u16 {
    app.client
        .get(format!("{}{url}", app.address))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Waits until the file at `url` is gone (the sweep runs off the request).
async fn gone(app: &TestApp, url: &str) {
    let started = Instant::now();
    while file_status(app, url).await != 404 {
        assert!(started.elapsed() < WITHIN, "{url} is still served");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn post_with(app: &TestApp, token: &str, media: &[&str]) -> reqwest::Response {
    let body = json!({"title": "사진", "body": "짤", "media": media});
    app.request(Method::POST, "/boards/free/posts", Some(token), Some(body))
        .await
}

async fn comment_with(app: &TestApp, token: &str, post: &str, media: &[&str]) -> reqwest::Response {
    let body = json!({"body": "짤 댓글", "media": media});
    let path = format!("/boards/free/posts/{post}/comments");
    app.request(Method::POST, &path, Some(token), Some(body)).await
}

async fn an_image_is_granted_uploaded_checked_served_and_attached(backend: Backend) {
    let app = spawn(backend, &[]).await;
    let kim = app.member_token("kim").await;
    // A phone photo: 64 x 48 stored, orientation 6, a GPS position.
    let photo = images::jpeg_with_gps(64, 48);
    assert!(images::carries_exif_or_gps(&photo));
    let response = grant_on(&app, "free", Some(&kim), "image/jpeg", photo.len()).await;
    assert_eq!(response.status(), 201);
    let grant = body(response).await;
    let id = grant["id"].as_str().unwrap().to_owned();
    assert!(grant["expires_at"].is_string(), "{grant}");
    let pending = body(app.get(&format!("/media/{id}")).await).await;
    assert_eq!(pending["status"], "pending");
    assert_eq!(pending["url"], Value::Null);
    assert_eq!(upload(&app, &grant, photo).await, 204);
    let media = checked(&app, &id).await;
    assert_eq!(media["status"], "ready", "{media}");
    // Turned upright as the EXIF said, then re-encoded without it.
    assert_eq!(
        (media["width"].as_u64(), media["height"].as_u64()),
        (Some(48), Some(64))
    );
    assert_eq!(media["content_type"], "image/jpeg");
    let url = media["url"].as_str().unwrap();
    let thumbnail_url = media["thumbnail_url"].as_str().unwrap();
    assert!(
        url.starts_with("/media/files/") && thumbnail_url.starts_with("/media/files/"),
        "{media}"
    );

    let served = app.client.get(format!("{}{url}", app.address)).send().await.unwrap();
    assert_eq!(served.status(), 200);
    let headers = served.headers().clone();
    assert_eq!(headers["content-type"], "image/jpeg");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["content-security-policy"], "sandbox");
    assert!(headers["cache-control"].to_str().unwrap().contains("immutable"));
    let bytes = served.bytes().await.unwrap();
    assert_eq!(bytes.len() as u64, media["bytes"].as_u64().unwrap());
    assert!(!images::carries_exif_or_gps(&bytes), "EXIF or GPS survived the check");
    assert_eq!(file_status(&app, thumbnail_url).await, 200);

    let response = post_with(&app, &kim, &[&id]).await;
    assert_eq!(response.status(), 201);
    let post = body(response).await;
    assert_eq!(post["media"][0]["id"], id.as_str());
    assert_eq!(post["media"][0]["url"], url);
    assert_eq!(post["media"][0]["width"], 48);
    assert_eq!(post["media_count"], 1);
    let post_id = post["id"].as_str().unwrap();
    let read = body(app.get(&format!("/boards/free/posts/{post_id}")).await).await;
    assert_eq!(read["media"], post["media"]);
    let page = body(app.get("/boards/free/posts").await).await;
    assert_eq!(page["posts"][0]["media_count"], 1);
    // One comment image, shown on the comment.
    let second = ready_image(&app, Some(&kim)).await;
    let response = comment_with(&app, &kim, post_id, &[&second]).await;
    assert_eq!(response.status(), 201);
    assert_eq!(body(response).await["media"][0]["id"], second.as_str());
}

async fn what_is_not_the_image_it_claims_or_breaks_a_limit_is_refused(backend: Backend) {
    let app = spawn(backend, &[("MEDIA_MAX_BYTES", "200000")]).await;
    let kim = app.member_token("kim").await;
    let page = b"<html><script>alert(1)</script></html>".to_vec();
    let html = uploaded(&app, "free", Some(&kim), "image/png", page).await;
    assert_eq!(html["status"], "rejected");
    assert!(html["reason"].as_str().is_some_and(|r| !r.is_empty()), "{html}");
    assert_eq!(html["url"], Value::Null);
    let lying = uploaded(&app, "free", Some(&kim), "image/jpeg", images::png(20, 20)).await;
    assert_eq!(lying["status"], "rejected", "{lying}");
    // A header claiming 100,000 x 100,000 pixels: refused from the header.
    let bomb = uploaded(
        &app,
        "free",
        Some(&kim),
        "image/png",
        images::png_claiming(100_000, 100_000),
    )
    .await;
    assert_eq!(bomb["status"], "rejected", "{bomb}");
    // Over MEDIA_MAX_BYTES: no grant, naming the field.
    assert_error(
        grant_on(&app, "free", Some(&kim), "image/png", 200_001).await,
        400,
        "validation_failed",
        "bytes",
    )
    .await;
    assert_error(
        grant_on(&app, "free", Some(&kim), "image/svg+xml", 10).await,
        400,
        "validation_failed",
        "content_type",
    )
    .await;
    // More than granted (413), another type, or a forged grant (403): refused at the upload URL.
    let grant = body(grant_on(&app, "free", Some(&kim), "image/png", 10).await).await;
    assert_eq!(upload(&app, &grant, images::png(20, 20)).await, 413);
    let file = images::png(20, 20);
    let grant = body(grant_on(&app, "free", Some(&kim), "image/png", file.len()).await).await;
    let mut forged = grant.clone();
    let url = grant["upload"]["url"].as_str().unwrap();
    forged["upload"]["url"] = json!(format!("{}x", &url[..url.len() - 1]));
    assert_eq!(upload(&app, &forged, file.clone()).await, 403);
    let mut retyped = grant.clone();
    retyped["upload"]["headers"]["Content-Type"] = json!("image/gif");
    assert_eq!(upload(&app, &retyped, file.clone()).await, 403);
    assert_eq!(upload(&app, &grant, file).await, 204);
    assert_error(app.get("/media/not-an-id").await, 404, "not_found", "media").await;
}

async fn images_attach_only_where_the_rules_allow(backend: Backend) {
    let app = spawn(backend, &[("BOARDS", "free,photo")]).await;
    let kim = app.member_token("kim").await;
    let lee = app.member_token("lee").await;
    let leesi = ready_image(&app, Some(&lee)).await;
    assert_error(
        post_with(&app, &kim, &[&leesi]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    // Granted on another board.
    let elsewhere = uploaded(&app, "photo", Some(&kim), "image/png", images::png(8, 8)).await;
    let elsewhere = elsewhere["id"].as_str().unwrap();
    assert_error(
        post_with(&app, &kim, &[elsewhere]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    // Still pending (never uploaded).
    let pending = body(grant_on(&app, "free", Some(&kim), "image/png", 100).await).await;
    let pending = pending["id"].as_str().unwrap();
    assert_error(
        post_with(&app, &kim, &[pending]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    // Rejected.
    let rejected = uploaded(&app, "free", Some(&kim), "image/png", b"not a png".to_vec()).await;
    let rejected = rejected["id"].as_str().unwrap();
    assert_error(
        post_with(&app, &kim, &[rejected]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    // Unknown, repeated, too many; a comment takes one.
    let unknown = shared::domain::new_id();
    assert_error(
        post_with(&app, &kim, &[&unknown]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    let mine = ready_image(&app, Some(&kim)).await;
    assert_error(
        post_with(&app, &kim, &[&mine, &mine]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    let many: Vec<String> = (0..21).map(|_| shared::domain::new_id()).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_error(post_with(&app, &kim, &many).await, 400, "validation_failed", "media").await;
    // Once attached, never again elsewhere; nothing half-written on a refusal.
    let first = body(post_with(&app, &kim, &[&mine]).await).await;
    let first_id = first["id"].as_str().unwrap().to_owned();
    let other = ready_image(&app, Some(&kim)).await;
    assert_error(
        post_with(&app, &kim, &[&other, &mine]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    let response = post_with(&app, &kim, &[&other]).await;
    assert_eq!(response.status(), 201, "the refused post left `other` attachable");
    let (a, b) = (ready_image(&app, Some(&kim)).await, ready_image(&app, Some(&kim)).await);
    assert_error(
        comment_with(&app, &kim, &first_id, &[&a, &b]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    assert_error(
        comment_with(&app, &kim, &first_id, &[&mine]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    assert_eq!(comment_with(&app, &kim, &first_id, &[&a]).await.status(), 201);
    // An edit keeps what it lists, adds new ones and drops the rest.
    let edit = json!({"title": "사진", "body": "짤", "media": [b, mine]});
    let path = format!("/boards/free/posts/{first_id}");
    let response = app.request(Method::PUT, &path, Some(&kim), Some(edit)).await;
    assert_eq!(response.status(), 200);
    let edited = body(response).await;
    let ids: Vec<&str> = edited["media"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [b.as_str(), mine.as_str()]);
    assert_eq!(edited["media_count"], 2);
    let keep = json!({"title": "제목만", "body": "짤"});
    let kept = body(app.request(Method::PUT, &path, Some(&kim), Some(keep)).await).await;
    assert_eq!(kept["media_count"], 2, "an edit without media keeps them");
    // A guest attaches what was granted to the same address, anonymously.
    let guests = ready_image(&app, None).await;
    assert_error(
        post_with(&app, &kim, &[&guests]).await,
        400,
        "validation_failed",
        "media",
    )
    .await;
    let guest_post =
        json!({"nickname": "ㅇㅇ", "password": "guest-pass-1", "title": "t", "body": "b", "media": [guests]});
    let response = app.post("/boards/free/posts/guest", guest_post).await;
    assert_eq!(response.status(), 201);
    assert_eq!(body(response).await["media_count"], 1);
}

async fn files_go_with_what_they_belong_to(backend: Backend) {
    let app = spawn(backend, &[]).await;
    let kim = app.member_token("kim").await;
    let boss = app.member_token("boss").await;
    let url_of = |media: &Value| media["url"].as_str().unwrap().to_owned();
    let image = async |token: &str| -> (String, String, String) {
        let media = uploaded(&app, "free", Some(token), "image/png", images::png(16, 16)).await;
        assert_eq!(media["status"], "ready");
        (
            media["id"].as_str().unwrap().to_owned(),
            url_of(&media),
            media["thumbnail_url"].as_str().unwrap().to_owned(),
        )
    };
    // A post's delete takes its images and its comments' with it.
    let (in_post, post_file, post_thumb) = image(&kim).await;
    let post = body(post_with(&app, &kim, &[&in_post]).await).await;
    let post_id = post["id"].as_str().unwrap().to_owned();
    let (in_comment, comment_file, _) = image(&kim).await;
    assert_eq!(comment_with(&app, &kim, &post_id, &[&in_comment]).await.status(), 201);
    let response = app
        .request(
            Method::DELETE,
            &format!("/boards/free/posts/{post_id}"),
            Some(&kim),
            None,
        )
        .await;
    assert_eq!(response.status(), 204);
    for url in [&post_file, &post_thumb, &comment_file] {
        gone(&app, url).await;
    }
    // The sweep deletes the files first, then the records.
    let started = Instant::now();
    while app.get(&format!("/media/{in_post}")).await.status() != 404 {
        assert!(started.elapsed() < WITHIN, "{in_post}'s record outlives its files");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_error(app.get(&format!("/media/{in_post}")).await, 404, "not_found", "media").await;
    // A comment's own delete.
    let post = body(post_with(&app, &kim, &[]).await).await;
    let post_id = post["id"].as_str().unwrap().to_owned();
    let (id, file, _) = image(&kim).await;
    let comment = body(comment_with(&app, &kim, &post_id, &[&id]).await).await;
    let path = format!(
        "/boards/free/posts/{post_id}/comments/{}",
        comment["id"].as_str().unwrap()
    );
    assert_eq!(app.request(Method::DELETE, &path, Some(&kim), None).await.status(), 204);
    gone(&app, &file).await;
    // A moderator's removal.
    let (id, file, _) = image(&kim).await;
    let post = body(post_with(&app, &kim, &[&id]).await).await;
    let path = format!("/boards/free/posts/{}/remove", post["id"].as_str().unwrap());
    let response = app
        .request(Method::POST, &path, Some(&boss), Some(json!({"reason": "스팸"})))
        .await;
    assert_eq!(response.status(), 204, "{:?}", body(response).await);
    gone(&app, &file).await;
    // An edit that drops an image.
    let (kept, kept_file, _) = image(&kim).await;
    let (dropped, dropped_file, _) = image(&kim).await;
    let post = body(post_with(&app, &kim, &[&kept, &dropped]).await).await;
    let path = format!("/boards/free/posts/{}", post["id"].as_str().unwrap());
    let edit = json!({"title": "t", "body": "b", "media": [kept]});
    assert_eq!(
        app.request(Method::PUT, &path, Some(&kim), Some(edit)).await.status(),
        200
    );
    gone(&app, &dropped_file).await;
    assert_eq!(file_status(&app, &kept_file).await, 200);
    // An account deleted with its content.
    let lee = app.member_token("lee").await;
    let (id, file, _) = image(&lee).await;
    assert_eq!(post_with(&app, &lee, &[&id]).await.status(), 201);
    let delete = json!({"password": "password-123", "delete_content": true});
    let response = app
        .request(Method::DELETE, "/members/me", Some(&lee), Some(delete))
        .await;
    assert_eq!(response.status(), 204);
    gone(&app, &file).await;
    // An account deleted without its content: what it never attached goes
    // at once (the audit found it served 200 afterwards); another's stays.
    let park = app.member_token("park").await;
    let (_, unattached_file, unattached_thumb) = image(&park).await;
    let (kept, kept_by_other, _) = image(&kim).await;
    let delete = json!({"password": "password-123", "delete_content": false});
    let response = app
        .request(Method::DELETE, "/members/me", Some(&park), Some(delete))
        .await;
    assert_eq!(response.status(), 204);
    gone(&app, &unattached_file).await;
    gone(&app, &unattached_thumb).await;
    assert_eq!(file_status(&app, &kept_by_other).await, 200);
    assert_eq!(body(app.get(&format!("/media/{kept}")).await).await["status"], "ready");
    // A grant never attached stays until it is due (24 hours).
    let (never, never_file, _) = image(&kim).await;
    app.state.app.sweep_media().await.unwrap();
    assert_eq!(file_status(&app, &never_file).await, 200);
    assert_eq!(body(app.get(&format!("/media/{never}")).await).await["status"], "ready");
}

async fn grants_keep_their_limits_bans_and_guest_rules(backend: Backend) {
    let app = spawn(
        backend,
        &[("LIMIT_UPLOADS_ADDRESS", "2/10m"), ("BOARDS", "free,closed")],
    )
    .await;
    let kim = app.member_token("kim").await;
    for _ in 0..2 {
        let response = grant_on(&app, "free", Some(&kim), "image/png", 10).await;
        assert_eq!(response.status(), 201);
        assert!(
            response.headers()["ratelimit-policy"]
                .to_str()
                .unwrap()
                .contains("\"uploads\";q=2;w=600")
        );
        assert!(response.headers()["location"].to_str().unwrap().starts_with("/media/"));
    }
    let refused = grant_on(&app, "free", Some(&kim), "image/png", 10).await;
    assert_error(refused, 429, "rate_limited", "").await;

    let app = spawn(backend, &[("BOARDS", "free,closed")]).await;
    let boss = app.member_token("boss").await;
    let closed = json!({"name": "closed", "guest_writes": false});
    let response = app
        .request(Method::PUT, "/boards/closed", Some(&boss), Some(closed))
        .await;
    assert!(response.status().is_success(), "{:?}", body(response).await);
    assert_error(
        grant_on(&app, "closed", None, "image/png", 10).await,
        403,
        "forbidden",
        "guests",
    )
    .await;
    assert_eq!(grant_on(&app, "free", None, "image/png", 10).await.status(), 201);
    assert_error(
        grant_on(&app, "nowhere", None, "image/png", 10).await,
        404,
        "not_found",
        "",
    )
    .await;
    // A ban through a post of this address stops its grants.
    let kim = app.member_token("kim").await;
    let post = body(post_with(&app, &kim, &[]).await).await;
    let ban = json!({"post_id": post["id"], "reason": "도배", "scope": "address"});
    let response = app
        .request(Method::POST, "/boards/free/bans", Some(&boss), Some(ban))
        .await;
    assert_eq!(response.status(), 201, "{:?}", body(response).await);
    assert_error(grant_on(&app, "free", None, "image/png", 10).await, 403, "banned", "").await;

    // An anonymous grant is an anonymous write: with proof of work always
    // on, it needs a solution (members' grants never do: the tests above).
    let app = spawn(backend, &[("POW", "always")]).await;
    let response = grant_on(&app, "free", None, "image/png", 10).await;
    assert_eq!(response.status(), 428);
    assert!(body(response).await["challenge"]["challenge"].is_string());
}
