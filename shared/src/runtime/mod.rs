//! The composition root: the only module that reads the environment
//! (`std::env`; a layer test checks it). It builds each layer's settings
//! type from it ([`Config`]), wires the layers into one [`http::AppState`]
//! ([`build`]), and starts a Lambda function ([`lambda::run`]); the server
//! binary does the same through [`build`]. Everything below it is handed
//! what it needs.
//!
//! [`http::AppState`]: crate::http::AppState

mod app;
mod env;
#[cfg(feature = "hashing")]
mod hashing;
mod http;
#[cfg(feature = "lambda")]
pub mod lambda;
mod local_secrets;
#[cfg(feature = "s3-files")]
mod media;
#[cfg(all(feature = "lambda", feature = "s3-files", feature = "imaging"))]
mod media_lambda;
#[cfg(feature = "secrets")]
pub mod secrets;
mod settings;
mod store;
pub mod telemetry;
#[cfg(feature = "traces")]
pub mod traces;
mod wiring;

pub use env::Env;
#[cfg(feature = "hashing")]
pub use hashing::{compute, hashing_config, hashing_from};
pub use settings::{Config, ConfigError, Deployment, UNPEPPERED};
#[cfg(feature = "dynamo")]
pub use store::ca_bundle;
pub use wiring::build;
