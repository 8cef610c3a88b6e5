//! `spawn_app`: the real server app on port 0 with a fresh store per test
//! (its own SQLite file, or its own DynamoDB Local table), and a client.

use std::sync::{Arc, Mutex};

use reqwest::{Method, Response};
use serde_json::{Value, json};
use shared::http::AppState;
use shared::runtime::{Config, Deployment, Env};

use crate::secrets::Recorder;

/// Held by the tests that load DynamoDB Local heavily (thousands of writes)
/// and by those whose assertions depend on its answering quickly under a
/// flood: the one never runs beside the other.
pub(crate) static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub(crate) const PEPPER: &str = "e2e-test-pepper-0123456789abcdefghijklmnop";
pub(crate) const JWT_SECRET: &str = "e2e-test-jwt-secret-0123456789abcdefghijk";
/// Every test signup carries it: the admin names a test sets are
/// reserved for it (docs/API.md, Hardening), and other names ignore it.
pub(crate) const ADMIN_ENROLL_TOKEN: &str = "e2e-test-admin-enroll-token-0123456789";

#[derive(Debug, Clone, Copy)]
pub(crate) enum Backend {
    Sqlite,
    Dynamo,
}

pub(crate) struct TestApp {
    pub address: String,
    /// Every request and response, checked for leaked secrets when the app drops.
    pub recorder: Arc<Recorder>,
    /// Where the logs stood when the app started: its lines come after.
    pub logs_from: usize,
    pub client: reqwest::Client,
    pub state: AppState,
    /// Keeps the SQLite file and local secrets alive for the test.
    pub _data_dir: Arc<tempfile::TempDir>,
}

/// Every log line the apps of this test binary wrote (one global subscriber:
/// spawned tasks and the blocking pool log there too).
#[derive(Clone, Default)]
pub(crate) struct Captured(pub Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    pub(crate) fn text(&self) -> String {
        self.text_since(0)
    }

    pub(crate) fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// What was logged after the first `offset` bytes.
    pub(crate) fn text_since(&self, offset: usize) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()[offset..]).into_owned()
    }
}

pub(crate) async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, &[]).await
}

/// Settings are the defaults of a test deployment (cheap bcrypt:4 tiers,
/// fixed secrets) with `overrides` on top.
pub(crate) async fn spawn_app_with(backend: Backend, overrides: &[(&str, &str)]) -> TestApp {
    spawn_app_in(backend, overrides, Arc::new(tempfile::tempdir().unwrap()), None).await
}

/// The settings of a test deployment before a test's overrides: cheap
/// bcrypt:4 tiers and fixed secrets, for the in-process apps and for the
/// server binary run as a process of its own alike.
pub(crate) fn test_settings() -> Vec<(String, String)> {
    vec![
        ("PEPPER".into(), PEPPER.into()),
        ("JWT_SECRET".into(), JWT_SECRET.into()),
        ("ADMIN_ENROLL_TOKEN".into(), ADMIN_ENROLL_TOKEN.into()),
        ("MEMBER_TIER".into(), "bcrypt:4".into()),
        ("GUEST_TIER".into(), "bcrypt:4".into()),
        ("HASH_WORKERS".into(), "2".into()),
        // bcrypt:4 keeps the suite fast; it is under the floor, so say so.
        ("HASH_FLOOR_OVERRIDE".into(), "1".into()),
        // Every test client is 127.0.0.1: the write quotas are off unless a
        // test turns them on (the quota tests do, with small numbers).
        ("LIMIT_CREATES_ADDRESS".into(), "off".into()),
        ("LIMIT_CREATES_MEMBER".into(), "off".into()),
        ("LIMIT_SIGNUPS_ADDRESS".into(), "off".into()),
        // So are the v3 limits on right passwords (many tests log in often).
        ("LIMIT_LOGINS_USER".into(), "off".into()),
        ("LIMIT_PASSWORD_CHECKS_ADDRESS".into(), "off".into()),
        // And they all connect from 127.0.0.1: the per-address connection
        // cap is out of the way unless a test sets it.
        ("MAX_CONNECTIONS_PER_ADDRESS".into(), "100000".into()),
        // Every test client is one address with 5 free anonymous
        // writes: proof of work is off unless a test turns it on (the
        // proof-of-work tests do).
        ("POW".into(), "off".into()),
        // Staff routes need staff with TOTP by default: the moderation
        // tests act as staff without it unless a test turns it on (the
        // sign-in tests do).
        ("STAFF_REQUIRE_TOTP".into(), "false".into()),
    ]
}

