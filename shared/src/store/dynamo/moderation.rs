//! [`Moderation`] on DynamoDB: the v3 items in [`super::items`] (moderators,
//! ban records and ban subjects, the log, open reports with their pointers
//! and reporters), each change and its log entry (and idempotency
//! completion) in one transaction. Bans, reports and log entries are kept
//! as their JSON: they are read whole, never queried by field. Behaves as
//! the SQLite adapter does (`store::sqlite::moderation`); docs/storage.md,
//! Single-table design, has each operation's requests and units.

use std::collections::HashMap;
use std::time::Instant;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{ReturnConsumedCapacity, TransactWriteItem, Update};

use super::DynamoStore;
use super::attributes::{Item, from_item, key, n, s, to_item};
use super::comments::CommentDeleted;
use super::items::{
    BAN_SK, BanItem, LogItem, ModeratorItem, POST_ON_BOARD, POST_SK, REPORT_SK_PREFIX, ReportItem, ReportPointerItem,
    ReporterItem, ban_subject_pk, bans_pk, comment_sk, modlog_pk, mods_pk, post_pk, report_pointer_sk, reporter_sk,
    reports_pk,
};
use super::purge::{Marked, purge_marker};
use super::transact::{TxFailure, sdk_error};
use crate::domain::{
    Ban, BanId, BanPage, BanRecord, BanSubject, BoardSlug, CommentKey, LogEntry, LogPage, Member, MemberId, PageLimit,
    PostKey, Report, ReportId, ReportPage, ReportTarget, Reported,
};
use crate::store::{Claim, Completion, Moderation, StoreError, StoreResult, cursor, from_json, to_json};

/// How long a reporter stays counted on a report that stays open: a
/// reporter's item expires (TTL) after it, so the post partition does not
/// keep every reporter of every report it ever had. A reporter reporting the
/// same open report again after that is counted again.
const REPORTER_SECONDS: i64 = 90 * 24 * 60 * 60;

/// How often a write that lost a race (another ban of the same subject,
/// another first report of the same target, a report of a comment being
/// deleted or removed) starts over before giving up: each lost race is another
/// write's win, so this many writers at once all get through.
pub(super) const RACES: u32 = 16;

/// A short jittered pause before starting over after a lost race, growing
/// with `attempt`, so racing writers do not meet again at once.
pub(super) async fn pause_after_race(attempt: u32) {
    let ceiling = 5u64 << attempt.min(5);
    tokio::time::sleep(std::time::Duration::from_millis(rand::random::<u64>() % (ceiling + 1))).await;
}

fn ban_from(item: &BanItem) -> StoreResult<BanRecord> {
    Ok(BanRecord {
        ban: from_json::<Ban>(&item.ban)?,
        subject: crate::store::ban_subject(&item.subject)?,
        also: item.also.as_deref().map(crate::store::ban_subject).transpose()?,
        expires: item.expires,
    })
}

/// Whether the condition of item `at` failed.
pub(super) fn failed_at(failed: &[bool], at: usize) -> bool {
    failed.get(at) == Some(&true)
}

/// Trims a `limit + 1` read and gives the cursor when more follow (as the
/// SQLite adapter's pages: the last id on the page).
fn paged<T>(mut items: Vec<(String, T)>, limit: usize) -> (Vec<T>, Option<String>) {
    let more = items.len() > limit;
    items.truncate(limit);
    let next = more.then(|| items.last().map(|(id, _)| cursor::encode(id))).flatten();
    (items.into_iter().map(|(_, item)| item).collect(), next)
}

fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The item that is a report's target, and the condition that it is on `board`.
fn target_key(target: &ReportTarget) -> Item {
    match target {
        ReportTarget::Post { post_id } => key(post_pk(post_id), POST_SK.into()),
        ReportTarget::Comment { post_id, comment_id } => key(post_pk(post_id), comment_sk(comment_id)),
    }
}

impl DynamoStore {
    /// The transaction item that writes `entry` to the board's log.
    fn log_put(&self, board: &str, entry: &LogEntry) -> StoreResult<TransactWriteItem> {
        let item = to_item(&LogItem {
            pk: modlog_pk(board),
            sk: entry.id.clone(),
            entry: to_json(entry)?,
        })?;
        self.put(item, "attribute_not_exists(PK)")
    }

