//! Watches every request and response of a test app: the passwords and
//! tokens clients sent or received, and what the server answered. When the
//! app is dropped at the end of its test, no response and no log line may
//! hold a password, a password hash, the pepper or the token secret, or
//! a client address a request came from (docs/API.md, Guest tag).

use std::sync::{Arc, Mutex};

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

/// What the stored hashes of every tier start with.
const HASH_MARKERS: [&str; 5] = ["$2b$", "$2y$", "$2a$", "$argon2", "$hs384$"];

#[derive(Default)]
pub(crate) struct Recorder {
    passwords: Mutex<Vec<String>>,
    tokens: Mutex<Vec<String>>,
    responses: Mutex<Vec<String>>,
    /// The client addresses requests named (`X-Forwarded-For`, right-most).
    addresses: Mutex<Vec<String>>,
}

/// How an address could be shown: as sent, and for IPv6 as its /64 key.
fn forms(address: std::net::IpAddr) -> Vec<String> {
    let mut forms = vec![address.to_string()];
    if let std::net::IpAddr::V6(v6) = address {
        let net = ipnet::Ipv6Net::new(v6, 64).unwrap().trunc();
        forms.push(net.to_string());
    }
    forms
}

impl Recorder {
    /// Axum middleware: records the request's passwords and bearer token and
    /// the response's headers and body, leaving both unchanged.
    pub(crate) async fn watch(self: Arc<Self>, request: Request, next: Next) -> Response {
        if let Some(token) = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        {
            self.tokens.lock().unwrap().push(token.to_owned());
        }
        if let Some(client) = request
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|v| v.trim().parse::<std::net::IpAddr>().ok())
        {
            self.addresses.lock().unwrap().extend(forms(client));
        }
        // Only JSON bodies that announce a small length are read here: the
        // size limits are the server's to enforce, on what it is really
        // sent, and an upload's body is answered before it is read.
        let json = request
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let small = json
            && request
                .headers()
                .get("content-length")
                .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
                .is_some_and(|n| n <= 64 * 1024);
        let request = if small {
            let (parts, body) = request.into_parts();
            let bytes = to_bytes(body, 64 * 1024).await.unwrap_or_default();
            if let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&bytes)
                && let Some(Value::String(password)) = fields.get("password")
            {
                self.passwords.lock().unwrap().push(password.clone());
            }
            Request::from_parts(parts, Body::from(bytes))
        } else {
            request
        };

        let response = next.run(request).await;
        let (parts, body) = response.into_parts();
        let bytes = to_bytes(body, usize::MAX).await.unwrap_or_default();
        let mut seen = String::from_utf8_lossy(&bytes).into_owned();
        for (name, value) in &parts.headers {
            seen.push_str(&format!("\n{name}: {}", String::from_utf8_lossy(value.as_bytes())));
        }
        if let Ok(session) = serde_json::from_slice::<Value>(&bytes)
            && let Some(token) = session["token"].as_str()
        {
            self.tokens.lock().unwrap().push(token.to_owned());
        }
        self.responses.lock().unwrap().push(seen);
        Response::from_parts(parts, Body::from(bytes))
    }

    /// Panics naming the kind of secret found (never the secret itself).
    pub(crate) fn assert_nothing_leaked(&self, logs: &str, fixed_secrets: &[&str]) {
        // Short passwords, and filler like "xxxx...", could match ordinary
        // text (another test's request path) by chance.
        let passwords: Vec<String> = self
            .passwords
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.chars().count() >= 6 && p.chars().any(|c| !p.starts_with(c)))
            .cloned()
            .collect();
        let tokens = self.tokens.lock().unwrap().clone();
        let responses = self.responses.lock().unwrap();
        for (i, response) in responses.iter().enumerate() {
            for password in &passwords {
                assert!(!response.contains(password.as_str()), "response {i} holds a password");
            }
            for marker in HASH_MARKERS {
                assert!(
                    !response.contains(marker),
                    "response {i} holds a password hash ({marker})"
                );
            }
            for secret in fixed_secrets {
                assert!(
                    !response.contains(secret),
                    "response {i} holds the pepper or token secret"
                );
            }
        }
        for password in &passwords {
            assert!(!logs.contains(password.as_str()), "the logs hold a password");
        }
        // One pass over the logs, not one per token: a flood test sees
        // thousands of tokens and megabytes of logs. A JWT starts with
        // `eyJ` (base64url of `{"`): at each `eyJ` in the logs, the text of
        // each token length there is looked up among the tokens.
        let (jwts, others): (Vec<&String>, Vec<&String>) = tokens
            .iter()
            .filter(|t| t.len() >= 20)
            .partition(|t| t.starts_with("eyJ"));
        for token in others {
            assert!(!logs.contains(token.as_str()), "the logs hold a bearer token");
        }
        let lengths: std::collections::BTreeSet<usize> = jwts.iter().map(|t| t.len()).collect();
        let jwts: std::collections::HashSet<&str> = jwts.into_iter().map(String::as_str).collect();
        for (at, _) in logs.match_indices("eyJ") {
            for len in &lengths {
                if let Some(text) = logs.get(at..at + len) {
                    assert!(!jwts.contains(text), "the logs hold a bearer token");
                }
            }
        }
        for marker in HASH_MARKERS {
            assert!(!logs.contains(marker), "the logs hold a password hash ({marker})");
        }
        for secret in fixed_secrets {
            assert!(!logs.contains(secret), "the logs hold the pepper or token secret");
        }
        let addresses = self.addresses.lock().unwrap();
        for address in addresses.iter() {
            for (i, response) in responses.iter().enumerate() {
                assert!(
                    !response.contains(address.as_str()),
                    "response {i} holds a client address"
                );
            }
            assert!(!logs.contains(address.as_str()), "the logs hold a client address");
        }
    }

    pub(crate) fn responses_seen(&self) -> usize {
        self.responses.lock().unwrap().len()
    }
}

