//! [`Moderation`] on DynamoDB. PLACEHOLDER while the adapter is written:
//! every call fails with an internal error (not committed to main as done).

use async_trait::async_trait;

use super::DynamoStore;
use crate::domain::{
    BanId, BanPage, BanRecord, BanSubject, BoardSlug, CommentKey, LogEntry, LogPage, Member, MemberId, PageLimit,
    PostKey, Report, ReportId, ReportPage, Reported,
};
use crate::store::{Claim, Completion, Moderation, StoreError, StoreResult};

fn pending() -> StoreError {
    StoreError::Internal("moderation on DynamoDB is not written yet".into())
}

#[async_trait]
impl Moderation for DynamoStore {
    async fn is_moderator(&self, _: &BoardSlug, _: &MemberId) -> StoreResult<bool> {
        Err(pending())
    }
    async fn moderators(&self, _: &BoardSlug) -> StoreResult<Vec<Member>> {
        Err(pending())
    }
    async fn add_moderator(&self, _: &BoardSlug, _: &Member, _: &LogEntry) -> StoreResult<bool> {
        Err(pending())
    }
    async fn remove_moderator(&self, _: &BoardSlug, _: &MemberId, _: &LogEntry) -> StoreResult<bool> {
        Err(pending())
    }
    async fn active_ban(&self, _: &BoardSlug, _: &[BanSubject], _: i64) -> StoreResult<Option<BanRecord>> {
        Err(pending())
    }
    async fn ban(&self, _: &BanRecord, _: &LogEntry, _: Option<&Completion>) -> StoreResult<()> {
        Err(pending())
    }
    async fn ban_by_id(&self, _: &BoardSlug, _: &BanId) -> StoreResult<Option<BanRecord>> {
        Err(pending())
    }
    async fn unban(&self, _: &BanRecord, _: &LogEntry) -> StoreResult<bool> {
        Err(pending())
    }
    async fn list_bans(&self, _: &BoardSlug, _: PageLimit, _: Option<&str>, _: i64) -> StoreResult<BanPage> {
        Err(pending())
    }
    async fn remove_post(&self, _: &PostKey, _: &LogEntry, _: Option<&Completion>) -> StoreResult<bool> {
        Err(pending())
    }
    async fn remove_comment(&self, _: &CommentKey, _: &LogEntry, _: Option<&Completion>) -> StoreResult<bool> {
        Err(pending())
    }
    async fn report(&self, _: &BoardSlug, _: &Report, _: &str, _: Option<&Claim>) -> StoreResult<Reported> {
        Err(pending())
    }
    async fn list_reports(&self, _: &BoardSlug, _: PageLimit, _: Option<&str>) -> StoreResult<ReportPage> {
        Err(pending())
    }
    async fn resolve_report(&self, _: &BoardSlug, _: &ReportId, _: Option<&Completion>) -> StoreResult<bool> {
        Err(pending())
    }
    async fn modlog(&self, _: &BoardSlug, _: PageLimit, _: Option<&str>) -> StoreResult<LogPage> {
        Err(pending())
    }
}