    /// What a report's write requires of its target: a post on `board`, or
    /// a comment on `board` whose post is not being purged (a deleted post's
    /// comments stay until its purge's step 2). A post item is there only
    /// before its delete's step 1, so a post needs no marker check.
    fn target_checks(&self, board: &str, target: &ReportTarget) -> StoreResult<Vec<TransactWriteItem>> {
        let on_board = [(":board", s(board))];
        Ok(match target {
            ReportTarget::Post { .. } => vec![self.check(target_key(target), POST_ON_BOARD, &on_board)?],
            ReportTarget::Comment { post_id, .. } => vec![
                self.check(target_key(target), "attribute_exists(PK) AND board = :board", &on_board)?,
                self.check(purge_marker(post_id), "attribute_not_exists(PK)", &[])?,
            ],
        })
    }

    /// Up to `want` items of partition `pk`, SK descending (newest first:
    /// the SKs are ULIDs), strictly before `after`; with `active_at`, only
    /// bans active then (`expires` absent or later). Reads on past
    /// DynamoDB's 1 MB pages and past the items the filter drops until it
    /// has `want` or the partition ends, so a page is never short while more
    /// follow. Consistent, as the SQLite adapter's reads are.
    async fn newest_first(
        &self,
        pk: &str,
        after: Option<&str>,
        want: usize,
        active_at: Option<i64>,
    ) -> StoreResult<Vec<Item>> {
        let mut items: Vec<Item> = Vec::new();
        let mut start = None;
        for round in 0.. {
            // The first read asks for exactly what the page needs; a read
            // after the filter dropped ended bans asks for more at once.
            let mut need = want.saturating_sub(items.len()).max(1);
            if round > 0 {
                need = need.max(100);
            }
            let mut query = self
                .client()
                .await
                .query()
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .table_name(&self.table)
                .expression_attribute_values(":pk", s(pk))
                .scan_index_forward(false)
                .consistent_read(true)
                .limit(i32::try_from(need).unwrap_or(i32::MAX))
                .set_exclusive_start_key(start);
            query = match after {
                Some(after) => query
                    .key_condition_expression("PK = :pk AND SK < :after")
                    .expression_attribute_values(":after", s(after)),
                None => query.key_condition_expression("PK = :pk"),
            };
            if let Some(now) = active_at {
                query = query
                    .filter_expression("attribute_not_exists(#expires) OR #expires > :now")
                    .expression_attribute_names("#expires", "expires")
                    .expression_attribute_values(":now", n(now));
            }
            let out = query
                .send()
                .await
                .inspect(|out| self.record(out, &[pk.to_owned()]))
                .map_err(sdk_error)?;
            items.extend(out.items.unwrap_or_default());
            start = out.last_evaluated_key;
            if items.len() >= want || start.is_none() {
                items.truncate(want);
                return Ok(items);
            }
        }
        unreachable!("the loop returns")
    }

