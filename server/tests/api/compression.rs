//! Compression (docs/API.md, Conventions v4): JSON answers of 1 KiB or more
//! come gzip- or br-encoded when the request's `Accept-Encoding` allows it,
//! and the web client's files carry a strong `ETag`, answer `304` to a
//! matching `If-None-Match`, and come compressed too.

use std::io::Read as _;

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::helpers::{Backend, TestApp, spawn_app};

on_both_stores!(
    json_answers_of_a_kibibyte_or_more_come_in_the_encoding_the_request_prefers,
    small_answers_and_errors_are_never_compressed_and_keep_their_headers,
    the_web_clients_files_have_strong_etags_answer_304_and_come_compressed,
);

/// At least 1 KiB: the threshold of docs/API.md.
const THRESHOLD: usize = 1024;

/// The body as sent, decoded by its `Content-Encoding` (none: as it is).
fn decoded(headers: &HeaderMap, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match headers.get("content-encoding").map(|v| v.to_str().unwrap()) {
        None => out.extend_from_slice(bytes),
        Some("gzip") => {
            flate2::read::GzDecoder::new(bytes).read_to_end(&mut out).unwrap();
        }
        Some("br") => {
            brotli::Decompressor::new(bytes, 4096).read_to_end(&mut out).unwrap();
        }
        Some(other) => panic!("an encoding nobody asked for: {other}"),
    }
    out
}

/// `GET path` with these request headers: status, headers, body as sent.
async fn fetch(app: &TestApp, method: Method, path: &str, headers: &[(&str, &str)]) -> (u16, HeaderMap, Vec<u8>) {
    let mut request = app.client.request(method, format!("{}{path}", app.address));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request failed");
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.bytes().await.unwrap().to_vec())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().unwrap())
}

/// A member's posts on `free` until its first page is over 1 KiB, and one
/// post with comments over it; returns the post's id.
async fn seed(app: &TestApp) -> String {
    let token = app.member_token("compressed").await;
    let mut post = String::new();
    for i in 0..6 {
        let body = json!({"title": format!("Post number {i} about compression"), "body": "words ".repeat(50)});
        let response = app
            .request(Method::POST, "/boards/free/posts", Some(&token), Some(body))
            .await;
        assert_eq!(response.status(), 201);
        post = response.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
    }
    for i in 0..6 {
        let body = json!({"body": format!("comment {i}: {}", "more words ".repeat(20))});
        let path = format!("/boards/free/posts/{post}/comments");
        let response = app.request(Method::POST, &path, Some(&token), Some(body)).await;
        assert_eq!(response.status(), 201);
    }
    post
}

async fn json_answers_of_a_kibibyte_or_more_come_in_the_encoding_the_request_prefers(backend: Backend) {
    let app = spawn_app(backend).await;
    let post = seed(&app).await;
    let page = "/boards/free/posts";
    let (status, headers, plain) = fetch(&app, Method::GET, page, &[]).await;
    assert_eq!(status, 200);
    assert!(plain.len() >= THRESHOLD, "the page is {} bytes", plain.len());
    // No Accept-Encoding: identity, but caches are told the answer varies.
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
    let plain: Value = serde_json::from_slice(&plain).unwrap();
    assert_eq!(plain["posts"].as_array().unwrap().len(), 6);

    for (accepted, chosen) in [
        ("gzip", Some("gzip")),
        ("br", Some("br")),
        // A tie goes to gzip, the cheaper (a browser's header).
        ("gzip, deflate, br, zstd", Some("gzip")),
        ("br, gzip;q=0.5", Some("br")),
        ("br;q=0.5, gzip", Some("gzip")),
        ("gzip;q=0, br;q=0", None),
        ("identity", None),
        ("deflate", None),
    ] {
        let (status, headers, sent) = fetch(&app, Method::GET, page, &[("accept-encoding", accepted)]).await;
        assert_eq!(status, 200, "{accepted}");
        assert_eq!(header(&headers, "content-encoding"), chosen, "{accepted}");
        assert_eq!(header(&headers, "vary"), Some("accept-encoding"), "{accepted}");
        assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
        assert!(header(&headers, "x-request-id").is_some());
        assert_eq!(header(&headers, "content-type"), Some("application/json"));
        if chosen.is_some() {
            assert!(sent.len() < THRESHOLD, "{accepted}: {} bytes sent", sent.len());
        }
        let json: Value = serde_json::from_slice(&decoded(&headers, &sent)).unwrap();
        assert_eq!(json, plain, "{accepted}");
    }

    // A post detail keeps its ETag (its version, for If-Match) in every
    // encoding; its comments compress as a page does.
    let detail = format!("/boards/free/posts/{post}");
    let (_, plain_headers, _) = fetch(&app, Method::GET, &detail, &[]).await;
    let (status, headers, _) = fetch(&app, Method::GET, &detail, &[("accept-encoding", "gzip")]).await;
    assert_eq!(status, 200);
    assert!(header(&headers, "etag").is_some());
    assert_eq!(header(&headers, "etag"), header(&plain_headers, "etag"));
    let comments = format!("/boards/free/posts/{post}/comments");
    let (_, _, plain_comments) = fetch(&app, Method::GET, &comments, &[]).await;
    assert!(plain_comments.len() >= THRESHOLD, "{} bytes", plain_comments.len());
    let (status, headers, sent_comments) = fetch(&app, Method::GET, &comments, &[("accept-encoding", "br")]).await;
    assert_eq!((status, header(&headers, "content-encoding")), (200, Some("br")));
    assert_eq!(decoded(&headers, &sent_comments), plain_comments);

    // HEAD: the same head as GET, no body.
    let (status, headers, sent) = fetch(&app, Method::HEAD, page, &[("accept-encoding", "gzip")]).await;
    assert_eq!((status, sent.len()), (200, 0));
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
}

