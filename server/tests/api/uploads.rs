//! The third audit's image path (docs/security.md, Uploads and downloads):
//! the grant is settled before any byte of an upload's body is read, the
//! body streams to disk and stops at the granted size, a stored file is
//! never larger than `MEDIA_MAX_BYTES`, and a download streams. Memory is
//! read from the server binary in a process of its own (the test process's
//! RSS is every test's), and printed.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::helpers::{Backend, TestApp, body, spawn_app_with};
use crate::process::ServerProcess;

on_both_stores!(
    an_upload_over_its_grant_is_refused_from_its_head_or_cut_at_the_granted_size,
    a_pending_upload_sent_again_ends_ready_once,
    the_audits_tiled_webp_is_stored_no_larger_than_it_came,
);

/// The audit's file: a 7000 x 7000 lossless WebP tiled from one 64 x 64
/// tile, 33,608 bytes (re-encoded by the only lossless encoder here: 146 MB).
const TILED_7000: &[u8] = include_bytes!("../../../imaging/tests/fixtures/tiled-7000x7000.webp");

const MIB: u64 = 1024 * 1024;
const TWENTY_MIB: u64 = 20 * MIB;

/// A well-formed id no grant names.
const UNGRANTED: &str = "01HZY8K6F3V6Y0X5M7Q2R9T4AB";

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The highest RSS of `pid` while `work` runs, sampled every 20 ms.
async fn peak_rss_during<T>(pid: u32, work: impl std::future::Future<Output = T>) -> (T, u64) {
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let sampler = tokio::spawn(async move {
        let mut peak = rss_kib(pid);
        loop {
            tokio::select! {
                _ = &mut stopped => return peak,
                () = tokio::time::sleep(Duration::from_millis(20)) => peak = peak.max(rss_kib(pid)),
            }
        }
    });
    let done = work.await;
    let _ = stop.send(());
    (done, sampler.await.unwrap())
}

/// The status line's code of the first answer on `stream`, if one comes
/// within `wait`.
async fn answer_within(stream: &mut TcpStream, wait: Duration) -> Option<u16> {
    let mut received = Vec::new();
    let mut buffer = [0u8; 1024];
    let deadline = Instant::now() + wait;
    while !received.windows(2).any(|w| w == b"\r\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Ok(Ok(n)) if n > 0 => received.extend_from_slice(&buffer[..n]),
            _ => return None,
        }
    }
    String::from_utf8_lossy(&received).split(' ').nth(1)?.parse().ok()
}

fn upload_head(path_and_query: &str, content_type: &str, length: Option<u64>, extra: &str) -> Vec<u8> {
    let length = length.map_or_else(
        || "Transfer-Encoding: chunked\r\n".to_owned(),
        |n| format!("Content-Length: {n}\r\n"),
    );
    format!("PUT {path_and_query} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n{length}{extra}\r\n")
        .into_bytes()
}

