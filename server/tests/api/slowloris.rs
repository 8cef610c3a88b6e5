//! The server's own connection limits (docs/security.md):
//! stalled or slow clients are cut off by the header and request timeouts,
//! idle kept-alive connections are closed, and at most
//! `SERVER_MAX_CONNECTIONS` are served at once, while health still answers;
//! answers nobody reads are cut off by the write timeout and closed
//! first at the cap, and pipelining is bounded.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::helpers::{Backend, TestApp, spawn_app_with};
use crate::process::ServerProcess;

/// This process's resident memory in KiB (the server runs in it).
fn rss_kib() -> u64 {
    status_rss_kib("/proc/self/status")
}

fn status_rss_kib(status: &str) -> u64 {
    std::fs::read_to_string(status)
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn host(app: &TestApp) -> String {
    app.address.trim_start_matches("http://").to_owned()
}

/// A connection that sent the start of a request's headers and stopped.
async fn stalled(app: &TestApp) -> TcpStream {
    let mut stream = TcpStream::connect(host(app)).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    stream
}

/// Whether the server closed `stream` within `wait` (EOF or a reset).
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buffer = [0u8; 1024];
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // an error answer before the close
            Err(_) => return false,
        }
    }
}

async fn health_in(app: &TestApp) -> Duration {
    let started = Instant::now();
    let response = app.get("/health").await;
    assert_eq!(response.status(), 200);
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_stalled_connections_neither_block_health_nor_stay_open() {
    let app = spawn_app_with(Backend::Sqlite, &[("SERVER_HEADER_TIMEOUT_MS", "1000")]).await;
    let idle = health_in(&app).await;
    let before = rss_kib();
    let started = Instant::now();
    let mut connections = Vec::new();
    for _ in 0..400 {
        connections.push(stalled(&app).await);
    }
    let during = rss_kib();
    let health = health_in(&app).await;
    let mut closed = 0;
    for stream in &mut connections {
        if closed_within(stream, Duration::from_secs(5)).await {
            closed += 1;
        }
    }
    let all_closed_after = started.elapsed();
    drop(connections);
    let after = rss_kib();
    println!(
        "slowloris: 400 stalled connections; health answered in {health:?} (idle: {idle:?}); \
         {closed} closed by the server {all_closed_after:?} after the first opened (header timeout 1 s); \
         RSS {before} -> {during} -> {after} KiB"
    );
    assert!(health < Duration::from_secs(1), "health took {health:?}");
    assert_eq!(closed, 400, "every stalled connection is closed");
    assert!(all_closed_after < Duration::from_secs(5));
    assert!(
        during.saturating_sub(before) < 64 * 1024,
        "RSS grew {before} -> {during} KiB"
    );
}

/// Stalled connections have answered nothing, so none is closed for the
/// newcomer (see `server::connections`): it waits until the header timeout
/// frees a slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_wait_until_a_slot_frees() {
    let app = spawn_app_with(
        Backend::Sqlite,
        &[("SERVER_MAX_CONNECTIONS", "4"), ("SERVER_HEADER_TIMEOUT_MS", "1500")],
    )
    .await;
    // reqwest keeps its own connection: open the stalled ones first.
    let mut holders = Vec::new();
    for _ in 0..4 {
        holders.push(stalled(&app).await);
    }
    let waited = health_in(&app).await;
    println!("with 4 of 4 connections stalled, health answered after {waited:?} (header timeout 1.5 s)");
    assert!(waited >= Duration::from_millis(1000), "the cap held: {waited:?}");
    assert!(waited < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed() {
    let app = spawn_app_with(Backend::Sqlite, &[("SERVER_HEADER_TIMEOUT_MS", "800")]).await;
    let mut stream = TcpStream::connect(host(&app)).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buffer = [0u8; 1024];
    let n = stream.read(&mut buffer).await.unwrap();
    assert!(String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 200"));
    let started = Instant::now();
    assert!(closed_within(&mut stream, Duration::from_secs(5)).await);
    let idle = started.elapsed();
    println!("an idle kept-alive connection was closed after {idle:?} (timeout 800 ms)");
    assert!(idle >= Duration::from_millis(600), "{idle:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_sent_too_slowly_is_cut_off_by_the_request_timeout() {
    let app = spawn_app_with(Backend::Sqlite, &[("SERVER_REQUEST_TIMEOUT_MS", "1000")]).await;
    let mut stream = TcpStream::connect(host(&app)).await.unwrap();
    stream
        .write_all(b"POST /members HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"user")
        .await
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer)).await {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
        if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"}}") {
            break;
        }
    }
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains("\"code\":\"unavailable\""), "{text}");
    assert!(text.to_ascii_lowercase().contains("retry-after"), "{text}");
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(4),
        "{elapsed:?}"
    );
}

