//! The HTTP layer shared by every Lambda function and the single-process
//! server: routing, input parsing, auth, throttling and the handlers.

pub mod auth;
pub mod client_ip;
pub mod error;
pub mod fields;
mod handlers;
pub mod input;
pub mod routes;
pub mod settings;
pub mod throttle;

use std::sync::Arc;

pub use error::ApiError;
pub use routes::{Function, Route, router, routes};

use crate::hashing::Hashing;
use crate::store::Store;
use auth::JwtKeys;
use throttle::ThrottlePolicy;

/// Request handling settings that are not secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    pub boards: Vec<String>,
    pub throttle: ThrottlePolicy,
    /// Server mode only: take the client IP from `X-Forwarded-For`.
    pub trust_proxy: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            boards: vec!["free".into(), "qna".into(), "notice".into()],
            throttle: ThrottlePolicy::default(),
            trust_proxy: false,
        }
    }
}

/// What every handler gets: built once per process (per cold start on Lambda).
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<dyn Store>,
    pub hashing: Hashing,
    pub jwt: Arc<JwtKeys>,
    pub config: Arc<HttpConfig>,
}

impl AppState {
    pub fn new(store: Arc<dyn Store>, hashing: Hashing, jwt: JwtKeys, config: HttpConfig) -> Self {
        AppState {
            store,
            hashing,
            jwt: Arc::new(jwt),
            config: Arc::new(config),
        }
    }
}