/// One connection of the audit: a 20 MiB upload with no grant. The answer
/// is read before a byte of the body is sent; then the body is sent
/// anyway, as a client that does not wait would (the server has closed).
async fn ungranted_upload(host: String) -> Option<u16> {
    let mut stream = TcpStream::connect(&host).await.unwrap();
    let path = format!("/media/uploads/{UNGRANTED}?grant=9999999999.AAAA");
    stream
        .write_all(&upload_head(&path, "image/png", Some(TWENTY_MIB), ""))
        .await
        .unwrap();
    let status = answer_within(&mut stream, Duration::from_secs(10)).await;
    let chunk = vec![0u8; 256 * 1024];
    let sending = async {
        for _ in 0..(TWENTY_MIB / chunk.len() as u64) {
            if stream.write_all(&chunk).await.is_err() {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(20), sending).await;
    status
}

async fn health(host: String) {
    let mut stream = TcpStream::connect(&host).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(answer_within(&mut stream, Duration::from_secs(10)).await, Some(200));
}

/// The audit sent 20 MiB bodies without a grant on 2 x 64 connections and
/// the server held 3.4 GiB; 4 x 64 under a 6 GiB cap aborted it. Now each
/// is answered `403` from its head, before the body, and the 128 together
/// grow the server's memory by a few MiB at most.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_without_a_grant_are_refused_before_they_are_sent_and_hold_no_memory() {
    let server = ServerProcess::start(&[("MAX_CONNECTIONS_PER_ADDRESS", "256")]);
    // 128 requests at once cost the process about 70 MiB the first time,
    // whatever they are (its allocator's arenas and pages): taken first
    // with 128 bodiless ones, so what is measured is the uploads' own.
    let warm = (0..128).map(|_| tokio::spawn(health(server.host.clone())));
    futures::future::join_all(warm).await;
    let before = rss_kib(server.pid());
    let connections = (0..128).map(|_| tokio::spawn(ungranted_upload(server.host.clone())));
    let (statuses, peak) = peak_rss_during(server.pid(), futures::future::join_all(connections)).await;
    let statuses: Vec<Option<u16>> = statuses.into_iter().map(Result::unwrap).collect();
    let grew = peak.saturating_sub(before);
    println!(
        "128 connections each sending a 20 MiB upload without a grant: {} answered 403 before the body; \
         server RSS {before} KiB, peak {peak} KiB (+{grew} KiB)",
        statuses.iter().filter(|s| **s == Some(403)).count()
    );
    assert!(statuses.iter().all(|s| *s == Some(403)), "{statuses:?}");
    assert!(grew <= 32 * 1024, "the server grew by {grew} KiB");
}

/// A client that asks before sending (`Expect: 100-continue`) is told no
/// instead of "continue": it never sends the body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_waits_for_100_continue_is_refused_instead() {
    let server = ServerProcess::start(&[]);
    let mut stream = TcpStream::connect(&server.host).await.unwrap();
    let path = format!("/media/uploads/{UNGRANTED}?grant=1.AAAA");
    let head = upload_head(&path, "image/png", Some(TWENTY_MIB), "Expect: 100-continue\r\n");
    stream.write_all(&head).await.unwrap();
    assert_eq!(answer_within(&mut stream, Duration::from_secs(10)).await, Some(403));
}

async fn spawn(backend: Backend) -> (TestApp, String) {
    let app = spawn_app_with(backend, &[]).await;
    let kim = app.member_token("kim").await;
    (app, kim)
}

/// A grant for `bytes` of `content_type`: its id and its upload path.
async fn grant(app: &TestApp, token: &str, content_type: &str, bytes: usize) -> (String, String) {
    let body_json = json!({"content_type": content_type, "bytes": bytes});
    let response = app
        .request(Method::POST, "/boards/free/media", Some(token), Some(body_json))
        .await;
    assert_eq!(response.status(), 201);
    let grant = body(response).await;
    let path = grant["upload"]["url"].as_str().unwrap().to_owned();
    (grant["id"].as_str().unwrap().to_owned(), path)
}