    /// Every item of partition `pk` whose SK starts with `prefix`, page by
    /// page; consistent.
    async fn all_under(&self, pk: &str, prefix: Option<&str>) -> StoreResult<Vec<Item>> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let mut query = self
                .client()
                .await
                .query()
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .table_name(&self.table)
                .expression_attribute_values(":pk", s(pk))
                .consistent_read(true)
                .set_exclusive_start_key(start);
            query = match prefix {
                Some(prefix) => query
                    .key_condition_expression("PK = :pk AND begins_with(SK, :prefix)")
                    .expression_attribute_values(":prefix", s(prefix)),
                None => query.key_condition_expression("PK = :pk"),
            };
            let out = query
                .send()
                .await
                .inspect(|out| self.record(out, &[pk.to_owned()]))
                .map_err(sdk_error)?;
            items.extend(out.items.unwrap_or_default());
            start = out.last_evaluated_key;
            if start.is_none() {
                return Ok(items);
            }
        }
    }

    /// The report pointers in a post's partition: its own and its comments'.
    async fn report_pointers(&self, post_id: &str) -> StoreResult<Vec<ReportPointerItem>> {
        self.all_under(&post_pk(post_id), Some(REPORT_SK_PREFIX))
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    /// `ADD reporters 1` on an open report, which must still be open.
    fn count_reporter(&self, board: &str, report_id: &str) -> StoreResult<TransactWriteItem> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(reports_pk(board), report_id.to_owned())))
            .update_expression("ADD reporters :one")
            .condition_expression("attribute_exists(PK)")
            .expression_attribute_values(":one", n(1))
            .build()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Writes `done` on its own (a report that changed nothing still
    /// answers, and completes its record).
    async fn complete_alone(&self, done: &Completion) -> StoreResult<()> {
        match self.transact(vec![self.complete(done)?]).await {
            Ok(()) => Ok(()),
            Err(TxFailure::Conditions(_)) => Err(StoreError::ClaimLost),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// Remembers a moderator appointment this process just wrote or found.
    pub(super) fn remember_moderator(&self, board: &str, member: &str, moderates: Option<bool>) {
        let cache_key = (board.to_owned(), member.to_owned());
        match moderates {
            Some(moderates) => self.cache.moderators.put_at(cache_key, moderates, Instant::now()),
            // The write's outcome is unknown: ask the table next time.
            None => self.cache.moderators.remove(&cache_key),
        }
    }
}

#[async_trait]
impl Moderation for DynamoStore {
    /// One eventually consistent GetItem (0.5 RCU), its answer (yes or no)
    /// kept in this process for [`super::cache::MODERATOR_TTL`] (10 s): on
    /// Lambda an appointment or dismissal made through another execution
    /// environment takes effect here within 10 seconds, one made through
    /// this process at once.
    async fn is_moderator(&self, board: &BoardSlug, member: &MemberId) -> StoreResult<bool> {
        let cache_key = (board.as_str().to_owned(), member.as_str().to_owned());
        if let Some(known) = self.cache.moderators.get(&cache_key) {
            return Ok(known);
        }
        let read_at = Instant::now();
        let found = self
            .get_with(key(mods_pk(board.as_str()), member.as_str().to_owned()), false)
            .await?
            .is_some();
        self.cache.moderators.put_at(cache_key, found, read_at);
        Ok(found)
    }

    /// One Query of the board's moderator partition (every page), sorted
    /// by appointment time, then member id.
    async fn moderators(&self, board: &BoardSlug) -> StoreResult<Vec<Member>> {
        let mut found = self
            .all_under(&mods_pk(board.as_str()), None)
            .await?
            .into_iter()
            .map(from_item::<ModeratorItem>)
            .collect::<StoreResult<Vec<_>>>()?;
        found.sort_by(|a, b| (&a.appointed, &a.member_id).cmp(&(&b.appointed, &b.member_id)));
        Ok(found
            .into_iter()
            .map(|m| Member {
                id: m.member_id,
                username: m.username,
                nickname: m.nickname,
                created_at: m.created_at,
            })
            .collect())
    }

    /// One transaction: the moderator item (if absent) and the log entry.
    async fn add_moderator(&self, board: &BoardSlug, member: &Member, entry: &LogEntry) -> StoreResult<bool> {
        let board = board.as_str();
        let item = to_item(&ModeratorItem {
            pk: mods_pk(board),
            sk: member.id.clone(),
            member_id: member.id.clone(),
            username: member.username.clone(),
            nickname: member.nickname.clone(),
            created_at: member.created_at.clone(),
            appointed: entry.at.clone(),
        })?;
        let items = vec![self.put(item, "attribute_not_exists(PK)")?, self.log_put(board, entry)?];
        let outcome = match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => Ok(false),
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
            Err(TxFailure::Store(e)) => Err(e),
        };
        let moderates = outcome.as_ref().ok().map(|_| true);
        self.remember_moderator(board, &member.id, moderates);
        outcome
    }

    /// One transaction: the moderator item's delete (if there) and the log entry.
    async fn remove_moderator(&self, board: &BoardSlug, member: &MemberId, entry: &LogEntry) -> StoreResult<bool> {
        let board = board.as_str();
        let items = vec![
            self.delete(
                key(mods_pk(board), member.as_str().to_owned()),
                Some("attribute_exists(PK)"),
            )?,
            self.log_put(board, entry)?,
        ];
        let outcome = match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => Ok(false),
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
            Err(TxFailure::Store(e)) => Err(e),
        };
        let moderates = outcome.as_ref().ok().map(|_| false);
        self.remember_moderator(board, member.as_str(), moderates);
        outcome
    }

    /// One request, consistent (an unban takes effect at once): a GetItem of
    /// the subject's item for one subject, one BatchGetItem of all of them
    /// for several (a member's write: the member and the address key). A
    /// ban that has ended is skipped (its item goes by TTL, late).
    async fn active_ban(&self, board: &BoardSlug, subjects: &[BanSubject], now: i64) -> StoreResult<Option<BanRecord>> {
        let board = board.as_str();
        let mut pks: Vec<String> = Vec::with_capacity(subjects.len());
        for subject in subjects {
            let pk = ban_subject_pk(board, &subject.key());
            // BatchGetItem refuses a key named twice.
            if !pks.contains(&pk) {
                pks.push(pk);
            }
        }
        let items = match pks.as_slice() {
            [] => return Ok(None),
            [pk] => self.get(key(pk.clone(), BAN_SK.into())).await?.into_iter().collect(),
            _ => {
                let keys = pks.iter().map(|pk| key(pk.clone(), BAN_SK.into())).collect();
                self.batch_get(keys, true, None).await?
            }
        };
        let mut found: HashMap<String, BanItem> = items
            .into_iter()
            .map(|item| from_item::<BanItem>(item).map(|ban| (ban.pk.clone(), ban)))
            .collect::<StoreResult<_>>()?;
        for pk in &pks {
            if let Some(item) = found.remove(pk) {
                let record = ban_from(&item)?;
                if record.active_at(now) {
                    return Ok(Some(record));
                }
            }
        }
        Ok(None)
    }

    /// The subject's item (GetItem), then one transaction: the subject's
    /// item (on the one just read), (v4) the second subject's item, the
    /// replaced ban's record deleted (with its second subject's item while
    /// that still names it), the new record, the log entry and the
    /// completion. A race with another ban of the same subject starts over.
    /// A second subject's item names the latest ban that has it.
    async fn ban(&self, record: &BanRecord, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<()> {
        let board = record.ban.board.as_str();
        let ban_id = record.ban.id.as_str();
        let subject = record.subject.key();
        let also = record.also.as_ref().map(BanSubject::key);
        let subject_key = key(ban_subject_pk(board, &subject), BAN_SK.into());
        let ban_json = to_json(&record.ban)?;
        let item = |pk: String, sk: String| {
            to_item(&BanItem {
                pk,
                sk,
                ban_id: ban_id.to_owned(),
                subject: subject.clone(),
                also: also.clone(),
                ban: ban_json.clone(),
                expires: record.expires,
                expires_at: record.expires,
            })
        };
        // The replaced ban's second subject's item, when it names another.
        let mut keep_old_also = false;
        for attempt in 0..RACES {
            if attempt > 0 {
                pause_after_race(attempt).await;
            }
            let old = self
                .get(subject_key.clone())
                .await?
                .map(from_item::<BanItem>)
                .transpose()?;
            let subject_item = item(ban_subject_pk(board, &subject), BAN_SK.into())?;
            let mut items = vec![match &old {
                None => self.put(subject_item, "attribute_not_exists(PK)")?,
                // This very ban: an earlier attempt of this call committed
                // (its answer was lost and the SDK sent it again).
                Some(old) if old.ban_id == ban_id => return Ok(()),
                Some(old) => self.put_if(subject_item, "ban_id = :old", &[(":old", s(old.ban_id.clone()))])?,
            }];
            if let Some(also) = &also {
                items.push(self.overwrite(item(ban_subject_pk(board, also), BAN_SK.into())?)?);
            }
            let mut old_also_at = None;
            if let Some(old) = &old {
                items.push(self.delete(key(bans_pk(board), old.ban_id.clone()), None)?);
                if let Some(old_also) = old.also.as_ref().filter(|a| Some(*a) != also.as_ref())
                    && !keep_old_also
                {
                    old_also_at = Some(items.len());
                    items.push(self.delete_if(
                        key(ban_subject_pk(board, old_also), BAN_SK.into()),
                        "attribute_not_exists(PK) OR ban_id = :old",
                        &[(":old", s(old.ban_id.clone()))],
                    )?);
                }
            }
            items.push(self.put(item(bans_pk(board), ban_id.to_owned())?, "attribute_not_exists(PK)")?);
            items.push(self.log_put(board, entry)?);
            let claim_at = items.len();
            if let Some(done) = done {
                items.push(self.complete(done)?);
            }
            match self.transact(items).await {
                Ok(()) => return Ok(()),
                // Another ban of the subject came between the read and the write.
                Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => continue,
                // The replaced ban's second subject names a later ban: leave it.
                Err(TxFailure::Conditions(failed)) if old_also_at.is_some_and(|at| failed_at(&failed, at)) => {
                    keep_old_also = true;
                    continue;
                }
                Err(TxFailure::Conditions(failed)) if done.is_some() && failed_at(&failed, claim_at) => {
                    return Err(StoreError::ClaimLost);
                }
                Err(TxFailure::Conditions(_)) => {
                    return Err(StoreError::Internal("ban or log entry id collision".into()));
                }
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
        Err(StoreError::Unavailable(
            "the ban kept racing other bans of the same writer".into(),
        ))
    }

    /// One consistent GetItem of the ban's record, active or not (as SQLite,
    /// which keeps ended bans; here an ended one goes by TTL eventually).
    async fn ban_by_id(&self, board: &BoardSlug, id: &BanId) -> StoreResult<Option<BanRecord>> {
        let Some(item) = self.get(key(bans_pk(board.as_str()), id.as_str().to_owned())).await? else {
            return Ok(None);
        };
        ban_from(&from_item(item)?).map(Some)
    }

    /// One transaction: the record's delete (if there), the subject item's
    /// and (v4) the second subject item's (each if it names this ban) and
    /// the log entry.
    async fn unban(&self, record: &BanRecord, entry: &LogEntry) -> StoreResult<bool> {
        let board = record.ban.board.as_str();
        let ban_id = record.ban.id.as_str();
        let mut subjects: Vec<Item> = [Some(&record.subject), record.also.as_ref()]
            .into_iter()
            .flatten()
            .map(|subject| key(ban_subject_pk(board, &subject.key()), BAN_SK.into()))
            .collect();
        loop {
            let mut items = vec![self.delete(key(bans_pk(board), ban_id.to_owned()), Some("attribute_exists(PK)"))?];
            for subject_key in &subjects {
                // Gone already (an ended ban's item may go by TTL first) is fine.
                items.push(self.delete_if(
                    subject_key.clone(),
                    "attribute_not_exists(PK) OR ban_id = :id",
                    &[(":id", s(ban_id))],
                )?);
            }
            items.push(self.log_put(board, entry)?);
            match self.transact(items).await {
                Ok(()) => return Ok(true),
                Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => return Ok(false),
                // A subject's item names a later ban (this ended one's item
                // went by TTL, then the subject was banned again): lift this
                // one, leave that.
                Err(TxFailure::Conditions(failed)) if (1..=subjects.len()).any(|at| failed_at(&failed, at)) => {
                    let mut at = 0;
                    subjects.retain(|_| {
                        at += 1;
                        !failed_at(&failed, at)
                    });
                }
                Err(TxFailure::Conditions(_)) => {
                    return Err(StoreError::Internal("log entry id collision".into()));
                }
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
    }

    /// Queries of the board's ban records, newest first, ended bans
    /// filtered out: on until `limit + 1` active ones or the partition's
    /// end (one Query unless many ended bans are in the way).
    async fn list_bans(
        &self,
        board: &BoardSlug,
        limit: PageLimit,
        cursor: Option<&str>,
        now: i64,
    ) -> StoreResult<BanPage> {
        let after = cursor.map(cursor::decode).transpose()?;
        let limit = limit.get();
        let items = self
            .newest_first(&bans_pk(board.as_str()), after.as_deref(), limit + 1, Some(now))
            .await?;
        let rows = items
            .into_iter()
            .map(|item| {
                let item: BanItem = from_item(item)?;
                Ok((item.sk, from_json::<Ban>(&item.ban)?))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let (bans, next_cursor) = paged(rows, limit);
        Ok(BanPage { bans, next_cursor })
    }

    /// As [`crate::store::Posts::delete_post`], step 1 also carrying the log
    /// entry, the deletes of the post's open reports and its comments' (a
    /// Query of the pointers in its partition first) and the completion.
    /// Reports beyond the transaction's room, and any opened between that
    /// Query and step 1, are resolved by the purge (step 2, off the
    /// request), as a delete's are (after step 1 no report of the post can
    /// be opened).
    async fn remove_post(&self, post_key: &PostKey, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let pointers = self.report_pointers(post_id).await?;
        let mut extra = vec![self.log_put(board, entry)?];
        let claim_at = extra.len();
        if let Some(done) = done {
            extra.push(self.complete(done)?);
        }
        let room = self.mark_room().saturating_sub(extra.len());
        for pointer in pointers.into_iter().take(room) {
            extra.push(self.delete(key(reports_pk(board), pointer.report_id), None)?);
        }
        let removed = match self.mark_post_deleted_with(board, post_id, extra).await? {
            Marked::Deleted => true,
            Marked::NoSuchPost => false,
            Marked::ExtraFailed(failed) if done.is_some() && failed_at(&failed, claim_at) => {
                return Err(StoreError::ClaimLost);
            }
            Marked::ExtraFailed(_) => return Err(StoreError::Internal("log entry id collision".into())),
        };
        // Step 2 runs off the request ([`crate::store::Purges`]).
        Ok(removed)
    }

    /// As [`crate::store::Comments::delete_comment`] (the pointer's
    /// GetItem, then one transaction of the comment's delete, its count, and
    /// the delete of its open report and pointer or the check that it has
    /// none: [`DynamoStore::delete_comment_with`]), here with the log entry
    /// and the completion in the transaction.
    async fn remove_comment(
        &self,
        comment_key: &CommentKey,
        entry: &LogEntry,
        done: Option<&Completion>,
    ) -> StoreResult<bool> {
        let mut extra = vec![self.log_put(comment_key.post.board.as_str(), entry)?];
        let claim_at = extra.len();
        if let Some(done) = done {
            extra.push(self.complete(done)?);
        }
        match self.delete_comment_with(comment_key, extra).await? {
            CommentDeleted::Deleted => Ok(true),
            CommentDeleted::NoSuchComment => Ok(false),
            CommentDeleted::ExtraFailed(failed) if done.is_some() && failed_at(&failed, claim_at) => {
                Err(StoreError::ClaimLost)
            }
            CommentDeleted::ExtraFailed(_) => Err(StoreError::Internal("log entry id collision".into())),
        }
    }

    /// The target's pointer (GetItem), then one transaction, the target
    /// checked in it: with an open report, the reporter's item (if new) and
    /// the report's count; without, the pointer, the report and the
    /// reporter. With `claim`, the completion is in it; a reporter counted
    /// already writes the completion alone.
    async fn report(
        &self,
        board: &BoardSlug,
        report: &Report,
        reporter: &str,
        claim: Option<&Claim>,
    ) -> StoreResult<Reported> {
        let board = board.as_str();
        let post_id = report.target.post_id();
        let pointer_key = key(post_pk(post_id), report_pointer_sk(&report.target));
        let shown = report.clone().for_reporter();
        let reporter_item = |report_id: &str| {
            to_item(&ReporterItem {
                pk: post_pk(post_id),
                sk: reporter_sk(report_id, reporter),
                report_id: report_id.to_owned(),
                reporter: reporter.to_owned(),
                expires_at: unix_now() + REPORTER_SECONDS,
            })
        };
        for attempt in 0..RACES {
            if attempt > 0 {
                pause_after_race(attempt).await;
            }
            let mut items = self.target_checks(board, &report.target)?;
            let checks = items.len();
            let target_gone = |failed: &[bool]| failed.iter().take(checks).any(|f| *f);
            let pointer = self
                .get(pointer_key.clone())
                .await?
                .map(from_item::<ReportPointerItem>)
                .transpose()?;
            match pointer {
                Some(pointer) => {
                    let open: Report = from_json(&pointer.report)?;
                    let done = claim
                        .map(|c| to_json(&open).map(|body| c.complete(200, body)))
                        .transpose()?;
                    let reporter_at = items.len();
                    items.push(self.put(reporter_item(&pointer.report_id)?, "attribute_not_exists(PK)")?);
                    let report_at = items.len();
                    items.push(self.count_reporter(board, &pointer.report_id)?);
                    if let Some(done) = &done {
                        items.push(self.complete(done)?);
                    }
                    match self.transact(items).await {
                        Ok(()) => return Ok(Reported::Joined(open)),
                        Err(TxFailure::Conditions(failed)) if target_gone(&failed) => return Err(StoreError::NotFound),
                        // Resolved since the read: this report opens the next one.
                        Err(TxFailure::Conditions(failed)) if failed_at(&failed, report_at) => continue,
                        // Counted already: joins without counting.
                        Err(TxFailure::Conditions(failed)) if failed_at(&failed, reporter_at) => {
                            if let Some(done) = &done {
                                self.complete_alone(done).await?;
                            }
                            return Ok(Reported::Joined(open));
                        }
                        Err(TxFailure::Conditions(_)) => return Err(StoreError::ClaimLost),
                        Err(TxFailure::Store(e)) => return Err(e),
                    }
                }
                None => {
                    let done = claim
                        .map(|c| to_json(&shown).map(|body| c.complete(201, body)))
                        .transpose()?;
                    let report_json = to_json(&shown)?;
                    let pointer_at = items.len();
                    items.push(self.put(
                        to_item(&ReportPointerItem {
                            pk: post_pk(post_id),
                            sk: report_pointer_sk(&report.target),
                            report_id: shown.id.clone(),
                            board: board.to_owned(),
                            report: report_json.clone(),
                        })?,
                        "attribute_not_exists(PK)",
                    )?);
                    items.push(self.put(
                        to_item(&ReportItem {
                            pk: reports_pk(board),
                            sk: shown.id.clone(),
                            report_id: shown.id.clone(),
                            report: report_json,
                            reporters: 1,
                        })?,
                        "attribute_not_exists(PK)",
                    )?);
                    items.push(self.put(reporter_item(&shown.id)?, "attribute_not_exists(PK)")?);
                    let claim_at = items.len();
                    if let Some(done) = &done {
                        items.push(self.complete(done)?);
                    }
                    match self.transact(items).await {
                        Ok(()) => return Ok(Reported::Opened(shown)),
                        Err(TxFailure::Conditions(failed)) if target_gone(&failed) => return Err(StoreError::NotFound),
                        // Another first report of the target came first: join it.
                        Err(TxFailure::Conditions(failed)) if failed_at(&failed, pointer_at) => continue,
                        Err(TxFailure::Conditions(failed)) if done.is_some() && failed_at(&failed, claim_at) => {
                            return Err(StoreError::ClaimLost);
                        }
                        Err(TxFailure::Conditions(_)) => {
                            return Err(StoreError::Internal("report id collision".into()));
                        }
                        Err(TxFailure::Store(e)) => return Err(e),
                    }
                }
            }
        }
        Err(StoreError::Unavailable(
            "the report kept racing other reports of the same target".into(),
        ))
    }

    /// One Query of the board's open reports, newest first (more past the
    /// 1 MB cap), each with its count.
    async fn list_reports(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<ReportPage> {
        let after = cursor.map(cursor::decode).transpose()?;
        let limit = limit.get();
        let items = self
            .newest_first(&reports_pk(board.as_str()), after.as_deref(), limit + 1, None)
            .await?;
        let rows = items
            .into_iter()
            .map(|item| {
                let item: ReportItem = from_item(item)?;
                let mut report = from_json::<Report>(&item.report)?;
                report.reporters = Some(item.reporters);
                Ok((item.sk, report))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let (reports, next_cursor) = paged(rows, limit);
        Ok(ReportPage { reports, next_cursor })
    }

    /// The report (GetItem), then one transaction: its delete, its
    /// pointer's (if it names this report) and the completion. Its
    /// reporters stay until their TTL or the post's purge (they name the
    /// report, so no later report counts them).
    async fn resolve_report(&self, board: &BoardSlug, id: &ReportId, done: Option<&Completion>) -> StoreResult<bool> {
        let board = board.as_str();
        let report_key = key(reports_pk(board), id.as_str().to_owned());
        let Some(item) = self.get(report_key.clone()).await? else {
            return Ok(false);
        };
        let found: ReportItem = from_item(item)?;
        let target = from_json::<Report>(&found.report)?.target;
        let pointer_key = key(post_pk(target.post_id()), report_pointer_sk(&target));
        let mut with_pointer = true;
        loop {
            let mut items = vec![self.delete(report_key.clone(), Some("attribute_exists(PK)"))?];
            if with_pointer {
                // Gone already (its post was deleted and purged) is fine.
                items.push(self.delete_if(
                    pointer_key.clone(),
                    "attribute_not_exists(PK) OR report_id = :id",
                    &[(":id", s(id.as_str()))],
                )?);
            }
            let claim_at = items.len();
            if let Some(done) = done {
                items.push(self.complete(done)?);
            }
            match self.transact(items).await {
                Ok(()) => return Ok(true),
                Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => return Ok(false),
                Err(TxFailure::Conditions(failed)) if done.is_some() && failed_at(&failed, claim_at) => {
                    return Err(StoreError::ClaimLost);
                }
                // The pointer names another report: leave it.
                Err(TxFailure::Conditions(_)) if with_pointer => with_pointer = false,
                Err(TxFailure::Conditions(_)) => {
                    return Err(StoreError::Internal("the report could not be resolved".into()));
                }
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
    }

    /// One Query of the board's log, newest first (more past the 1 MB cap).
    async fn modlog(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<LogPage> {
        let after = cursor.map(cursor::decode).transpose()?;
        let limit = limit.get();
        let items = self
            .newest_first(&modlog_pk(board.as_str()), after.as_deref(), limit + 1, None)
            .await?;
        let rows = items
            .into_iter()
            .map(|item| {
                let item: LogItem = from_item(item)?;
                Ok((item.sk, from_json::<LogEntry>(&item.entry)?))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let (entries, next_cursor) = paged(rows, limit);
        Ok(LogPage { entries, next_cursor })
    }
}

#[cfg(test)]
mod tests {
    use super::super::attributes::pk_of;
    use super::*;

    #[test]
    fn ban_subjects_read_back_as_written() {
        let member = BanSubject::Member("01J0000000000000000000000A".into());
        let address = BanSubject::Address(crate::domain::WriterKey::new("abcdefgh234567".into()));
        for subject in [member, address] {
            assert_eq!(crate::store::ban_subject(&subject.key()).unwrap(), subject);
        }
        assert!(crate::store::ban_subject("nobody").is_err());
    }

    #[test]
    fn a_page_has_a_cursor_only_when_more_follow() {
        let rows = |n: usize| (0..n).map(|i| (format!("id{i}"), i)).collect::<Vec<_>>();
        assert_eq!(paged(rows(3), 3), (vec![0, 1, 2], None));
        assert_eq!(paged(rows(4), 3), (vec![0, 1, 2], Some(cursor::encode("id2"))));
        assert_eq!(paged(rows(0), 3), (vec![], None));
    }

    #[test]
    fn a_pointer_key_names_its_target() {
        let post = ReportTarget::Post { post_id: "P".into() };
        let comment = ReportTarget::Comment {
            post_id: "P".into(),
            comment_id: "C".into(),
        };
        assert_eq!(pk_of(&target_key(&post)), "POST#P");
        assert_eq!(report_pointer_sk(&post), "REPORT#POST");
        assert_eq!(report_pointer_sk(&comment), "REPORT#COMMENT#C");
    }
}