pub(crate) async fn spawn_app_in(
    backend: Backend,
    overrides: &[(&str, &str)],
    data_dir: Arc<tempfile::TempDir>,
    table: Option<String>,
) -> TestApp {
    let table = table.unwrap_or_else(|| format!("e2e-{}", shared::domain::new_id().to_lowercase()));
    let mut vars = test_settings();
    if let Backend::Dynamo = backend {
        let endpoint = std::env::var("DYNAMODB_ENDPOINT").expect(
            "DYNAMODB_ENDPOINT is not set: run the suite with `bash scripts/test-all`, which starts DynamoDB Local",
        );
        vars.push(("TABLE_NAME".into(), table));
        vars.push(("DYNAMODB_ENDPOINT".into(), endpoint));
    }
    // An empty override removes the setting.
    for (k, v) in overrides {
        vars.retain(|(name, _)| name != k);
        if !v.is_empty() {
            vars.push(((*k).into(), (*v).into()));
        }
    }
    vars.retain(|(name, _)| name != "DATA_DIR");
    vars.push(("DATA_DIR".into(), data_dir.path().display().to_string()));
    let lookup = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let env = Env::new(lookup);
    let config = Config::from(Deployment::Server, &env).unwrap();
    let server = server::ServerSettings::from_env(&env).unwrap();
    let (cors, mut connections) = (server.cors_origins, server.connections);
    connections.exempt = config.http.trusted_proxies.clone();
    // From before the build: it logs too (unclaimed admin names).
    let logs_from = logs().len();
    let state = shared::runtime::build(config).await.unwrap();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let recorder = Arc::new(Recorder::default());
    let watcher = Arc::clone(&recorder);
    let app = server::app(state.clone(), &cors).layer(axum::middleware::from_fn(move |request, next| {
        Arc::clone(&watcher).watch(request, next)
    }));
    tokio::spawn(async move {
        server::serve(listener, app, connections, std::future::pending())
            .await
            .unwrap();
    });
    TestApp {
        address,
        recorder,
        logs_from,
        client: reqwest::Client::new(),
        state,
        _data_dir: data_dir,
    }
}

pub(crate) fn logs() -> &'static Captured {
    static LOGS: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        // As the deployments log with traces off: the spans of the `traces`
        // target are never created (docs/operations.md, Traces). With them
        // on, every captured line carried its span list, and the suite's log
        // text (kept for the secrets scan) grew severalfold.
        use tracing_subscriber::Layer as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        let filter = tracing_subscriber::filter::Targets::new()
            .with_default(tracing::Level::DEBUG)
            .with_target(
                shared::runtime::telemetry::SPANS,
                tracing_subscriber::filter::LevelFilter::OFF,
            );
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .json()
                .with_writer(move || writer.clone())
                .with_filter(filter),
        );
        tracing::subscriber::set_global_default(subscriber).expect("one global subscriber");
        captured
    })
}

impl Drop for TestApp {
    /// Every test that spawned an app ends with the secrets check of what it saw.
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let logs = logs().text_since(self.logs_from);
            self.recorder.assert_nothing_leaked(&logs, &[PEPPER, JWT_SECRET]);
        }
    }
}

impl TestApp {
    pub(crate) async fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Response {
        let mut request = self.client.request(method, format!("{}{path}", self.address));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.expect("request failed")
    }

