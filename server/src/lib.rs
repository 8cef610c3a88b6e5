//! The single-process server (VM mode and the local default; docs/DESIGN.md,
//! Deployments): every route on
//! one port, with request ids, JSON access logs, CORS and graceful shutdown.

mod connections;
mod settings;
mod web;

pub use settings::{ConnectionLimits, ServerSettings};

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
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

use connections::{InRequest, Registry};
use shared::http::conventions::{CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_METHODS, request_id};
use shared::http::{AppState, Function, router};

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
    // (v3) The reference web client at `/` and `/assets/*` (server/src/web.rs).
    let mut app = router(state, &Function::ALL)
        .merge(web::routes())
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
/// connection closed); each request has the request timeout. At most
/// `max_connections` are served at once: at the cap, the connection idle
/// longest between requests is closed to admit the next one (see
/// `connections` for which may be), and while none is idle the next ones
/// wait (the accepted one in the server, the rest in the listen backlog).
/// A peer address holds at most `per_address` of them (the exempt proxies
/// any number), a connection beyond that is closed when accepted.
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
    // Each connection holds a receiver: `closed()` is every connection gone.
    let (stopping, _) = watch::channel(false);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_header_size(limits.max_header_bytes)
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
                let asked_one_to_close = registry.close_longest_idle();
                tokio::select! {
                    slot = Arc::clone(&slots).acquire_owned() => break slot.expect("the semaphore is never closed"),
                    // Nothing idle to close yet: look again when something is.
                    () = went_idle, if !asked_one_to_close => {}
                    () = &mut shutdown => break 'serve,
                }
            },
        };
        let open = registry.open();
        let this_connection = Arc::clone(&open);
        let service = app
            .clone()
            .map_request(move |mut request: http::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                request
            })
            .map_future(move |answer| {
                let request = this_connection.request_started();
                async move {
                    let response: Response = answer.await?;
                    Ok::<_, Infallible>(response.map(|body| EndsRequest {
                        body,
                        _request: request,
                    }))
                }
            });
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let mut stop = stopping.subscribe();
        tokio::spawn(async move {
            tokio::pin!(connection);
            let closed = tokio::select! {
                closed = connection.as_mut() => closed,
                () = async {
                    tokio::select! {
                        () = open.close_requested() => {}
                        _ = stop.wait_for(|stop| *stop) => {}
                    }
                } => {
                    // Idle: closed now; in a request: closed once it is answered.
                    connection.as_mut().graceful_shutdown();
                    connection.await
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

/// Open connections per peer address.
#[derive(Debug, Default)]
struct PerAddress(std::sync::Mutex<HashMap<IpAddr, usize>>);

/// One connection of `ip`, given back when dropped.
#[derive(Debug)]
struct AddressSlot {
    counts: Arc<PerAddress>,
    ip: IpAddr,
}

impl PerAddress {
    fn take(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<AddressSlot> {
        let mut counts = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let open = counts.entry(ip).or_insert(0);
        if *open >= cap {
            return None;
        }
        *open += 1;
        Some(AddressSlot {
            counts: Arc::clone(self),
            ip,
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(open) = counts.get_mut(&self.ip) {
            *open -= 1;
            if *open == 0 {
                counts.remove(&self.ip);
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
