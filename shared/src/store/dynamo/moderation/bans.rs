//! Bans: a record per ban under `BANS#<board>` (the list), and an item per
//! banned subject (a member, an address key) naming its latest ban (the
//! check every write makes, by key).

use std::collections::HashMap;

use super::partitions::paged;
use crate::domain::{Ban, BanId, BanPage, BanRecord, BanSubject, BoardSlug, LogEntry, PageLimit};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{Item, from_item, key, s, to_item};
use crate::store::dynamo::items::{BAN_SK, BanItem, ban_subject_pk, bans_pk};
use crate::store::dynamo::transact::Condition;
use crate::store::dynamo::transact::{Race, TxFailure, failed_at, retry_races};
use crate::store::{Completion, StoreError, StoreResult, cursor, from_json, to_json};

fn ban_from(item: &BanItem) -> StoreResult<BanRecord> {
    Ok(BanRecord {
        ban: from_json::<Ban>(&item.ban)?,
        subject: crate::store::ban_subject(&item.subject)?,
        also: item.also.as_deref().map(crate::store::ban_subject).transpose()?,
        expires: item.expires,
    })
}

/// One request, consistent (an unban takes effect at once): a GetItem of
/// the subject's item for one subject, one BatchGetItem of all of them for
/// several (a member's write: the member and the address key). A ban that
/// has ended is skipped (its item goes by TTL, late).
pub(super) async fn active_ban(
    store: &DynamoStore,
    board: &BoardSlug,
    subjects: &[BanSubject],
    now: i64,
) -> StoreResult<Option<BanRecord>> {
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
        [pk] => store.get(key(pk.clone(), BAN_SK.into())).await?.into_iter().collect(),
        _ => {
            let keys = pks.iter().map(|pk| key(pk.clone(), BAN_SK.into())).collect();
            store.batch_get(keys, true, None).await?
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

/// The subject's item (GetItem), then one transaction: the subject's item
/// (on the one just read), the second subject's item, the replaced ban's
/// record deleted (with its second subject's item while that still names
/// it), the new record, the log entry and the completion. A race with
/// another ban of the same subject starts over. A second subject's item
/// names the latest ban that has it.
pub(super) async fn ban(
    store: &DynamoStore,
    record: &BanRecord,
    entry: &LogEntry,
    done: Option<&Completion>,
) -> StoreResult<()> {
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
    let (subject, also, subject_key, item) = (&subject, &also, &subject_key, &item);
    // The state: whether to leave the replaced ban's second subject's item
    // (it names another ban).
    let gave_up = "the ban kept racing other bans of the same writer";
    retry_races(gave_up, false, |keep_old_also| async move {
        let old = store
            .get(subject_key.clone())
            .await?
            .map(from_item::<BanItem>)
            .transpose()?;
        let subject_item = item(ban_subject_pk(board, subject), BAN_SK.into())?;
        let mut items = vec![match &old {
            None => store.put(subject_item, "attribute_not_exists(PK)")?,
            // This very ban: an earlier attempt of this call committed
            // (its answer was lost and the SDK sent it again).
            Some(old) if old.ban_id == ban_id => return Ok(Race::Done(())),
            Some(old) => store.put(
                subject_item,
                Condition::new("ban_id = :old").values(&[(":old", s(old.ban_id.clone()))]),
            )?,
        }];
        if let Some(also) = also {
            items.push(store.overwrite(item(ban_subject_pk(board, also), BAN_SK.into())?)?);
        }
        let mut old_also_at = None;
        if let Some(old) = &old {
            items.push(store.delete(key(bans_pk(board), old.ban_id.clone()), None)?);
            if let Some(old_also) = old.also.as_ref().filter(|a| Some(*a) != also.as_ref())
                && !keep_old_also
            {
                old_also_at = Some(items.len());
                items.push(
                    store.delete(
                        key(ban_subject_pk(board, old_also), BAN_SK.into()),
                        Condition::new("attribute_not_exists(PK) OR ban_id = :old")
                            .values(&[(":old", s(old.ban_id.clone()))]),
                    )?,
                );
            }
        }
        items.push(store.put(item(bans_pk(board), ban_id.to_owned())?, "attribute_not_exists(PK)")?);
        items.push(store.log_put(board, entry)?);
        let claim_at = items.len();
        if let Some(done) = done {
            items.push(store.complete(done)?);
        }
        match store.transact(items).await {
            Ok(()) => Ok(Race::Done(())),
            // Another ban of the subject came between the read and the write.
            Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => Ok(Race::Lost(keep_old_also)),
            // The replaced ban's second subject names a later ban: leave it.
            Err(TxFailure::Conditions(failed)) if old_also_at.is_some_and(|at| failed_at(&failed, at)) => {
                Ok(Race::Lost(true))
            }
            Err(TxFailure::Conditions(failed)) if done.is_some() && failed_at(&failed, claim_at) => {
                Err(StoreError::ClaimLost)
            }
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("ban or log entry id collision".into())),
            Err(TxFailure::Store(e)) => Err(e),
        }
    })
    .await
}

/// One consistent GetItem of the ban's record, active or not (as SQLite,
/// which keeps ended bans; here an ended one goes by TTL eventually).
pub(super) async fn ban_by_id(store: &DynamoStore, board: &BoardSlug, id: &BanId) -> StoreResult<Option<BanRecord>> {
    let Some(item) = store.get(key(bans_pk(board.as_str()), id.as_str().to_owned())).await? else {
        return Ok(None);
    };
    ban_from(&from_item(item)?).map(Some)
}

/// One transaction: the record's delete (if there), the subject item's and
/// the second subject item's (each if it names this ban) and the log entry.
pub(super) async fn unban(store: &DynamoStore, record: &BanRecord, entry: &LogEntry) -> StoreResult<bool> {
    let board = record.ban.board.as_str();
    let ban_id = record.ban.id.as_str();
    let subjects: Vec<Item> = [Some(&record.subject), record.also.as_ref()]
        .into_iter()
        .flatten()
        .map(|subject| key(ban_subject_pk(board, &subject.key()), BAN_SK.into()))
        .collect();
    // The state: the subjects' items still to delete.
    let gave_up = "the unban kept racing other bans of the same writer";
    retry_races(gave_up, subjects, |mut subjects| async move {
        let mut items = vec![store.delete(key(bans_pk(board), ban_id.to_owned()), Some("attribute_exists(PK)"))?];
        for subject_key in &subjects {
            // Gone already (an ended ban's item may go by TTL first) is fine.
            items.push(store.delete(
                subject_key.clone(),
                Condition::new("attribute_not_exists(PK) OR ban_id = :id").values(&[(":id", s(ban_id))]),
            )?);
        }
        items.push(store.log_put(board, entry)?);
        match store.transact(items).await {
            Ok(()) => Ok(Race::Done(true)),
            Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => Ok(Race::Done(false)),
            // A subject's item names a later ban (this ended one's item went
            // by TTL, then the subject was banned again): lift this one,
            // leave that.
            Err(TxFailure::Conditions(failed)) if (1..=subjects.len()).any(|at| failed_at(&failed, at)) => {
                let mut at = 0;
                subjects.retain(|_| {
                    at += 1;
                    !failed_at(&failed, at)
                });
                Ok(Race::Again(subjects))
            }
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
            Err(TxFailure::Store(e)) => Err(e),
        }
    })
    .await
}

/// Queries of the board's ban records, newest first, ended bans filtered
/// out: on until `limit + 1` active ones or the partition's end (one Query
/// unless many ended bans are in the way).
pub(super) async fn list_bans(
    store: &DynamoStore,
    board: &BoardSlug,
    limit: PageLimit,
    cursor: Option<&str>,
    now: i64,
) -> StoreResult<BanPage> {
    let after = cursor.map(cursor::decode).transpose()?;
    let limit = limit.get();
    let items = store
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

#[cfg(test)]
mod tests {
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
}
