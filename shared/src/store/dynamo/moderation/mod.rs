//! [`Moderation`] on DynamoDB: the items in [`super::items`] (moderators,
//! ban records and ban subjects, the log, open reports with their pointers
//! and reporters), each change and its log entry (and idempotency
//! completion) in one transaction. Bans, reports and log entries are kept
//! as their JSON: they are read whole, never queried by field. Behaves as
//! the SQLite adapter does (`store::sqlite::moderation`); docs/storage.md,
//! Single-table design, has each operation's requests and units.
//!
//! One file per part of the port: [`moderators`], [`bans`], [`reports`],
//! [`removals`] and the [`log`]; here, the trait's methods naming them; the
//! partition reads they share are in [`partitions`].

mod bans;
mod log;
mod moderators;
mod partitions;
mod removals;
mod reports;

use async_trait::async_trait;

use super::DynamoStore;
use crate::domain::{
    BanId, BanPage, BanRecord, BanSubject, BoardSlug, CommentKey, LogEntry, LogPage, Member, MemberId, PageLimit,
    PostKey, Report, ReportId, ReportPage, Reported,
};
use crate::store::{Claim, Completion, Moderation, StoreResult};

#[async_trait]
impl Moderation for DynamoStore {
    async fn is_moderator(&self, board: &BoardSlug, member: &MemberId) -> StoreResult<bool> {
        moderators::is_moderator(self, board, member).await
    }

    async fn moderators(&self, board: &BoardSlug) -> StoreResult<Vec<Member>> {
        moderators::moderators(self, board).await
    }

    async fn add_moderator(&self, board: &BoardSlug, member: &Member, entry: &LogEntry) -> StoreResult<bool> {
        moderators::add_moderator(self, board, member, entry).await
    }

    async fn remove_moderator(&self, board: &BoardSlug, member: &MemberId, entry: &LogEntry) -> StoreResult<bool> {
        moderators::remove_moderator(self, board, member, entry).await
    }

    async fn active_ban(&self, board: &BoardSlug, subjects: &[BanSubject], now: i64) -> StoreResult<Option<BanRecord>> {
        bans::active_ban(self, board, subjects, now).await
    }

    async fn ban(&self, record: &BanRecord, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<()> {
        bans::ban(self, record, entry, done).await
    }

    async fn ban_by_id(&self, board: &BoardSlug, id: &BanId) -> StoreResult<Option<BanRecord>> {
        bans::ban_by_id(self, board, id).await
    }

    async fn unban(&self, record: &BanRecord, entry: &LogEntry) -> StoreResult<bool> {
        bans::unban(self, record, entry).await
    }

    async fn list_bans(
        &self,
        board: &BoardSlug,
        limit: PageLimit,
        cursor: Option<&str>,
        now: i64,
    ) -> StoreResult<BanPage> {
        bans::list_bans(self, board, limit, cursor, now).await
    }

    async fn remove_post(&self, post_key: &PostKey, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<bool> {
        removals::remove_post(self, post_key, entry, done).await
    }

    async fn remove_comment(
        &self,
        comment_key: &CommentKey,
        entry: &LogEntry,
        done: Option<&Completion>,
    ) -> StoreResult<bool> {
        removals::remove_comment(self, comment_key, entry, done).await
    }

    async fn report(
        &self,
        board: &BoardSlug,
        report: &Report,
        reporter: &str,
        claim: Option<&Claim>,
    ) -> StoreResult<Reported> {
        reports::report(self, board, report, reporter, claim).await
    }

    async fn list_reports(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<ReportPage> {
        reports::list_reports(self, board, limit, cursor).await
    }

    async fn resolve_report(&self, board: &BoardSlug, id: &ReportId, done: Option<&Completion>) -> StoreResult<bool> {
        reports::resolve_report(self, board, id, done).await
    }

    async fn modlog(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<LogPage> {
        log::modlog(self, board, limit, cursor).await
    }
}
