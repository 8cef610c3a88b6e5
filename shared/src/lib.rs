//! The community-board library shared by every Lambda function and the
//! single-process server (docs/DESIGN.md). Its heart is [`hashing`]: password
//! hashing whose cost follows the value of what each password protects.
//!
//! A request flows `http` (typed extractors) -> `app` (one function per use
//! case) -> `store` ports (typed keys) -> an adapter (DynamoDB or SQLite);
//! `config` and `wiring` assemble a process once.

pub mod app;
#[cfg(feature = "dynamo")]
pub mod aws;
pub mod config;
pub mod domain;
pub mod error;
pub mod function;
pub mod hashing;
pub mod http;
#[cfg(feature = "lambda")]
pub mod lambda;
pub mod private_files;
#[cfg(feature = "secrets")]
pub mod secrets;
pub mod store;
pub mod telemetry;
pub mod wiring;