    /// A request forwarded by a trusted proxy for `address` (the app must
    /// trust 127.0.0.1 in `TRUSTED_PROXIES`): `X-Forwarded-For` carries a
    /// spoofed left-most entry too, which must never count.
    pub(crate) async fn request_from(
        &self,
        address: &str,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Response {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.address))
            .header("x-forwarded-for", format!("6.6.6.{}, {address}", rand_octet()));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.expect("request failed")
    }

    pub(crate) async fn login_from(&self, address: &str, username: &str, password: &str) -> Response {
        let body = json!({"username": username, "password": password});
        self.request_from(address, Method::POST, "/sessions", None, Some(body))
            .await
    }

    /// Hashes and verifies run by this app so far.
    pub(crate) fn hashes(&self) -> u64 {
        self.state.app.hashing().unwrap().runs()
    }

    pub(crate) async fn raw(&self, method: Method, path: &str, body: Vec<u8>) -> Response {
        self.client
            .request(method, format!("{}{path}", self.address))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request failed")
    }

    pub(crate) async fn get(&self, path: &str) -> Response {
        self.request(Method::GET, path, None, None).await
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> Response {
        self.request(Method::POST, path, None, Some(body)).await
    }

    pub(crate) async fn signup(&self, username: &str, password: &str) -> Response {
        self.client
            .post(format!("{}/members", self.address))
            .header("admin-enroll-token", ADMIN_ENROLL_TOKEN)
            .json(&json!({"username": username, "password": password, "nickname": format!("{username}!")}))
            .send()
            .await
            .expect("request failed")
    }

    pub(crate) async fn login(&self, username: &str, password: &str) -> Response {
        self.post("/sessions", json!({"username": username, "password": password}))
            .await
    }

    /// Signs up and logs in; returns the bearer token.
    pub(crate) async fn member_token(&self, username: &str) -> String {
        let signup = self.signup(username, "password-123").await;
        let status = signup.status();
        assert_eq!(
            status,
            201,
            "signing up {username}: {}",
            signup.text().await.unwrap_or_default()
        );
        let login = self.login(username, "password-123").await;
        let status = login.status();
        let answer = login.text().await.unwrap_or_default();
        assert_eq!(status, 200, "logging in {username}: {answer}");
        let session: Value = serde_json::from_str(&answer).unwrap();
        session["token"].as_str().expect("a login answers a token").to_owned()
    }

    /// A member post on `free`; returns its id.
    pub(crate) async fn member_post(&self, token: &str) -> String {
        let response = self
            .request(
                Method::POST,
                "/boards/free/posts",
                Some(token),
                Some(json!({"title": "t", "body": "b"})),
            )
            .await;
        assert_eq!(response.status(), 201);
        body(response).await["id"].as_str().unwrap().to_owned()
    }

    /// A guest post on `free` with `password`; returns its id.
    pub(crate) async fn guest_post(&self, password: &str) -> String {
        let response = self
            .post(
                "/boards/free/posts/guest",
                json!({"nickname": "guest", "password": password, "title": "guest title", "body": "guest body"}),
            )
            .await;
        assert_eq!(response.status(), 201);
        body(response).await["id"].as_str().unwrap().to_owned()
    }
}

/// A different spoofed left-most entry each time.
fn rand_octet() -> u8 {
    use std::sync::atomic::{AtomicU8, Ordering};
    static NEXT: AtomicU8 = AtomicU8::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

pub(crate) async fn body(response: Response) -> Value {
    response.json().await.expect("a JSON body")
}

/// Asserts an docs/API.md error: status, code, and a message that contains `mentions`.
pub(crate) async fn assert_error(response: Response, status: u16, code: &str, mentions: &str) {
    assert_eq!(response.status(), status, "status for expected {code}");
    let value = body(response).await;
    assert_eq!(value["error"]["code"], code, "{value}");
    let message = value["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(mentions),
        "message {message:?} should mention {mentions:?}"
    );
}
