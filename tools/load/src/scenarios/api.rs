//! The load client: each call sent, timed and recorded with the statuses it expects.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;

use crate::metrics::Recorder;

#[derive(Clone)]
pub(crate) struct Api {
    pub base: String,
    pub http: reqwest::Client,
    pub recorder: Arc<Recorder>,
    /// Sent as `X-Forwarded-For` when a call names no address of its own.
    pub client_ip: Option<String>,
}

pub(crate) struct Call<'a> {
    pub endpoint: &'static str,
    pub method: Method,
    pub path: String,
    pub token: Option<&'a str>,
    pub body: Option<Value>,
    pub forwarded_for: Option<String>,
    pub expected: &'static [u16],
}

impl Api {
    pub(crate) fn new(base: &str, recorder: Arc<Recorder>) -> Self {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(512)
            .timeout(Duration::from_secs(60))
            .build()
            .expect("an HTTP client");
        Api {
            base: base.trim_end_matches('/').to_owned(),
            http,
            recorder,
            client_ip: None,
        }
    }

    /// This client as user `u` behind an address of its own (10.x.y.z).
    pub(crate) fn as_user_ip(&self, u: usize) -> Self {
        Api {
            client_ip: Some(format!("10.{}.{}.{}", (u >> 16) & 255, (u >> 8) & 255, u & 255)),
            ..self.clone()
        }
    }

    /// Sends the request and records it; returns status and JSON body when it answered.
    pub(crate) async fn call(&self, call: Call<'_>) -> Option<(u16, Value)> {
        self.call_with_headers(call, &[]).await
    }

    /// [`Api::call`] with more request headers (`X-Pow`).
    pub(crate) async fn call_with_headers(&self, call: Call<'_>, headers: &[(&str, &str)]) -> Option<(u16, Value)> {
        let mut request = self.http.request(call.method, format!("{}{}", self.base, call.path));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(token) = call.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = &call.body {
            request = request.json(body);
        }
        if let Some(ip) = call.forwarded_for.or_else(|| self.client_ip.clone()) {
            request = request.header("x-forwarded-for", ip);
        }
        let started = Instant::now();
        let result = request.send().await;
        let (status, body) = match result {
            Ok(response) => {
                let status = response.status().as_u16();
                let body = response.json::<Value>().await.unwrap_or(Value::Null);
                (Some(status), body)
            }
            Err(_) => (None, Value::Null),
        };
        let ok = status.is_some_and(|s| call.expected.contains(&s));
        self.recorder.record(call.endpoint, started.elapsed(), status, ok);
        status.map(|s| (s, body))
    }
}

pub(super) const OK: &[u16] = &[200];
pub(super) const CREATED: &[u16] = &[201];
