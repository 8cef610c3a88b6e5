//! The community-board library shared by every Lambda function and the
//! single-process server. Its heart is [`hashing`]: password hashing whose
//! cost follows the value of what each password protects.

pub mod domain;
pub mod hashing;
pub mod http;
pub mod lambda;
pub mod server;
pub mod store;
pub mod telemetry;