async fn small_answers_and_errors_are_never_compressed_and_keep_their_headers(backend: Backend) {
    let app = spawn_app(backend).await;
    let everything = [("accept-encoding", "gzip, br")];
    let (status, headers, sent) = fetch(&app, Method::GET, "/health", &everything).await;
    assert_eq!(status, 200);
    assert!(sent.len() < THRESHOLD);
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(serde_json::from_slice::<Value>(&sent).unwrap(), json!({"status": "ok"}));

    let (status, headers, sent) = fetch(
        &app,
        Method::GET,
        "/boards/free/posts/01JD3Z8Q6W4G7T2N5B8K1M0XYZ",
        &everything,
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
    assert_eq!(
        serde_json::from_slice::<Value>(&sent).unwrap()["error"]["code"],
        "not_found"
    );

    // A 429 keeps its Retry-After and rate-limit headers.
    let wrong = json!({"username": "nobody_here", "password": "wrong-password"});
    let mut last = None;
    for _ in 0..6 {
        let response = app
            .client
            .post(format!("{}/sessions", app.address))
            .header("accept-encoding", "gzip, br")
            .json(&wrong)
            .send()
            .await
            .unwrap();
        last = Some((response.status().as_u16(), response.headers().clone()));
    }
    let (status, headers) = last.unwrap();
    assert_eq!(status, 429);
    assert!(header(&headers, "retry-after").is_some());
    assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
    assert_eq!(header(&headers, "content-encoding"), None);
}

async fn the_web_clients_files_have_strong_etags_answer_304_and_come_compressed(backend: Backend) {
    let app = spawn_app(backend).await;
    for path in [
        "/",
        "/assets/app.js",
        "/assets/api.js",
        "/assets/dom.js",
        "/assets/config.js",
        "/assets/style.css",
    ] {
        let (status, headers, plain) = fetch(&app, Method::GET, path, &[]).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(header(&headers, "content-encoding"), None, "{path}");
        assert_eq!(header(&headers, "vary"), Some("accept-encoding"), "{path}");
        assert_eq!(header(&headers, "cache-control"), Some("no-cache"), "{path}");
        let etag = header(&headers, "etag").unwrap().to_owned();
        assert!(
            etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
            "a strong tag: {etag}"
        );

        // The same tag, in any of the forms If-None-Match allows: 304, no body.
        for condition in [
            etag.clone(),
            format!("W/{etag}"),
            format!("\"another\", {etag}"),
            "*".to_owned(),
        ] {
            let (status, headers, sent) = fetch(&app, Method::GET, path, &[("if-none-match", &condition)]).await;
            assert_eq!((status, sent.len()), (304, 0), "{path} {condition}");
            assert_eq!(header(&headers, "etag"), Some(etag.as_str()));
            assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
            assert_eq!(header(&headers, "cache-control"), Some("no-cache"));
            assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
            assert!(header(&headers, "content-security-policy").is_some());
        }
        // Another tag: the file.
        let (status, _, sent) = fetch(&app, Method::GET, path, &[("if-none-match", "\"another\"")]).await;
        assert_eq!((status, &sent), (200, &plain), "{path}");

        // Compressed forms: their own tags, the same file once decoded.
        let mut tags = vec![etag.clone()];
        for coding in ["gzip", "br"] {
            let (status, headers, sent) = fetch(&app, Method::GET, path, &[("accept-encoding", coding)]).await;
            assert_eq!(
                (status, header(&headers, "content-encoding")),
                (200, Some(coding)),
                "{path}"
            );
            assert!(
                sent.len() < plain.len(),
                "{path} {coding}: {} of {}",
                sent.len(),
                plain.len()
            );
            assert_eq!(decoded(&headers, &sent), plain, "{path} {coding}");
            let tag = header(&headers, "etag").unwrap().to_owned();
            assert!(!tags.contains(&tag), "{path} {coding}: {tag} is another form's");
            let (status, _, _) = fetch(
                &app,
                Method::GET,
                path,
                &[("accept-encoding", coding), ("if-none-match", &tag)],
            )
            .await;
            assert_eq!(status, 304, "{path} {coding}");
            // The identity form's tag does not validate a compressed form.
            let (status, _, _) = fetch(
                &app,
                Method::GET,
                path,
                &[("accept-encoding", coding), ("if-none-match", &etag)],
            )
            .await;
            assert_eq!(status, 200, "{path} {coding}");
            tags.push(tag);
        }
    }
    let (status, headers, sent) = fetch(&app, Method::HEAD, "/assets/app.js", &[("accept-encoding", "br")]).await;
    assert_eq!((status, sent.len()), (200, 0));
    assert_eq!(header(&headers, "content-encoding"), Some("br"));
}
