//! Reports: an open report per target under `REPORTS#<board>` (the list,
//! with its reporter count), a pointer to it in the target's post
//! partition (so the target's delete finds it), and an item per reporter
//! there (each counted once).

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::partitions::paged;
use crate::domain::{BoardSlug, PageLimit, Report, ReportId, ReportPage, ReportTarget, Reported};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{Item, from_item, key, n, s, to_item};
use crate::store::dynamo::items::{
    POST_ON_BOARD, POST_SK, REPORT_SK_PREFIX, ReportItem, ReportPointerItem, ReporterItem, comment_sk, post_pk,
    report_pointer_sk, reporter_sk, reports_pk,
};
use crate::store::dynamo::purges::purge_marker;
use crate::store::dynamo::transact::Condition;
use crate::store::dynamo::transact::{Race, TxFailure, failed_at, retry_races};
use crate::store::{Claim, Completion, StoreError, StoreResult, cursor, from_json, to_json};

/// How long a reporter stays counted on a report that stays open: a
/// reporter's item expires (TTL) after it, so the post partition does not
/// keep every reporter of every report it ever had. A reporter reporting the
/// same open report again after that is counted again.
const REPORTER_SECONDS: i64 = 90 * 24 * 60 * 60;

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

    /// The report pointers in a post's partition: its own and its comments'.
    pub(super) async fn report_pointers(&self, post_id: &str) -> StoreResult<Vec<ReportPointerItem>> {
        self.all_under(&post_pk(post_id), Some(REPORT_SK_PREFIX))
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    /// `ADD reporters 1` on an open report, which must still be open.
    fn count_reporter(&self, board: &str, report_id: &str) -> StoreResult<TransactWriteItem> {
        self.update(
            key(reports_pk(board), report_id.to_owned()),
            "ADD reporters :one",
            Some("attribute_exists(PK)"),
            &[],
            &[(":one", n(1))],
        )
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
}

/// The target's pointer (GetItem), then one transaction, the target checked
/// in it: with an open report, the reporter's item (if new) and the
/// report's count; without, the pointer, the report and the reporter. With
/// `claim`, the completion is in it; a reporter counted already writes the
/// completion alone.
pub(super) async fn report(
    store: &DynamoStore,
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
    let (pointer_key, shown, reporter_item) = (&pointer_key, &shown, &reporter_item);
    let gave_up = "the report kept racing other reports of the same target";
    retry_races(gave_up, (), |()| async move {
        let mut items = store.target_checks(board, &report.target)?;
        let checks = items.len();
        let target_gone = |failed: &[bool]| failed.iter().take(checks).any(|f| *f);
        let pointer = store
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
                items.push(store.put(reporter_item(&pointer.report_id)?, "attribute_not_exists(PK)")?);
                let report_at = items.len();
                items.push(store.count_reporter(board, &pointer.report_id)?);
                if let Some(done) = &done {
                    items.push(store.complete(done)?);
                }
                match store.transact(items).await {
                    Ok(()) => Ok(Race::Done(Reported::Joined(open))),
                    Err(TxFailure::Conditions(failed)) if target_gone(&failed) => Err(StoreError::NotFound),
                    // Resolved since the read: this report opens the next one.
                    Err(TxFailure::Conditions(failed)) if failed_at(&failed, report_at) => Ok(Race::Lost(())),
                    // Counted already: joins without counting.
                    Err(TxFailure::Conditions(failed)) if failed_at(&failed, reporter_at) => {
                        if let Some(done) = &done {
                            store.complete_alone(done).await?;
                        }
                        Ok(Race::Done(Reported::Joined(open)))
                    }
                    Err(TxFailure::Conditions(_)) => Err(StoreError::ClaimLost),
                    Err(TxFailure::Store(e)) => Err(e),
                }
            }
            None => {
                let done = claim
                    .map(|c| to_json(shown).map(|body| c.complete(201, body)))
                    .transpose()?;
                let report_json = to_json(shown)?;
                let pointer_at = items.len();
                items.push(store.put(
                    to_item(&ReportPointerItem {
                        pk: post_pk(post_id),
                        sk: report_pointer_sk(&report.target),
                        report_id: shown.id.clone(),
                        board: board.to_owned(),
                        report: report_json.clone(),
                    })?,
                    "attribute_not_exists(PK)",
                )?);
                items.push(store.put(
                    to_item(&ReportItem {
                        pk: reports_pk(board),
                        sk: shown.id.clone(),
                        report_id: shown.id.clone(),
                        report: report_json,
                        reporters: 1,
                    })?,
                    "attribute_not_exists(PK)",
                )?);
                items.push(store.put(reporter_item(&shown.id)?, "attribute_not_exists(PK)")?);
                let claim_at = items.len();
                if let Some(done) = &done {
                    items.push(store.complete(done)?);
                }
                match store.transact(items).await {
                    Ok(()) => Ok(Race::Done(Reported::Opened(shown.clone()))),
                    Err(TxFailure::Conditions(failed)) if target_gone(&failed) => Err(StoreError::NotFound),
                    // Another first report of the target came first: join it.
                    Err(TxFailure::Conditions(failed)) if failed_at(&failed, pointer_at) => Ok(Race::Lost(())),
                    Err(TxFailure::Conditions(failed)) if done.is_some() && failed_at(&failed, claim_at) => {
                        Err(StoreError::ClaimLost)
                    }
                    Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("report id collision".into())),
                    Err(TxFailure::Store(e)) => Err(e),
                }
            }
        }
    })
    .await
}