async fn put(app: &TestApp, path: &str, content_type: &str, file: Vec<u8>) -> u16 {
    let response = app
        .client
        .put(format!("{}{path}", app.address))
        .header("Content-Type", content_type)
        .body(file)
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

async fn state(app: &TestApp, id: &str) -> Value {
    body(app.get(&format!("/media/{id}")).await).await
}

async fn checked(app: &TestApp, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let media = state(app, id).await;
        if media["status"] != "pending" {
            return media;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "still pending: {media}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn host(app: &TestApp) -> String {
    app.address.trim_start_matches("http://").to_owned()
}

async fn an_upload_over_its_grant_is_refused_from_its_head_or_cut_at_the_granted_size(backend: Backend) {
    let (app, kim) = spawn(backend).await;
    let file = test_support::images::png(40, 30);
    let (id, path) = grant(&app, &kim, "image/png", file.len()).await;

    // A declared length over the grant: 413 from the head alone.
    let mut stream = TcpStream::connect(host(&app)).await.unwrap();
    let head = upload_head(&path, "image/png", Some(file.len() as u64 + 1), "");
    stream.write_all(&head).await.unwrap();
    assert_eq!(answer_within(&mut stream, Duration::from_secs(10)).await, Some(413));

    // No declared length: streamed, and cut one byte past the grant.
    let mut stream = TcpStream::connect(host(&app)).await.unwrap();
    stream
        .write_all(&upload_head(&path, "image/png", None, ""))
        .await
        .unwrap();
    let mut over = file.clone();
    over.extend_from_slice(&[0u8; 1000]);
    let mut chunked = format!("{:x}\r\n", over.len()).into_bytes();
    chunked.extend_from_slice(&over);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let _ = stream.write_all(&chunked).await;
    assert_eq!(answer_within(&mut stream, Duration::from_secs(10)).await, Some(413));
    assert_eq!(
        state(&app, &id).await["status"],
        "pending",
        "nothing was kept or checked"
    );

    // The granted file itself: stored and checked.
    assert_eq!(put(&app, &path, "image/png", file.clone()).await, 204);
    assert_eq!(checked(&app, &id).await["status"], "ready");
    assert_eq!(put(&app, &path, "image/png", file).await, 403, "checked already");
}

async fn a_pending_upload_sent_again_ends_ready_once(backend: Backend) {
    let (app, kim) = spawn(backend).await;
    let file = test_support::images::png(40, 30);
    let (id, path) = grant(&app, &kim, "image/png", file.len()).await;
    let sends = (0..20).map(|_| put(&app, &path, "image/png", file.clone()));
    let statuses = futures::future::join_all(sends).await;
    // Each is stored (or, once the check has run, refused as checked): none is lost or queued twice.
    assert!(statuses.iter().all(|s| *s == 204 || *s == 403), "{statuses:?}");
    assert!(statuses.contains(&204));
    let media = checked(&app, &id).await;
    assert_eq!(media["status"], "ready", "{media}");
}

async fn the_audits_tiled_webp_is_stored_no_larger_than_it_came(backend: Backend) {
    let (app, kim) = spawn(backend).await;
    let (id, path) = grant(&app, &kim, "image/webp", TILED_7000.len()).await;
    assert_eq!(put(&app, &path, "image/webp", TILED_7000.to_vec()).await, 204);
    let media = checked(&app, &id).await;
    println!(
        "the audit's 7000 x 7000 WebP of {} bytes: {} as {} of {} bytes (re-encoded before: 146,575,682)",
        TILED_7000.len(),
        media["status"],
        media["content_type"],
        media["bytes"]
    );
    assert_eq!(media["status"], "ready", "{media}");
    assert_eq!(
        (media["width"].as_u64(), media["height"].as_u64()),
        (Some(7000), Some(7000))
    );
    assert!(media["bytes"].as_u64().unwrap() <= TILED_7000.len() as u64, "{media}");
    let served = app
        .client
        .get(format!("{}{}", app.address, media["url"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(
        served.bytes().await.unwrap().len() as u64,
        media["bytes"].as_u64().unwrap()
    );
}

/// A connection from `source` with a small receive buffer: a reader that
/// takes the first bytes and then stalls.
async fn slow_reader(source: IpAddr, server: SocketAddr, path: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind(SocketAddr::new(source, 0)).unwrap();
    let mut stream = socket.connect(server).await.unwrap();
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut first = [0u8; 4096];
    let n = stream.read(&mut first).await.unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    stream
}

/// The audit's 20 slow readers of one file held +2.4 GiB, still held after
/// they left. Now 64 of a 20 MiB file hold a buffer or two each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_downloads_of_a_large_file_hold_little_memory() {
    let data = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_in(data.path(), &[("MAX_CONNECTIONS_PER_ADDRESS", "256")]);
    // A checked file as the check leaves it (the served folder is the store's).
    let name = format!("{UNGRANTED}.png");
    let file: Vec<u8> = (0..TWENTY_MIB).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(data.path().join("media/files").join(&name), &file).unwrap();
    let address: SocketAddr = server.host.parse().unwrap();
    let before = rss_kib(server.pid());
    let readers = (0..64u8).map(|n| {
        let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + n % 4));
        let path = format!("/media/files/{name}");
        async move { slow_reader(source, address, &path).await }
    });
    let (readers, peak) = peak_rss_during(server.pid(), async {
        let readers = futures::future::join_all(readers).await;
        // Long enough for a server that reads whole files to have read them all.
        tokio::time::sleep(Duration::from_secs(2)).await;
        readers
    })
    .await;
    let grew = peak.saturating_sub(before);
    println!("64 slow readers of a 20 MiB file: server RSS {before} KiB, peak {peak} KiB (+{grew} KiB)");
    drop(readers);
    assert!(grew <= 64 * 1024, "the server grew by {grew} KiB");
}
