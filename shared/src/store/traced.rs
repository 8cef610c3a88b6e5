//! (v3) A span per store call (docs/operations.md, Traces): [`TracedStore`]
//! wraps either adapter and names each port method it passes through, with
//! the store's system and, on DynamoDB, the requests the call sent and the
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

#[async_trait]
impl Members for TracedStore {
    async fn create_member(
        &self,
        member: &Member,
        password_hash: &PasswordHash,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        self.call("create_member", self.inner.create_member(member, password_hash, done))
            .await
    }
    async fn member_credentials(&self, username: &Username) -> StoreResult<Option<MemberCredentials>> {
        self.call("member_credentials", self.inner.member_credentials(username))
            .await
    }
    async fn username_taken(&self, username: &Username) -> StoreResult<bool> {
        self.call("username_taken", self.inner.username_taken(username)).await
    }
    async fn member_by_id(&self, id: &MemberId) -> StoreResult<Option<Member>> {
        self.call("member_by_id", self.inner.member_by_id(id)).await
    }
    async fn replace_password_hash(
        &self,
        username: &Username,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        self.call(
            "replace_password_hash",
            self.inner.replace_password_hash(username, old, new),
        )
        .await
    }
}

#[async_trait]
impl Posts for TracedStore {
    async fn create_post(
        &self,
        post: &Post,
        writer: &Writer,
        guest_password_hash: Option<&PasswordHash>,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        self.call(
            "create_post",
            self.inner.create_post(post, writer, guest_password_hash, done),
        )
        .await
    }
    async fn post_detail(&self, key: &PostKey) -> StoreResult<Option<PostDetail>> {
        self.call("post_detail", self.inner.post_detail(key)).await
    }
    async fn list_comments(
        &self,
        key: &PostKey,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Option<CommentPage>> {
        self.call("list_comments", self.inner.list_comments(key, limit, cursor))
            .await
    }
    async fn view_post(&self, key: &PostKey) -> StoreResult<Option<PostDetail>> {
        self.call("view_post", self.inner.view_post(key)).await
    }
    async fn list_posts(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        self.call("list_posts", self.inner.list_posts(board, limit, cursor))
            .await
    }
    async fn post_guard(&self, key: &PostKey) -> StoreResult<Option<Guard>> {
        self.call("post_guard", self.inner.post_guard(key)).await
    }
    async fn update_post(&self, key: &PostKey, edit: &PostEdit) -> StoreResult<Edited> {
        self.call("update_post", self.inner.update_post(key, edit)).await
    }
    async fn delete_post(&self, key: &PostKey) -> StoreResult<bool> {
        self.call("delete_post", self.inner.delete_post(key)).await
    }
    async fn replace_post_guest_hash(
        &self,
        key: &PostKey,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        self.call(
            "replace_post_guest_hash",
            self.inner.replace_post_guest_hash(key, old, new),
        )
        .await
    }
}

#[async_trait]
impl Comments for TracedStore {
    async fn create_comment(
        &self,
        board: &BoardSlug,
        comment: &Comment,
        writer: &Writer,
        guest_password_hash: Option<&PasswordHash>,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        self.call(
            "create_comment",
            self.inner
                .create_comment(board, comment, writer, guest_password_hash, done),
        )
        .await
    }
    async fn comment_guard(&self, key: &CommentKey) -> StoreResult<Option<Guard>> {
        self.call("comment_guard", self.inner.comment_guard(key)).await
    }
    async fn find_comment(&self, board: &BoardSlug, comment: &CommentId) -> StoreResult<Option<CommentKey>> {
        self.call("find_comment", self.inner.find_comment(board, comment)).await
    }
    async fn delete_comment(&self, key: &CommentKey) -> StoreResult<bool> {
        self.call("delete_comment", self.inner.delete_comment(key)).await
    }
    async fn replace_comment_guest_hash(
        &self,
        key: &CommentKey,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        self.call(
            "replace_comment_guest_hash",
            self.inner.replace_comment_guest_hash(key, old, new),
        )
        .await
    }
}

#[async_trait]
impl Likes for TracedStore {
    async fn like(&self, key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.call("like", self.inner.like(key, member)).await
    }
    async fn unlike(&self, key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.call("unlike", self.inner.unlike(key, member)).await
    }
    async fn has_liked(&self, post: &PostId, member: &MemberId) -> StoreResult<bool> {
        self.call("has_liked", self.inner.has_liked(post, member)).await
    }
}

#[async_trait]
impl Moderation for TracedStore {
    async fn is_moderator(&self, board: &BoardSlug, member: &MemberId) -> StoreResult<bool> {
        self.call("is_moderator", self.inner.is_moderator(board, member)).await
    }
    async fn moderators(&self, board: &BoardSlug) -> StoreResult<Vec<Member>> {
        self.call("moderators", self.inner.moderators(board)).await
    }
    async fn add_moderator(&self, board: &BoardSlug, member: &Member, entry: &LogEntry) -> StoreResult<bool> {
        self.call("add_moderator", self.inner.add_moderator(board, member, entry))
            .await
    }
    async fn remove_moderator(&self, board: &BoardSlug, member: &MemberId, entry: &LogEntry) -> StoreResult<bool> {
        self.call("remove_moderator", self.inner.remove_moderator(board, member, entry))
            .await
    }
    async fn active_ban(&self, board: &BoardSlug, subjects: &[BanSubject], now: i64) -> StoreResult<Option<BanRecord>> {
        self.call("active_ban", self.inner.active_ban(board, subjects, now))
            .await
    }
    async fn ban(&self, ban: &BanRecord, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<()> {
        self.call("ban", self.inner.ban(ban, entry, done)).await
    }
    async fn ban_by_id(&self, board: &BoardSlug, id: &BanId) -> StoreResult<Option<BanRecord>> {
        self.call("ban_by_id", self.inner.ban_by_id(board, id)).await
    }
    async fn unban(&self, ban: &BanRecord, entry: &LogEntry) -> StoreResult<bool> {
        self.call("unban", self.inner.unban(ban, entry)).await
    }
    async fn list_bans(
        &self,
        board: &BoardSlug,
        limit: PageLimit,
        cursor: Option<&str>,
        now: i64,
    ) -> StoreResult<BanPage> {
        self.call("list_bans", self.inner.list_bans(board, limit, cursor, now))
            .await
    }
    async fn remove_post(&self, key: &PostKey, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<bool> {
        self.call("remove_post", self.inner.remove_post(key, entry, done)).await
    }
    async fn remove_comment(&self, key: &CommentKey, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<bool> {
        self.call("remove_comment", self.inner.remove_comment(key, entry, done))
            .await
    }
    async fn report(
        &self,
        board: &BoardSlug,
        report: &Report,
        reporter: &str,
        claim: Option<&Claim>,
    ) -> StoreResult<Reported> {
        self.call("report", self.inner.report(board, report, reporter, claim))
            .await
    }
    async fn list_reports(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<ReportPage> {
        self.call("list_reports", self.inner.list_reports(board, limit, cursor))
            .await
    }
    async fn resolve_report(&self, board: &BoardSlug, id: &ReportId, done: Option<&Completion>) -> StoreResult<bool> {
        self.call("resolve_report", self.inner.resolve_report(board, id, done))
            .await
    }
    async fn modlog(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<LogPage> {
        self.call("modlog", self.inner.modlog(board, limit, cursor)).await
    }
}

#[async_trait]
impl Accounts for TracedStore {
    async fn session_epoch(&self, id: &MemberId, username: &Username) -> StoreResult<Option<u64>> {
        self.call("session_epoch", self.inner.session_epoch(id, username)).await
    }
    async fn end_sessions(&self, id: &MemberId, username: &Username) -> StoreResult<bool> {
        self.call("end_sessions", self.inner.end_sessions(id, username)).await
    }
    async fn change_password(&self, id: &MemberId, username: &Username, new: &PasswordHash) -> StoreResult<bool> {
        self.call("change_password", self.inner.change_password(id, username, new))
            .await
    }
    async fn close_account(
        &self,
        id: &MemberId,
        username: &Username,
        delete_content: bool,
        moderates: &[BoardSlug],
    ) -> StoreResult<bool> {
        self.call(
            "close_account",
            self.inner.close_account(id, username, delete_content, moderates),
        )
        .await
    }
    async fn pending_deletions(&self, limit: usize) -> StoreResult<Vec<PendingDeletion>> {
        self.call("pending_deletions", self.inner.pending_deletions(limit))
            .await
    }
    async fn owned(&self, member: &MemberId, likes: bool, limit: usize) -> StoreResult<Vec<Owned>> {
        self.call("owned", self.inner.owned(member, likes, limit)).await
    }
    async fn disown(&self, member: &MemberId, items: &[Owned]) -> StoreResult<()> {
        self.call("disown", self.inner.disown(member, items)).await
    }
    async fn finish_deletion(&self, member: &MemberId) -> StoreResult<()> {
        self.call("finish_deletion", self.inner.finish_deletion(member)).await
    }
    async fn moderated_boards(&self, member: &MemberId, boards: &[BoardSlug]) -> StoreResult<Vec<BoardSlug>> {
        self.call("moderated_boards", self.inner.moderated_boards(member, boards))
            .await
    }
    async fn member_posts(&self, member: &MemberId, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        self.call("member_posts", self.inner.member_posts(member, limit, cursor))
            .await
    }
    async fn member_comments(
        &self,
        member: &MemberId,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<CommentPage> {
        self.call("member_comments", self.inner.member_comments(member, limit, cursor))
            .await
    }
}

#[async_trait]
impl Attempts for TracedStore {
    async fn record_failure(&self, key: &AttemptKey, window: Window) -> StoreResult<u64> {
        self.call("record_failure", self.inner.record_failure(key, window))
            .await
    }
    async fn forgive_failure(&self, key: &AttemptKey, window: Window) -> StoreResult<()> {
        self.call("forgive_failure", self.inner.forgive_failure(key, window))
            .await
    }
    async fn failures(&self, key: &AttemptKey, window: Window) -> StoreResult<u64> {
        self.call("failures", self.inner.failures(key, window)).await
    }
}

#[async_trait]
impl Purges for TracedStore {
    async fn pending_purges(&self, limit: usize) -> StoreResult<Vec<PendingPurge>> {
        self.call("pending_purges", self.inner.pending_purges(limit)).await
    }
    async fn purge(&self, pending: &PendingPurge) -> StoreResult<()> {
        self.call("purge", self.inner.purge(pending)).await
    }
}

#[async_trait]
impl Idempotency for TracedStore {
    async fn claim(&self, claim: &Claim) -> StoreResult<Claimed> {
        self.call("claim", self.inner.claim(claim)).await
    }
    async fn release(&self, key: &str, token: &str) -> StoreResult<()> {
        self.call("release", self.inner.release(key, token)).await
    }
}
