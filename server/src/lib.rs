//! The single-process server (VM mode and the local default; docs/DESIGN.md,
//! Deployments): every route on
//! one port, with request ids, JSON access logs, CORS and graceful shutdown.

mod connections;
mod media;
mod settings;
mod stream;
mod web;

pub use settings::{ConnectionLimits, ServerSettings};

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, Method, StatusCode};
use hyper::body::{Frame, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use shared::error::ApiError;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::ServiceExt;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::timeout::TimeoutLayer;

use connections::{Eviction, InRequest, Registry};
use shared::http::conventions::{CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_METHODS, request_id};
use shared::http::{AppState, Function, router};
use stream::WatchedStream;

pub use shared::http::conventions::REQUEST_ID;

/// One JSON line per request: method, path, status, duration, request id.
/// Never the body, the query string or headers (they may hold secrets).
async fn access_log(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let request_id = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let response = next.run(request).await;
    tracing::info!(
        target: "access",
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        duration_ms = started.elapsed().as_secs_f64() * 1e3,
        request_id = %request_id,
        "request"
    );
    response
}

/// Every route, wrapped for server mode. `cors_origins` empty: no CORS headers.
pub fn app(state: AppState, cors_origins: &[String]) -> Router {
    // The reference web client at `/` and `/assets/*` (server/src/web.rs).
    let mut app = router(state.clone(), &Function::ALL)
        .merge(web::routes())
        .merge(media::routes(state))
        .layer(middleware::from_fn(access_log));
    if !cors_origins.is_empty() {
        let origins: Vec<HeaderValue> = cors_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        let names = |names: &[&'static str]| names.iter().map(|n| HeaderName::from_static(n)).collect::<Vec<_>>();
        app = app.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods(CORS_METHODS.map(|m| Method::from_bytes(m.as_bytes()).expect("a method")))
                .allow_headers(names(&CORS_ALLOWED_HEADERS))
                .expose_headers(names(&CORS_EXPOSED_HEADERS)),
        );
    }
    // Outermost: the id is decided before the access log reads it, and returned.
    app.layer(middleware::from_fn(request_id))
}

/// A request over its time (the timeout layer's 408, which no handler
/// answers) is answered 503 in docs/API.md's shape.
async fn timed_out_in_api_shape(response: Response) -> Response {
    if response.status() == StatusCode::REQUEST_TIMEOUT {
        return ApiError::Unavailable {
            message: "the request took too long; it may or may not have been applied, retry later".into(),
            retry_after: 1,
        }
        .into_response();
    }
    response
}

/// Serves `app` on `listener` until `shutdown` resolves, then finishes the
/// requests in flight (for at most the request timeout). Each connection is
/// HTTP/1.1 with `limits`' header timeout (which also closes idle kept-alive
/// connections) and its cap on a request's head (larger: hyper's `431`,
/// connection closed); each request has the request timeout, and each
/// answer the write timeout (no progress for that long: connection reset).
/// At most `max_connections` are served at once: at the cap, the connection
/// whose answer is stalled longest, or else the one idle longest between
/// requests, is closed to admit the next one (see `connections` for which
/// may be), and while none may be the next ones wait (the accepted one in
/// the server, the rest in the listen backlog). A peer address (an IPv6
/// peer's /64, and its /48 at 8 times the cap) holds at most `per_address`
/// of them (the exempt proxies any number), a connection beyond that is
/// closed when accepted.
///
/// Pipelining: hyper begins a connection's next request only once the
/// previous answer's body is in its write buffer, and writes that next
/// answer only once the buffer is flushed (`pipeline_flush` stays off: on,
/// it would buffer answer after answer unflushed). So at most 2 requests
/// are ever begun ahead of what the socket has taken, well within the 16 of
/// docs/API.md, and a client that reads nothing stalls its connection after
/// them. What it sent beyond sits unparsed: in the kernel, or in hyper's
/// read buffer, which `max_buf_size` holds to the head cap.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = app
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ))
        .layer(middleware::map_response(timed_out_in_api_shape));
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let per_address = Arc::new(PerAddress::default());
    let registry = Registry::new();
    let stalled_after = stalled_after(limits.write_timeout);
    // Each connection holds a receiver: `closed()` is every connection gone.
    let (stopping, _) = watch::channel(false);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_header_size(limits.max_header_bytes)
        // hyper's floor; a head at the cap still fits (the default, ~400 KB,
        // let each connection hold that much of requests read ahead).
        .max_buf_size(limits.max_header_bytes.max(8 * 1024))
        .pipeline_flush(false)
        .keep_alive(true);
    tokio::pin!(shutdown);
    'serve: loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before
                    // it was accepted: keep serving the others.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Over its address's share: closed at once.
        let ip = peer.ip().to_canonical();
        let address_slot = if limits.exempt.iter().any(|net| net.contains(&ip)) {
            None
        } else {
            match per_address.take(ip, limits.per_address) {
                Some(taken) => Some(taken),
                None => {
                    tracing::debug!("a peer address is at its connection cap");
                    drop(stream);
                    continue;
                }
            }
        };
        let slot = match Arc::clone(&slots).try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => loop {
                let went_idle = registry.went_idle();
                let (asked_one_to_close, look_again_at) = match registry.close_one(stalled_after) {
                    Eviction::Asked => (true, None),
                    Eviction::NoneYet { look_again_at } => (false, look_again_at),
                };
                // A write that goes pending after the scan is seen within
                // another `stalled_after`.
                let look_again_at = look_again_at.unwrap_or_else(|| Instant::now() + stalled_after);
                tokio::select! {
                    slot = Arc::clone(&slots).acquire_owned() => break slot.expect("the semaphore is never closed"),
                    // Nothing to close yet: look again when something went
                    // idle, or a pending write has stalled long enough.
                    () = went_idle, if !asked_one_to_close => {}
                    () = tokio::time::sleep_until(look_again_at.into()), if !asked_one_to_close => {}
                    () = &mut shutdown => break 'serve,
                }
            },
        };
        let open = registry.open();
        let this_connection = Arc::clone(&open);
        let app = app.clone();
        let service = tower::service_fn(move |mut request: http::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let unread = Arc::new(AtomicBool::new(!hyper::body::Body::is_end_stream(request.body())));
            let request = request.map(|body| {
                axum::body::Body::new(TrackedBody {
                    body,
                    unread: Arc::clone(&unread),
                })
            });
            let answer = app.clone().oneshot(request);
            let in_request = this_connection.request_started();
            async move {
                let mut response: Response = answer.await?;
                // Answered before its body was read (a 401, 404 or 413
                // decided from the head): hyper will not read the rest, so
                // the connection cannot serve another request. Say so, or a
                // keep-alive client sends its next request into a closed
                // connection.
                if unread.load(Ordering::Acquire) {
                    response
                        .headers_mut()
                        .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
                }
                Ok::<_, Infallible>(response.map(|body| EndsRequest {
                    body,
                    _request: in_request,
                }))
            }
        });
        let stream = WatchedStream::new(stream, Arc::clone(&open), limits.write_timeout);
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let mut stop = stopping.subscribe();
        tokio::spawn(async move {
            let closed = {
                let mut connection = std::pin::pin!(connection);
                tokio::select! {
                    closed = connection.as_mut() => closed,
                    () = async {
                        tokio::select! {
                            () = open.close_requested() => {}
                            _ = stop.wait_for(|stop| *stop) => {}
                        }
                    } => {
                        if open.is_aborting() {
                            // Its answer is stalled: dropped (the socket
                            // reset) rather than left to finish.
                            tracing::debug!("closing a connection at the cap: its answer is stalled");
                            Ok(())
                        } else {
                            // Idle: closed now; in a request: closed once
                            // it is answered.
                            connection.as_mut().graceful_shutdown();
                            connection.await
                        }
                    }
                }
            };
            if let Err(e) = closed {
                tracing::debug!(error = %e, "connection closed");
            }
            drop((slot, address_slot, open, stop));
        });
    }
    stopping.send_replace(true);
    tokio::select! {
        () = stopping.closed() => {}
        () = tokio::time::sleep(limits.request_timeout) => {
            tracing::warn!("requests still running at shutdown were cut off");
        }
    }
    Ok(())
}