/// docs/API.md, Throttling and quotas: one address holding 1,100
/// kept-alive connections gets its 64, and a second address is still
/// answered at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_hold_every_connection() {
    // The test helper lifts the per-address cap; the default is 64.
    let app = spawn_app_with(Backend::Sqlite, &[("MAX_CONNECTIONS_PER_ADDRESS", "")]).await;
    let server: std::net::SocketAddr = host(&app).parse().unwrap();
    let mut held = Vec::new();
    let mut kept = 0;
    for _ in 0..1_100 {
        let mut stream = TcpStream::connect(server).await.unwrap();
        // A whole request on a kept-alive connection: an answer means the
        // server kept this connection.
        // A refused connection may already be closed: the write can fail.
        let _ = stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").await;
        let mut buffer = [0u8; 512];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(500), stream.read(&mut buffer)).await
            && n > 0
        {
            kept += 1;
        }
        held.push(stream);
    }
    assert_eq!(kept, 64, "the address got exactly its cap");
    let other = tokio::net::TcpSocket::new_v4().unwrap();
    other.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let started = Instant::now();
    let mut stream = other.connect(server).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut answer))
        .await
        .expect("a second address is answered within 2 s")
        .unwrap();
    let took = started.elapsed();
    assert!(
        String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    println!("connections: 1,100 from one address, 64 kept; another address answered in {took:?}");
    drop(held);
}

const HEALTH: &[u8] = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

/// Reads one whole answer (its head and a `content-length` body); None if
/// the connection closed, failed or stayed silent for 5 s first.
async fn read_answer(stream: &mut TcpStream) -> Option<String> {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if answer.len() >= end + 4 + length {
                return Some(String::from_utf8_lossy(&answer).into_owned());
            }
        }
        match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer)).await {
            Ok(Ok(n)) if n > 0 => answer.extend_from_slice(&buffer[..n]),
            _ => return None,
        }
    }
}

async fn exchange(stream: &mut TcpStream, request: &[u8]) -> Option<String> {
    stream.write_all(request).await.ok()?;
    read_answer(stream).await
}

