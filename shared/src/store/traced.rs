//! A span per store call (docs/operations.md, Traces): [`TracedStore`]
//! wraps either adapter and names each port method it passes through
//! (its forwarders are generated from the port list, `ports!`), with the
//! store's system and, on DynamoDB, the requests the call sent and the
//! capacity units they consumed ([`count_request`], called by the adapter
//! for each answer). The span is on the `traces` target: with traces off it
//! is never created and a call costs one more indirection.

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;

use tracing::Instrument as _;
use tracing::field::Empty;

use super::idempotency::Claimed;
use super::*;
use crate::domain::media::{MediaOutcome, MediaOwner, MediaRecord, NewMedia};
use crate::domain::{
    BanId, BanPage, BanRecord, BanSubject, BoardSettings, BoardSlug, Category, Comment, CommentId, CommentKey,
    CommentPage, Guard, LogEntry, LogPage, Member, MemberCredentials, MemberId, Owned, Page, PageLimit, PasswordHash,
    PendingDeletion, Post, PostDetail, PostId, PostKey, Report, ReportId, ReportPage, Reported, Revisions,
    SessionState, Tally, TotpStart, Username, Vote, VoteChange, Window, Writer, WriterKey,
};
use crate::domain::{BlockEntry, Blocked, Blocking, MediaId, NewNotification, NotificationPage, TextRef};

tokio::task_local! {
    /// What the DynamoDB requests of the call in progress consumed.
    static CONSUMED: Cell<Consumed>;
}

#[derive(Debug, Default, Clone, Copy)]
struct Consumed {
    requests: u32,
    read: f64,
    write: f64,
}

/// Whether a traced store call is in progress on this task (so the adapter
/// sums a request's units only when a span will carry them).
pub(crate) fn counting() -> bool {
    CONSUMED.try_with(|_| ()).is_ok()
}

/// Adds one DynamoDB request's units to the store call it serves, if traced.
pub(crate) fn count_request(read: f64, write: f64) {
    let _ = CONSUMED.try_with(|c| {
        let mut consumed = c.get();
        consumed.requests += 1;
        consumed.read += read;
        consumed.write += write;
        c.set(consumed);
    });
}

/// `inner`, each call in a span.
pub struct TracedStore {
    inner: Arc<dyn Store>,
    /// OpenTelemetry's `db.system.name`: `sqlite` or `aws.dynamodb`.
    system: &'static str,
    /// The table (DynamoDB) or database file (SQLite).
    namespace: String,
}

impl std::fmt::Debug for TracedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TracedStore")
            .field("system", &self.system)
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl TracedStore {
    pub fn new(inner: Arc<dyn Store>, system: &'static str, namespace: String) -> Self {
        TracedStore {
            inner,
            system,
            namespace,
        }
    }

    async fn call<T>(&self, operation: &'static str, call: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
        let span = tracing::info_span!(
            target: "traces",
            "store",
            otel.name = %format_args!("store {operation}"),
            otel.kind = "client",
            otel.status_code = Empty,
            db.system.name = self.system,
            db.operation.name = operation,
            db.namespace = %self.namespace,
            aws.dynamodb.requests = Empty,
            aws.dynamodb.consumed_read_units = Empty,
            aws.dynamodb.consumed_write_units = Empty,
            error.type = Empty,
        );
        if span.is_disabled() {
            return call.await;
        }
        let (result, consumed) = CONSUMED
            .scope(Cell::new(Consumed::default()), async {
                let result = call.await;
                (result, CONSUMED.with(Cell::get))
            })
            .instrument(span.clone())
            .await;
        if consumed.requests > 0 {
            span.record("aws.dynamodb.requests", consumed.requests);
            span.record("aws.dynamodb.consumed_read_units", consumed.read);
            span.record("aws.dynamodb.consumed_write_units", consumed.write);
        }
        if let Err(e) = &result {
            span.record("error.type", e.kind());
            if e.is_failure() {
                span.record("otel.status_code", "error");
            }
        }
        result
    }
}

/// Implements each port of `ports!` on [`TracedStore`]: every method
/// calls `inner`'s in a span named after it.
macro_rules! traced_ports {
    ($(
        $(#[$port_doc:meta])*
        pub trait $port:ident {
            $(
                $(#[$method_doc:meta])*
                async fn $method:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;
            )*
        }
    )*) => {
        $(
            #[async_trait]
            impl $port for TracedStore {
                $(
                    async fn $method(&self $(, $arg: $ty)*) -> $ret {
                        self.call(stringify!($method), self.inner.$method($($arg),*)).await
                    }
                )*
            }
        )*
    };
}

ports!(traced_ports);

impl Freshness for TracedStore {
    fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }
}
