//! The community-board library shared by every Lambda function and the
//! single-process server (docs/DESIGN.md). Its heart is [`hashing`]: password
//! hashing whose cost follows the value of what each password protects.
//!
//! The layers, each importing only those listed before it (checked by
//! `tests/layers.rs`):
//! - [`error`], [`function`], [`private_files`]: the one error type, the
//!   function names, owner-only files;
//! - [`domain`]: parsed, typed values; [`hashing`]: the model, a crate of
//!   its own that imports nothing of the board (re-exported here);
//! - [`store`]: the ports, and their adapters (DynamoDB, SQLite) with
//!   `aws` for the SDK clients;
//! - [`app`]: one function per use case, the store's only caller;
//! - [`http`]: typed extractors, handlers, the route table; `stream`:
//!   the `purge` function's DynamoDB stream records;
//! - [`runtime`]: the composition root, which alone reads the environment.

pub mod app;
#[cfg(feature = "dynamo")]
pub mod aws;
pub mod domain;
pub mod error;
pub mod function;
pub use hashing;
pub mod http;
pub mod private_files;
pub mod runtime;
/// Upload grants on AWS: presigned S3 POST policies; imports nothing of the board.
#[cfg(feature = "s3")]
pub mod s3_post;
pub mod store;
#[cfg(feature = "stream")]
pub mod stream;