/// A signup whose body is to be sent in two parts: (head and first part, rest).
fn signup_in_two_parts(username: &str) -> (Vec<u8>, Vec<u8>) {
    let body = format!(r#"{{"username":"{username}","password":"password-123","nickname":"n"}}"#);
    let mut first = format!(
        "POST /members HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    first.extend_from_slice(&body.as_bytes()[..10]);
    (first, body.as_bytes()[10..].to_vec())
}

/// docs/API.md, Throttling and quotas: at the global cap the
/// longest-idle kept-alive connection is closed to admit a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_cap_the_longest_idle_connection_is_closed_to_admit_a_new_one() {
    // The header timeout (which also closes idle connections) stays at 10 s.
    let app = spawn_app_with(Backend::Sqlite, &[("SERVER_MAX_CONNECTIONS", "8")]).await;
    let mut kept = Vec::new();
    for _ in 0..8 {
        let mut stream = TcpStream::connect(host(&app)).await.unwrap();
        let answer = exchange(&mut stream, HEALTH).await.expect("answered under the cap");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        kept.push(stream);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let started = Instant::now();
    let mut newcomer = TcpStream::connect(host(&app)).await.unwrap();
    let answer = exchange(&mut newcomer, HEALTH)
        .await
        .expect("the newcomer is answered, not left waiting for a slot");
    let took = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let first_closed = closed_within(&mut kept[0], Duration::from_secs(1)).await;
    let mut others_still_serve = 0;
    for stream in &mut kept[1..] {
        if exchange(stream, HEALTH)
            .await
            .is_some_and(|a| a.starts_with("HTTP/1.1 200"))
        {
            others_still_serve += 1;
        }
    }
    println!(
        "at the cap (8 of 8 kept-alive connections idle), a new connection was answered in {took:?} \
         (header timeout 10 s); the first opened closed: {first_closed}; the other 7 still serving: {others_still_serve}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(first_closed, "the longest-idle connection is the one closed");
    assert_eq!(others_still_serve, 7, "only one connection was closed");
}

/// A connection in a request is never closed for another, even when it has
/// been idle longest before it: the newcomer waits until one goes idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_in_a_request_is_never_closed_for_a_new_one() {
    let app = spawn_app_with(Backend::Sqlite, &[("SERVER_MAX_CONNECTIONS", "2")]).await;
    let mut older = TcpStream::connect(host(&app)).await.unwrap();
    assert!(exchange(&mut older, HEALTH).await.is_some());
    tokio::time::sleep(Duration::from_millis(10)).await;
    let mut newer = TcpStream::connect(host(&app)).await.unwrap();
    assert!(exchange(&mut newer, HEALTH).await.is_some());
    // Both begin a signup and send the first bytes of its body.
    let (older_start, older_rest) = signup_in_two_parts("slow_older");
    let (newer_start, newer_rest) = signup_in_two_parts("slow_newer");
    older.write_all(&older_start).await.unwrap();
    newer.write_all(&newer_start).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let started = Instant::now();
    let mut newcomer = TcpStream::connect(host(&app)).await.unwrap();
    newcomer.write_all(HEALTH).await.unwrap();
    let early = tokio::time::timeout(Duration::from_millis(500), read_answer(&mut newcomer)).await;
    assert!(early.is_err(), "both connections are in a request: the newcomer waits");

    // The newer one's request ends: it is answered, then closed as idle.
    newer.write_all(&newer_rest).await.unwrap();
    let newer_answer = read_answer(&mut newer).await.expect("a request is answered in full");
    assert!(newer_answer.starts_with("HTTP/1.1 201"), "{newer_answer}");
    let newcomer_answer = read_answer(&mut newcomer).await.expect("admitted once one went idle");
    let waited = started.elapsed();
    assert!(newcomer_answer.starts_with("HTTP/1.1 200"), "{newcomer_answer}");
    assert!(closed_within(&mut newer, Duration::from_secs(1)).await);

    // The older one, in its request all along, was left to finish it.
    older.write_all(&older_rest).await.unwrap();
    let older_answer = read_answer(&mut older).await.expect("never cut off in its request");
    println!("two connections in a request at a cap of 2: a new one waited {waited:?}, admitted when one finished");
    assert!(older_answer.starts_with("HTTP/1.1 201"), "{older_answer}");
}

/// A signup whose head is `size` bytes in all (request line, headers and the
/// blank line), padded with one header.
fn signup_with_head_of(size: usize, username: &str) -> Vec<u8> {
    let body = format!(r#"{{"username":"{username}","password":"password-123","nickname":"n"}}"#);
    let start = format!(
        "POST /members HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nX-Pad: ",
        body.len()
    );
    let mut request = start.into_bytes();
    request.resize(size - 4, b'a');
    request.extend_from_slice(b"\r\n\r\n");
    assert_eq!(request.len(), size);
    request.extend_from_slice(body.as_bytes());
    request
}

/// Everything the server sends until it closes (or 5 s pass).
async fn read_until_closed(stream: &mut TcpStream, mut answer: Vec<u8>) -> String {
    let mut buffer = [0u8; 4096];
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer)).await {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// Sends `request` in one write; what came back before the close.
async fn send_in_one_burst(app: &TestApp, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(host(app)).await.unwrap();
    // The server may close before it has read everything: the write can fail.
    let _ = stream.write_all(request).await;
    read_until_closed(&mut stream, Vec::new()).await
}

/// Sends `request` 1 KiB at a time, stopping when the server answers.
async fn send_in_pieces(app: &TestApp, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(host(app)).await.unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    for piece in request.chunks(1024) {
        if stream.write_all(piece).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
        match stream.try_read(&mut buffer) {
            Ok(n) if n > 0 => {
                answer.extend_from_slice(&buffer[..n]);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            _ => break,
        }
    }
    read_until_closed(&mut stream, answer).await
}

/// The request head is capped at 64 KiB (`SERVER_MAX_HEADER_BYTES`), however
/// it arrives; a head over it is answered 431 and never reaches a handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_over_64_kib_is_answered_431_and_never_served() {
    let app = spawn_app_with(Backend::Sqlite, &[]).await;
    for (size, username) in [(63 * 1024, "head_63k"), (64 * 1024, "head_64k")] {
        let mut stream = TcpStream::connect(host(&app)).await.unwrap();
        let answer = exchange(&mut stream, &signup_with_head_of(size, username)).await;
        let answer = answer.expect("a head within the cap is answered");
        assert!(answer.starts_with("HTTP/1.1 201"), "a {size}-byte head: {answer}");
    }
    for (size, username, in_pieces) in [
        (64 * 1024 + 1, "over_by_one", false),
        (65 * 1024, "head_65k_burst", false),
        (65 * 1024, "head_65k_pieces", true),
        (130 * 1024, "head_130k_pieces", true),
    ] {
        let request = signup_with_head_of(size, username);
        let answer = if in_pieces {
            send_in_pieces(&app, &request).await
        } else {
            send_in_one_burst(&app, &request).await
        };
        println!("a {size}-byte head (in pieces: {in_pieces}): {answer:?}");
        assert!(answer.starts_with("HTTP/1.1 431"), "a {size}-byte head: {answer}");
        assert!(answer.contains("connection: close"), "{answer}");
        assert_eq!(
            app.signup(username, "password-123").await.status(),
            201,
            "{username} was never created"
        );
    }
    // One burst of 130 KiB: the server may close before it has read (and
    // so answered) it all, but it never serves it.
    let answer = send_in_one_burst(&app, &signup_with_head_of(130 * 1024, "head_130k_burst")).await;
    println!("a 130 KiB head in one burst: {answer:?}");
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert_eq!(app.signup("head_130k_burst", "password-123").await.status(), 201);
}

/// An unfinished head is refused once it passes the header cap, so it holds
/// no more memory than a head under the cap: before the cap, 300 connections
/// each sending 100 KiB of header without its end grew RSS by 117 MiB (hyper
/// buffered up to about 400 KB of each). Measured on the real server binary
/// in a process of its own: the test process's RSS is every test's (in CI,
/// at 700 MiB, refused heads read +20 MiB there and kept it, the allocator
/// holding other tests' memory; the server alone grows by 2 MiB at most).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_heads_hold_little_memory() {
    let server = ServerProcess::start(&[("SERVER_HEADER_TIMEOUT_MS", "5000")]);
    let mut over = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Never-Ends: ".to_vec();
    over.resize(100 * 1024, b'a');
    let mut under = over.clone();
    under.truncate(60 * 1024);
    // A loaded machine only adds to a reading (slower reads, more buffers
    // alive at once): each kind of head is measured up to three times and
    // the least growth kept.
    let mut refused_growth = u64::MAX;
    for round in 1..=3 {
        let (refused, grew) = hold_unfinished_heads(&server, &over, "100 KiB (over the cap)").await;
        assert_eq!(refused, 300, "every head over the cap is refused (round {round})");
        refused_growth = refused_growth.min(grew);
        if refused_growth < 16 * 1024 {
            break;
        }
    }
    let mut under_growth = u64::MAX;
    for round in 1..=3 {
        let (refused, grew) = hold_unfinished_heads(&server, &under, "60 KiB (under the cap)").await;
        assert_eq!(refused, 0, "heads under the cap wait for their end (round {round})");
        under_growth = under_growth.min(grew);
        if under_growth < 300 * 256 {
            break;
        }
    }
    // Generous bounds still: refused heads hold nothing once closed; a head
    // under the cap holds up to about twice what it sent (hyper's read
    // buffer grows by doubling).
    assert!(
        refused_growth < 16 * 1024,
        "refused heads: RSS grew {refused_growth} KiB"
    );
    assert!(
        under_growth < 300 * 256,
        "heads under the cap: RSS grew {under_growth} KiB"
    );
}

/// 300 connections each send `head` and hold it; how many were answered
/// 431, and how much the server's RSS grew while they were open.
async fn hold_unfinished_heads(server: &ServerProcess, head: &[u8], name: &str) -> (usize, u64) {
    let before = status_rss_kib(&format!("/proc/{}/status", server.pid()));
    let mut connections = Vec::new();
    for _ in 0..300 {
        let mut stream = TcpStream::connect(&server.host).await.unwrap();
        let _ = stream.write_all(head).await;
        connections.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = status_rss_kib(&format!("/proc/{}/status", server.pid()));
    let mut refused = 0;
    for stream in &mut connections {
        let mut buffer = [0u8; 64];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(20), stream.read(&mut buffer)).await
            && String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 431")
        {
            refused += 1;
        }
    }
    let grew = during.saturating_sub(before);
    println!(
        "300 connections each sending {name} of a head that never ends: {refused} answered 431; \
         server RSS {before} -> {during} KiB (+{grew} KiB)"
    );
    drop(connections);
    tokio::time::sleep(Duration::from_millis(200)).await;
    (refused, grew)
}

/// A connection from `source` with a small receive buffer: an answer its
/// client does not read soon fills it, and the server's write goes pending.
async fn small_window_connection(source: IpAddr, server: SocketAddr) -> TcpStream {
    let socket = match source {
        IpAddr::V4(_) => TcpSocket::new_v4(),
        IpAddr::V6(_) => TcpSocket::new_v6(),
    }
    .unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind(SocketAddr::new(source, 0)).unwrap();
    socket.connect(server).await.unwrap()
}

fn pipelined(paths: impl IntoIterator<Item = String>) -> Vec<u8> {
    paths
        .into_iter()
        .flat_map(|path| format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").into_bytes())
        .collect()
}

/// Whether the server has reset `stream`, as it does a connection whose
/// answer it abandons; seen without reading, so the window stays shut. (A
/// reset is reported once: the caller keeps the first sighting.)
fn was_reset(stream: &TcpStream) -> bool {
    matches!(stream.take_error(), Ok(Some(_)))
}

/// The statuses of the next `count` answers on `stream`, each with a
/// `content-length` body, read in order (answers to pipelined requests
/// arrive back to back), and their bytes in all; None if it closed or
/// stayed silent for 5 s first.
async fn read_statuses(stream: &mut TcpStream, count: usize) -> Option<(Vec<u16>, usize)> {
    let mut statuses = Vec::with_capacity(count);
    let mut bytes = 0;
    let mut received = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    while statuses.len() < count {
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&received[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if received.len() >= end + 4 + length {
                statuses.push(head.get(9..12)?.parse().ok()?);
                bytes += end + 4 + length;
                received.drain(..end + 4 + length);
                continue;
            }
        }
        match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer)).await {
            Ok(Ok(n)) if n > 0 => received.extend_from_slice(&buffer[..n]),
            _ => return None,
        }
    }
    Some((statuses, bytes))
}

/// At most how many bytes of answers a small-window client does not read
/// the kernel holds over loopback: the largest send buffer TCP autotuning
/// may give the writer (`tcp_wmem`'s third field, 4 MiB by default) and the
/// reader's receive buffer. (Loopback's 64 KiB segments make the send
/// buffer start near 1.4 MB; it is not read here, as it grows.)
fn loopback_holds_unread_at_most() -> usize {
    let wmem = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem").unwrap_or_default();
    let largest_send_buffer: usize = wmem
        .split_whitespace()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(4 * 1024 * 1024);
    // `small_window_connection`'s 4096, which Linux doubles.
    largest_send_buffer + 2 * 4096
}

/// docs/API.md, Hardening, Connections: 16 addresses x 64 connections
/// (the per-address cap) fill the global cap of 1,024, each sending 200
/// pipelined requests for a 25 KB script and reading nothing. A bystander
/// is still answered at once, 4 times over 20 s: at the cap a stalled
/// connection is closed for it (after each answer another never-reading
/// connection takes the freed slot, so each of the 4 meets a full cap).
/// The write timeout then closes every stalled one.
///
/// On loopback each connection is sent about 50 answers (1.4 MB: its
/// 64 KiB segments size the send buffer) before it stalls, so the debug
/// build serves some 50,000 answers before the cap is full, 13-17 s on 2 cores:
/// the write timeout is 45 s here, past the 4 probes, so that they meet a
/// cap only a stalled-connection close can open (at 10 s, the default, the
/// first connections are closed by it before the last ones are in).
///
/// The process holds both ends of each connection: about 2,100 descriptors
/// with the app's, under this machine's limit (`ulimit -n`: 20,000; at the
/// usual default of 1,024 the test fails on connect, it cannot pass).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a scenario: bash scripts/scenarios runs it"]
async fn clients_that_never_read_cannot_keep_a_bystander_out_at_the_cap() {
    // The defaults: SERVER_MAX_CONNECTIONS 1024 and
    // MAX_CONNECTIONS_PER_ADDRESS 64 (the helper lifts it, "" puts it back).
    let write_timeout = Duration::from_secs(45);
    let app = spawn_app_with(
        Backend::Sqlite,
        &[
            ("MAX_CONNECTIONS_PER_ADDRESS", ""),
            ("SERVER_WRITE_TIMEOUT_MS", "45000"),
        ],
    )
    .await;
    let server: SocketAddr = host(&app).parse().unwrap();
    let requests = pipelined((0..200).map(|_| "/assets/app.js".to_owned()));
    let started = Instant::now();
    // Watched from the first: a reset is seen within 100 ms.
    let (attacker, attackers) = tokio::sync::mpsc::unbounded_channel::<TcpStream>();
    // Bounded; done once every connection is closed. Some are closed well
    // after 45 s: loopback's buffers, 1.4 GB for all, put the kernel's TCP
    // memory under pressure, and their answers move again once the first
    // resets free it.
    let watch_until = started + Duration::from_secs(150);
    let watcher = tokio::spawn(async move {
        let mut attackers = attackers;
        let mut watched = Vec::new();
        let mut closed_at: Vec<Option<Duration>> = Vec::new();
        let mut all_sent = false;
        while Instant::now() < watch_until {
            // Every connection sent, and every one closed: done.
            if all_sent && closed_at.iter().all(Option::is_some) {
                break;
            }
            all_sent = attackers.is_closed() && attackers.is_empty();
            while let Ok(stream) = attackers.try_recv() {
                watched.push(stream);
                closed_at.push(None);
            }
            for (stream, closed_at) in watched.iter().zip(&mut closed_at) {
                if closed_at.is_none() && was_reset(stream) {
                    *closed_at = Some(started.elapsed());
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        closed_at
    });
    let mut sent_at = Vec::new();
    for source in 2..=17u8 {
        for _ in 0..64 {
            let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, source));
            let mut stream = small_window_connection(source, server).await;
            stream
                .write_all(&requests)
                .await
                .expect("the requests fit the socket buffers");
            attacker.send(stream).unwrap();
            sent_at.push(started.elapsed());
        }
    }
    let attack_sent = started.elapsed();

    let mut probes = Vec::new();
    for probe in 0..4u32 {
        tokio::time::sleep_until((started + attack_sent + Duration::from_secs(5) * probe).into()).await;
        let asked = Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(10), async {
            let mut stream = TcpStream::connect(server).await.ok()?;
            exchange(
                &mut stream,
                b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            )
            .await
        })
        .await
        .ok()
        .flatten();
        let ok = answer.is_some_and(|a| a.starts_with("HTTP/1.1 200"));
        probes.push((asked.duration_since(started), asked.elapsed(), ok));
        if probe < 3 {
            // Once the bystander's connection is gone, its slot is taken.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let mut stream = small_window_connection(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 18)), server).await;
            stream.write_all(&requests).await.unwrap();
            attacker.send(stream).unwrap();
            sent_at.push(started.elapsed());
        }
    }
    drop(attacker);
    let closed_at = watcher.await.unwrap();

    let mut closes_by_second = std::collections::BTreeMap::<u64, usize>::new();
    for at in closed_at.iter().flatten() {
        *closes_by_second.entry(at.as_secs()).or_default() += 1;
    }
    let closed = closed_at.iter().flatten().count();
    let closed_before_the_bystander = closed_at.iter().flatten().filter(|at| **at < attack_sent).count();
    // The write timeout closes a connection 45 s after its answer stalled
    // at the earliest, and it cannot stall before its requests are sent:
    // one closed sooner was closed for a bystander.
    let closed_for_a_bystander = closed_at
        .iter()
        .zip(&sent_at)
        .filter(|(closed, sent)| closed.is_some_and(|closed| closed < **sent + write_timeout - Duration::from_secs(1)))
        .count();
    println!(
        "1,024 connections from 16 addresses, 200 pipelined GET /assets/app.js each, never read \
         (all sent {attack_sent:?} after the first connect); bystander /health (asked at, took, 200): {probes:?}; \
         attacker connections reset by the server: {closed} of {} ({closed_for_a_bystander} for a bystander, \
         the others by the write timeout, 45 s), by second since the first connect: {closes_by_second:?}",
        sent_at.len()
    );
    for (at, took, ok) in &probes {
        assert!(
            *ok && *took < Duration::from_secs(2),
            "the bystander at {at:?}: took {took:?}, answered: {ok}"
        );
    }
    assert_eq!(
        closed_before_the_bystander, 0,
        "every attacker held its slot when the bystander first came (else the setup, {attack_sent:?}, \
         outlasted the write timeout and the cap was not full)"
    );
    // A probe that comes once the write timeout has begun closing (CI's
    // slower setup brings it closer) finds a free slot and closes nothing.
    let first_timed_out = closed_at
        .iter()
        .zip(&sent_at)
        .filter_map(|(closed, sent)| closed.filter(|closed| *closed >= *sent + write_timeout - Duration::from_secs(1)))
        .min()
        .unwrap_or(Duration::MAX);
    // Nor is one counted that came once the earliest write timeout could
    // fire: a close then may be either (the 1 s slack above).
    let earliest_timeout = sent_at
        .iter()
        .min()
        .map_or(Duration::MAX, |first| *first + write_timeout - Duration::from_secs(1));
    let probes_at_the_cap = probes
        .iter()
        .filter(|(at, _, _)| *at < first_timed_out.min(earliest_timeout))
        .count();
    assert!(
        probes_at_the_cap >= 1,
        "the bystander came while the cap was full (first timed out at {first_timed_out:?})"
    );
    // One each; a refill that comes before the bystander's slot is given
    // back is admitted the same way.
    assert!(
        (probes_at_the_cap..=2 * probes.len()).contains(&closed_for_a_bystander),
        "at the cap, one stalled connection per newcomer is closed for it: {closed_for_a_bystander} \
         ({probes_at_the_cap} probes came before the write timeout first closed one)"
    );
    assert_eq!(
        closed,
        sent_at.len(),
        "the write timeout closes every connection that reads nothing"
    );
}

/// docs/API.md, Hardening: an answer that makes no progress for
/// `SERVER_WRITE_TIMEOUT_MS` has its connection closed (reset).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_its_client_never_reads_is_closed_after_the_write_timeout() {
    let app = spawn_app_with(Backend::Sqlite, &[("SERVER_WRITE_TIMEOUT_MS", "1000")]).await;
    let server: SocketAddr = host(&app).parse().unwrap();
    let mut stream = small_window_connection(IpAddr::V4(Ipv4Addr::LOCALHOST), server).await;
    // 10 MB of answers: more than loopback's buffers take (at most 4 MiB).
    stream
        .write_all(&pipelined((0..400).map(|_| "/assets/app.js".to_owned())))
        .await
        .unwrap();
    let sent = Instant::now();
    let mut reset_after = None;
    while sent.elapsed() < Duration::from_secs(10) {
        if was_reset(&stream) {
            reset_after = Some(sent.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "a client that never reads its answers: connection reset {reset_after:?} after its requests (write timeout 1 s)"
    );
    let reset_after = reset_after.expect("the server closes the connection");
    assert!(
        reset_after >= Duration::from_millis(900),
        "not before the write timeout: {reset_after:?}"
    );
    assert!(reset_after < Duration::from_secs(4), "{reset_after:?}");
}

/// The write timeout counts time without progress, not how long answers
/// take: a client that reads 2.7 MB of them slowly but steadily (64 KiB
/// every 150 ms) over several times the write timeout keeps its
/// connection. The server caps what the kernel holds unsent
/// (`TCP_NOTSENT_LOWAT`) so each read lets a write go ahead; without the
/// cap the socket said it was writable only once a third of its send
/// buffer had drained, and this client was cut off after 0.8 MB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reads_slowly_but_steadily_keeps_its_connection() {
    let app = spawn_app_with(Backend::Sqlite, &[("SERVER_WRITE_TIMEOUT_MS", "2000")]).await;
    let mut stream = TcpStream::connect(host(&app)).await.unwrap();
    let count = 40;
    stream
        .write_all(&pipelined((0..count).map(|_| "/assets/app.js".to_owned())))
        .await
        .unwrap();
    let started = Instant::now();
    let mut read = 0;
    let mut answers_begun = 0;
    let mut buffer = vec![0u8; 64 * 1024];
    // Bounded: 2.7 MB at up to 64 KiB a read.
    for _ in 0..100_000 {
        let n = match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer)).await {
            Ok(Ok(n)) if n > 0 => n,
            other => panic!("cut off after {read} bytes, {:?}: {other:?}", started.elapsed()),
        };
        read += n;
        answers_begun += buffer[..n].windows(15).filter(|w| w == b"HTTP/1.1 200 OK").count();
        if answers_begun == count && buffer[..n].ends_with(b"\n") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let took = started.elapsed();
    println!(
        "a client reading at most 64 KiB every 150 ms took {} KiB, {answers_begun} answers, in {took:?} (write timeout 2 s)",
        read / 1024
    );
    assert_eq!(answers_begun, count);
    assert!(took > Duration::from_secs(4), "longer than the write timeout: {took:?}");
    assert!(!was_reset(&stream));
}