/// The check itself can fail: a route that echoes the password it was sent
/// and a hash is caught.
#[tokio::test]
async fn the_secrets_check_catches_an_echoed_password_and_a_hash() {
    use tower::ServiceExt;
    let recorder = Arc::new(Recorder::default());
    let watcher = Arc::clone(&recorder);
    let leaky = axum::Router::new()
        .route(
            "/leak",
            axum::routing::post(|body: String| async move { format!("{body} $2b$04$abc") }),
        )
        .layer(axum::middleware::from_fn(move |request, next| {
            Arc::clone(&watcher).watch(request, next)
        }));
    let body = r#"{"password": "hunter2-secret"}"#;
    let request = http::Request::post("/leak")
        .header("content-type", "application/json")
        .header("content-length", body.len())
        .body(Body::from(body))
        .unwrap();
    leaky.oneshot(request).await.unwrap();
    assert_eq!(recorder.responses_seen(), 1);
    let caught = std::panic::catch_unwind(|| recorder.assert_nothing_leaked("", &[]));
    let message = *caught.unwrap_err().downcast::<String>().unwrap();
    assert_eq!(message, "response 0 holds a password");
}

/// The log check finds a bearer token it saw wherever the logs hold it, and
/// only that token (it looks tokens up in one pass over the logs).
#[tokio::test]
async fn the_secrets_check_catches_a_bearer_token_in_the_logs() {
    use tower::ServiceExt;
    let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsZWFrIn0.c2lnbmF0dXJlLW9mLWEtdGVzdA";
    // A recorder that saw one request with the token (a fresh one per
    // check: a failed check leaves its recorder's locks poisoned).
    let saw_token = || async {
        let recorder = Arc::new(Recorder::default());
        let watcher = Arc::clone(&recorder);
        let app = axum::Router::new()
            .route("/me", axum::routing::get(|| async { "ok" }))
            .layer(axum::middleware::from_fn(move |request, next| {
                Arc::clone(&watcher).watch(request, next)
            }));
        let request = http::Request::get("/me")
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap();
        app.oneshot(request).await.unwrap();
        recorder
    };
    let other = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvdGhlciJ9.c2lnbmF0dXJlLW9mLWEtdGVzdA";
    saw_token()
        .await
        .assert_nothing_leaked(&format!(r#"{{"msg":"request","auth":"{other}"}}"#), &[]);
    for logs in [
        format!(r#"{{"msg":"request","auth":"Bearer {token}"}}"#),
        format!("eyJ{token}tail"),
    ] {
        let recorder = saw_token().await;
        let caught = std::panic::catch_unwind(|| recorder.assert_nothing_leaked(&logs, &[]));
        let message = *caught.unwrap_err().downcast::<&str>().unwrap();
        assert_eq!(message, "the logs hold a bearer token", "{logs}");
    }
}