/// How long a write must have made no progress for its connection to be
/// closed first at the cap: longer than a healthy client takes to take the
/// next bytes (its next ACK comes within a round trip, well under 1 s even
/// on a mobile link), short enough that a newcomer at a cap held by clients
/// that read nothing waits about 1 s. Half the write timeout if that is
/// shorter, so a stalled connection is closed for a newcomer before the
/// write timeout would close it anyway.
fn stalled_after(write_timeout: Duration) -> Duration {
    Duration::from_secs(1).min(write_timeout / 2)
}

/// An answer's body that ends its request when hyper drops it: written, or
/// its connection gone.
#[derive(Debug)]
struct EndsRequest {
    body: axum::body::Body,
    _request: InRequest,
}

impl hyper::body::Body for EndsRequest {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request body that notes when it has been read to its end.
struct TrackedBody {
    body: hyper::body::Incoming,
    /// True until the body's end was read (false from the start for none).
    unread: Arc<AtomicBool>,
}

impl hyper::body::Body for TrackedBody {
    type Data = axum::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.body.is_end_stream() {
            self.unread.store(false, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Open connections per address key (see `AddressKey`).
#[derive(Debug, Default)]
struct PerAddress(std::sync::Mutex<HashMap<AddressKey, usize>>);

/// What a peer's connections are counted by: an IPv4 address alone (an
/// IPv4-mapped IPv6 peer is its IPv4 address); an IPv6 peer by its /64, a
/// host's usual share, which it may fill with addresses at will, and by its
/// /48, a site's, at 8 times the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum AddressKey {
    V4(Ipv4Addr),
    /// The first 64 bits.
    V6Net64(u64),
    /// The first 48 bits.
    V6Net48(u64),
}

/// A /48 may hold this many times the cap of one address or /64.
const PER_48_FACTOR: usize = 8;

/// Each key `ip` counts against, with its cap.
fn address_keys(ip: IpAddr, cap: usize) -> [Option<(AddressKey, usize)>; 2] {
    match ip.to_canonical() {
        IpAddr::V4(v4) => [Some((AddressKey::V4(v4), cap)), None],
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            // The shifts leave 64 and 48 bits: the casts lose nothing.
            let net64 = (bits >> 64) as u64;
            let net48 = (bits >> 80) as u64;
            [
                Some((AddressKey::V6Net64(net64), cap)),
                Some((AddressKey::V6Net48(net48), cap.saturating_mul(PER_48_FACTOR))),
            ]
        }
    }
}

/// One connection of a peer, given back to each of its keys when dropped.
#[derive(Debug)]
struct AddressSlot {
    counts: Arc<PerAddress>,
    keys: [Option<AddressKey>; 2],
}

impl PerAddress {
    fn take(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<AddressSlot> {
        let keys = address_keys(ip, cap);
        let mut counts = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let full = keys
            .iter()
            .flatten()
            .any(|(key, cap)| counts.get(key).is_some_and(|open| open >= cap));
        if full {
            return None;
        }
        for (key, _) in keys.iter().flatten() {
            *counts.entry(*key).or_insert(0) += 1;
        }
        Some(AddressSlot {
            counts: Arc::clone(self),
            keys: keys.map(|key| key.map(|(key, _)| key)),
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for key in self.keys.iter().flatten() {
            if let Some(open) = counts.get_mut(key) {
                *open -= 1;
                if *open == 0 {
                    counts.remove(key);
                }
            }
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    /// Takes slots for `peers` in turn until one is refused; how many were had.
    fn taken_until_refused(
        counts: &Arc<PerAddress>,
        peers: &[IpAddr],
        cap: usize,
        held: &mut Vec<AddressSlot>,
    ) -> usize {
        let mut taken = 0;
        for peer in peers.iter().cycle().take(100 * cap) {
            match counts.take(*peer, cap) {
                Some(slot) => held.push(slot),
                None => break,
            }
            taken += 1;
        }
        taken
    }

    #[test]
    fn an_ipv6_64_shares_one_cap_whatever_addresses_it_uses() {
        let counts = Arc::new(PerAddress::default());
        let mut held = Vec::new();
        let one_64 = [
            ip("2001:db8:1:2::1"),
            ip("2001:db8:1:2::2"),
            ip("2001:db8:1:2:ffff:ffff:ffff:ffff"),
        ];
        assert_eq!(taken_until_refused(&counts, &one_64, 4, &mut held), 4);
        assert!(
            counts.take(ip("2001:db8:1:2::99"), 4).is_none(),
            "any address of the /64"
        );
        // Another /64 of the same /48 has its own.
        assert!(counts.take(ip("2001:db8:1:3::1"), 4).is_some());
        // Closing one gives its slot back to the /64.
        held.pop();
        assert!(counts.take(ip("2001:db8:1:2::7"), 4).is_some());
    }

    #[test]
    fn an_ipv6_48_holds_8_times_the_cap_over_its_64s() {
        let counts = Arc::new(PerAddress::default());
        let mut held = Vec::new();
        let many_64s: Vec<IpAddr> = (0..100).map(|n| ip(&format!("2001:db8:7:{n:x}::1"))).collect();
        assert_eq!(taken_until_refused(&counts, &many_64s, 4, &mut held), 32);
        assert!(
            counts.take(ip("2001:db8:7:ffff::1"), 4).is_none(),
            "a fresh /64 of the full /48"
        );
        assert!(counts.take(ip("2001:db8:8::1"), 4).is_some(), "another /48");
        drop(held);
        assert!(counts.0.lock().unwrap().is_empty(), "every key given back");
    }

    #[test]
    fn ipv4_counts_per_address_and_a_mapped_peer_is_its_ipv4_address() {
        let counts = Arc::new(PerAddress::default());
        let mut held = Vec::new();
        assert_eq!(taken_until_refused(&counts, &[ip("192.0.2.1")], 3, &mut held), 3);
        assert!(
            counts.take(ip("::ffff:192.0.2.1"), 3).is_none(),
            "the same peer, mapped"
        );
        assert!(counts.take(ip("192.0.2.2"), 3).is_some(), "its neighbour has its own");
        // A mapped peer is not counted in ::ffff:0:0/96's /64 with others.
        assert!(counts.take(ip("::ffff:192.0.2.3"), 3).is_some());
    }

    #[test]
    fn a_stall_is_a_second_or_half_a_short_write_timeout() {
        assert_eq!(stalled_after(Duration::from_secs(10)), Duration::from_secs(1));
        assert_eq!(stalled_after(Duration::from_millis(600)), Duration::from_millis(300));
    }
}