/// docs/API.md, Hardening: pipelined requests are begun at most 16
/// ahead of what the socket takes. 200 pairs of a 25 KB script and a small
/// answer, never read: the requests the app has begun (their access-log
/// lines) stop at what loopback's buffers hold of the answers (1.4-2.8 MB
/// here, at most 4 MiB) and at most 16 more (hyper: 2). Once the
/// client reads, every one is answered in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_are_begun_at_most_16_ahead_of_what_the_client_reads() {
    let app = spawn_app_with(Backend::Sqlite, &[]).await;
    let server: SocketAddr = host(&app).parse().unwrap();
    let probe = "/assets/pipeline-probe-";
    let begun = || {
        crate::helpers::logs()
            .text_since(app.logs_from)
            .matches(&format!("\"path\":\"{probe}"))
            .count()
    };
    let mut stream = small_window_connection(IpAddr::V4(Ipv4Addr::LOCALHOST), server).await;
    let requests = pipelined((0..200).flat_map(|n| ["/assets/app.js".to_owned(), format!("{probe}{n}")]));
    stream.write_all(&requests).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        seen.push(begun());
    }
    println!("200 pipelined pairs (script, probe), none read: probes begun every 300 ms: {seen:?}");
    assert!(seen[0] >= 1, "the first requests are served: {seen:?}");
    assert!(seen[5] < 200, "it stalled: {seen:?}");
    assert_eq!(seen[4], seen[5], "it stalled: {seen:?}");

    let (statuses, bytes) = read_statuses(&mut stream, 400)
        .await
        .expect("every request is answered once read");
    let scripts = statuses.iter().step_by(2).filter(|s| **s == 200).count();
    assert_eq!(scripts, 200, "{statuses:?}");
    assert!(statuses.iter().skip(1).step_by(2).all(|s| *s == 404), "{statuses:?}");
    assert_eq!(begun(), 200);
    // Answered before the stall: what the kernel took (measured beside).
    let pair = bytes / 200;
    let kernel_took = loopback_holds_unread_at_most();
    let in_the_kernel = kernel_took.div_ceil(pair);
    let ahead = seen[5].saturating_sub(in_the_kernel);
    println!(
        "the kernel holds at most {kernel_took} bytes unread = {in_the_kernel} pairs of {pair} bytes; \
         begun beyond them: {ahead}"
    );
    assert!(
        seen[5] <= in_the_kernel + 16,
        "at most 16 begun beyond what the kernel may hold: {seen:?}, {in_the_kernel}"
    );
}