/// One Query of the board's open reports, newest first (more past the 1 MB
/// cap), each with its count.
pub(super) async fn list_reports(
    store: &DynamoStore,
    board: &BoardSlug,
    limit: PageLimit,
    cursor: Option<&str>,
) -> StoreResult<ReportPage> {
    let after = cursor.map(cursor::decode).transpose()?;
    let limit = limit.get();
    let items = store
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

/// The report (GetItem), then one transaction: its delete, its pointer's
/// (if it names this report) and the completion. Its reporters stay until
/// their TTL or the post's purge (they name the report, so no later report
/// counts them).
pub(super) async fn resolve_report(
    store: &DynamoStore,
    board: &BoardSlug,
    id: &ReportId,
    done: Option<&Completion>,
) -> StoreResult<bool> {
    let board = board.as_str();
    let report_key = key(reports_pk(board), id.as_str().to_owned());
    let Some(item) = store.get(report_key.clone()).await? else {
        return Ok(false);
    };
    let found: ReportItem = from_item(item)?;
    let target = from_json::<Report>(&found.report)?.target;
    let pointer_key = key(post_pk(target.post_id()), report_pointer_sk(&target));
    let (report_key, pointer_key) = (&report_key, &pointer_key);
    // The state: whether the pointer still names this report.
    let gave_up = "the report could not be resolved";
    retry_races(gave_up, true, |with_pointer| async move {
        let mut items = vec![store.delete(report_key.clone(), Some("attribute_exists(PK)"))?];
        if with_pointer {
            // Gone already (its post was deleted and purged) is fine.
            items.push(store.delete(
                pointer_key.clone(),
                Condition::new("attribute_not_exists(PK) OR report_id = :id").values(&[(":id", s(id.as_str()))]),
            )?);
        }
        let claim_at = items.len();
        if let Some(done) = done {
            items.push(store.complete(done)?);
        }
        match store.transact(items).await {
            Ok(()) => Ok(Race::Done(true)),
            Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => Ok(Race::Done(false)),
            Err(TxFailure::Conditions(failed)) if done.is_some() && failed_at(&failed, claim_at) => {
                Err(StoreError::ClaimLost)
            }
            // The pointer names another report: leave it.
            Err(TxFailure::Conditions(_)) if with_pointer => Ok(Race::Again(false)),
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("the report could not be resolved".into())),
            Err(TxFailure::Store(e)) => Err(e),
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::dynamo::attributes::pk_of;

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
