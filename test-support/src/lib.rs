//! What the workspace's tests share, as a dev-dependency (never linked by a
//! deployed binary): [`router`], the router's state without a socket;
//! [`dynamo_local`], a DynamoDB Local process a test owns (to stop and
//! restart it); [`lambda`], a local Lambda Runtime API and a function
//! binary started against it.

pub mod dynamo_local;
pub mod lambda;
pub mod router;
