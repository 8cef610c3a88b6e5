//! [`Notifications`] on DynamoDB (docs/storage.md,
//! Notifications and blocks). The items:
//!
//! - `NOTIFY#<member>` / `N#<id>`: one notification; ids are ULIDs, so the
//!   partition reads newest first and a day's notifications are a key range.
//! - `NOTIFY#<member>` / `STATE`: the member's read mark and, per UTC day of
//!   the last [`NOTIFICATION_DAYS`], how many notifications they have
//!   (`t<yyyymmdd>`) and how many are unread (`u<yyyymmdd>`). Every write of
//!   it is conditioned on its version `v`, so the counts are exact under
//!   racing writes, and the unread count is one GetItem of a small item.
//!   Counting by day is what lets the table's TTL delete old notifications
//!   without telling anyone: a day older than the window is neither listed
//!   nor counted, whether TTL took its items yet or not.
//! - `NOTIFIED#<post>` / `<text id>`: which notifications a post or comment
//!   made (`sent`), or that it was withdrawn, so a text notifies once and a
//!   late or repeated add of a withdrawn one changes nothing.
//!
//! A member's blocks are in `blocks.rs`; forgetting a member deletes them
//! with their notifications.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder as QueryBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, TransactWriteItem};
use serde::{Deserialize, Serialize};

use super::DynamoStore;
use super::attributes::{Item, from_item, key, n, s, text, to_item};
use super::blocks::blocks_key;
use super::transact::{Race, TRANSACTION_ITEMS, TxFailure, failed_at, retry_races};
use crate::domain::notifications::MAX_NOTIFICATIONS;
use crate::domain::{
    Author, MemberId, NewNotification, Notification, NotificationKind, NotificationPage, PageLimit, TextRef, new_id,
};
use crate::store::{Notifications, StoreError, StoreResult, cursor};

mod records;
mod state;

use crate::store::dynamo::metered::Metered;
use records::*;
use state::*;

fn notify_pk(member: &str) -> String {
    format!("NOTIFY#{member}")
}

const NOTIFICATION_PREFIX: &str = "N#";
/// Sorts after every notification's SK: the upper end of their key range.
const NOTIFICATIONS_END: &str = "N#~";
const STATE_SK: &str = "STATE";

fn notification_sk(id: &str) -> String {
    format!("{NOTIFICATION_PREFIX}{id}")
}

/// A notification item (PK `NOTIFY#<member>`, SK `N#<id>`). Its id is in
/// its SK only: an `id` attribute would put it in the `ById` index.
#[derive(Serialize, Deserialize)]
struct NotificationItem {
    #[serde(rename = "PK")]
    pk: String,
    #[serde(rename = "SK")]
    sk: String,
    kind: String,
    board: String,
    post_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    comment_id: Option<String>,
    text_id: String,
    actor: Author,
    excerpt: String,
    created_at: String,
    expires_at: i64,
}

impl DynamoStore {
    /// A member's state, read consistently.
    async fn notify_state(&self, member: &str) -> StoreResult<State> {
        Ok(State::of(self.get(state_key(member)).await?.as_ref()))
    }

    fn state_write(&self, member: &str, old: &State, next: &State) -> StoreResult<TransactWriteItem> {
        let update = old.update_to(next);
        let names: Vec<(&str, &str)> = update.names.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let values: Vec<(&str, AttributeValue)> = update.values.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        self.update(
            state_key(member),
            &update.expression,
            Some(&update.condition),
            &names,
            &values,
        )
    }

    /// One UpdateItem of a member's state: false when another write came first.
    async fn write_state(&self, member: &str, old: &State, next: &State) -> StoreResult<bool> {
        let update = old.update_to(next);
        self.update_if(
            state_key(member),
            &update.expression,
            &update.condition,
            update.names,
            update.values,
        )
        .await
    }

    /// The SKs of a member's kept notifications between `from` and `to`
    /// (inclusive), oldest first unless `newest_first`, at most `limit`;
    /// whole items when `whole`, else the SK only.
    async fn notification_range(
        &self,
        member: &str,
        from: &str,
        to: &str,
        newest_first: bool,
        limit: Option<usize>,
        whole: bool,
    ) -> StoreResult<Vec<Item>> {
        let shape = |q: QueryBuilder| {
            q.key_condition_expression("PK = :pk AND SK BETWEEN :from AND :to")
                .expression_attribute_values(":from", s(from))
                .expression_attribute_values(":to", s(to))
                .set_projection_expression((!whole).then(|| "SK".to_owned()))
                .scan_index_forward(!newest_first)
        };
        self.query_all(&notify_pk(member), limit, &shape).await
    }

    /// Deletes notifications `ids` of `member` with their counts, those
    /// still there; in transactions of at most 99 deletes and the state.
    async fn remove_notifications(&self, member: &str, ids: Vec<String>) -> StoreResult<()> {
        for chunk in ids.chunks(TRANSACTION_ITEMS - 1) {
            retry_races(
                "removing notifications kept losing races",
                chunk.to_vec(),
                |ids: Vec<String>| async move {
                    if ids.is_empty() {
                        return Ok(Race::Done(()));
                    }
                    let old = self.notify_state(member).await?;
                    let mut next = old.clone();
                    let mut items = Vec::with_capacity(ids.len() + 1);
                    for id in &ids {
                        next = next.with_removed(id, &day_of(id)?);
                        items.push(self.delete(
                            key(notify_pk(member), notification_sk(id)),
                            Some("attribute_exists(PK)"),
                        )?);
                    }
                    items.push(self.state_write(member, &old, &next)?);
                    match self.transact(items).await {
                        Ok(()) => Ok(Race::Done(())),
                        // Gone already (trimmed, withdrawn by a redelivery):
                        // the rest without them.
                        Err(TxFailure::Conditions(failed)) if failed[..ids.len()].contains(&true) => Ok(Race::Again(
                            ids.into_iter()
                                .enumerate()
                                .filter(|(at, _)| !failed_at(&failed, *at))
                                .map(|(_, id)| id)
                                .collect(),
                        )),
                        Err(TxFailure::Conditions(_)) => Ok(Race::Lost(ids)),
                        Err(TxFailure::Store(e)) => Err(e),
                    }
                },
            )
            .await?;
        }
        Ok(())
    }

    /// Keeps the member's newest [`MAX_NOTIFICATIONS`].
    async fn trim_notifications(&self, member: &str) -> StoreResult<()> {
        let state = self.notify_state(member).await?;
        let excess = usize::try_from(state.total_count())
            .unwrap_or(0)
            .saturating_sub(MAX_NOTIFICATIONS);
        if excess == 0 {
            return Ok(());
        }
        let floor = kept_floor(first_kept_day());
        let oldest = self
            .notification_range(member, &floor, NOTIFICATIONS_END, false, Some(excess), false)
            .await?;
        let ids = oldest
            .iter()
            .filter_map(|item| text(item, "SK")?.strip_prefix(NOTIFICATION_PREFIX).map(str::to_owned))
            .collect();
        self.remove_notifications(member, ids).await
    }

    /// Marks a text's record withdrawn (creating it when the text notified
    /// nobody) and answers what it had sent.
    async fn withdraw_record(&self, post: &str, text_id: &str) -> StoreResult<BTreeMap<String, Vec<String>>> {
        let pk = notified_pk(post);
        let touched = [pk.clone()];
        let out = self
            .client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, text_id.to_owned())))
            .update_expression("SET withdrawn = :yes, expires_at = if_not_exists(expires_at, :expires)")
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .expression_attribute_values(":expires", n(record_expiry()))
            .return_values(ReturnValue::AllOld)
            .metered(self, &touched)
            .await?;
        Ok(sent_of(out.attributes.as_ref()))
    }

    /// Every text record of a post (its own and its comments'), read consistently.
    async fn records_of(&self, post: &str) -> StoreResult<Vec<Item>> {
        let shape = |q: QueryBuilder| q.key_condition_expression("PK = :pk");
        self.query_all(&notified_pk(post), None, &shape).await
    }
}

#[async_trait]
impl Notifications for DynamoStore {
    /// One BatchGetItem of the recipients' states, then one transaction:
    /// the text's record (only if new), a check that its post was not
    /// withdrawn, and per recipient the notification and its state.
    async fn add_notifications(&self, written: &TextRef, notifications: &[NewNotification]) -> StoreResult<bool> {
        let post = written.post.post.as_str();
        let recipients: Vec<&str> = notifications.iter().map(|n| n.recipient.as_str()).collect();
        let added = retry_races("notifying kept losing races", (), |()| {
            let recipients = &recipients;
            async move {
                let states: HashMap<String, State> = self
                    .batch_get(recipients.iter().map(|m| state_key(m)).collect(), true, None)
                    .await?
                    .iter()
                    .filter_map(|item| {
                        let member = text(item, "PK")?.strip_prefix("NOTIFY#")?.to_owned();
                        Some((member, State::of(Some(item))))
                    })
                    .collect();
                let mut sent = Vec::with_capacity(notifications.len());
                let mut writes = Vec::with_capacity(notifications.len() * 2);
                for notification in notifications {
                    let member = notification.recipient.as_str();
                    let old = states.get(member).cloned().unwrap_or_default();
                    // Above the member's mark, whatever the clock says: new is unread.
                    let mut id = new_id();
                    if id <= old.mark {
                        let mark =
                            ulid::Ulid::from_string(&old.mark).map_err(|e| StoreError::Internal(e.to_string()))?;
                        id = mark.increment().unwrap_or(mark).to_string();
                    }
                    let day = day_of(&id)?;
                    let item = to_item(&NotificationItem {
                        pk: notify_pk(member),
                        sk: notification_sk(&id),
                        kind: notification.kind.as_str().to_owned(),
                        board: written.post.board.as_str().to_owned(),
                        post_id: post.to_owned(),
                        comment_id: written.comment.clone(),
                        text_id: written.id().to_owned(),
                        actor: notification.actor.clone(),
                        excerpt: notification.excerpt.clone(),
                        created_at: notification.created_at.clone(),
                        expires_at: expires_at(&day),
                    })?;
                    writes.push(self.overwrite(item)?);
                    writes.push(self.state_write(member, &old, &old.with_added(&day))?);
                    sent.push(sent_entry(member, &id));
                }
                let record = Item::from([
                    ("PK".to_owned(), s(notified_pk(post))),
                    ("SK".to_owned(), s(written.id())),
                    ("sent".to_owned(), AttributeValue::L(sent)),
                    ("expires_at".to_owned(), n(record_expiry())),
                ]);
                let mut items = vec![self.put(record, "attribute_not_exists(PK)")?];
                if written.comment.is_some() {
                    items.push(self.check(key(notified_pk(post), post.to_owned()), WITHDRAWN_CHECK, &[])?);
                }
                let guards = items.len();
                items.extend(writes);
                match self.transact(items).await {
                    Ok(()) => Ok(Race::Done(true)),
                    // Notified before, or withdrawn (the text or its post).
                    Err(TxFailure::Conditions(failed)) if failed[..guards].contains(&true) => Ok(Race::Done(false)),
                    // A recipient's state changed since it was read.
                    Err(TxFailure::Conditions(_)) => Ok(Race::Lost(())),
                    Err(TxFailure::Store(e)) => Err(e),
                }
            }
        })
        .await?;
        if added {
            for member in recipients {
                self.trim_notifications(member).await?;
            }
        }
        Ok(added)
    }

    /// The record first (a comment add after it fails), then the
    /// notifications it names; for a post, every comment's too.
    async fn withdraw_notifications(&self, text: &TextRef) -> StoreResult<()> {
        let post = text.post.post.as_str();
        let mut sent = self.withdraw_record(post, text.id()).await?;
        if text.comment.is_none() {
            for record in self.records_of(post).await? {
                for (member, ids) in sent_of(Some(&record)) {
                    sent.entry(member).or_default().extend(ids);
                }
            }
        }
        for (member, mut ids) in sent {
            ids.sort();
            ids.dedup();
            self.remove_notifications(&member, ids).await?;
        }
        Ok(())
    }

    async fn disown_notifications(&self, text: &TextRef) -> StoreResult<()> {
        let record = self
            .get(key(notified_pk(text.post.post.as_str()), text.id().to_owned()))
            .await?;
        let deleted = serde_dynamo::to_attribute_value::<_, AttributeValue>(Author::deleted_member())
            .map_err(|e| StoreError::Internal(format!("encoding an author: {e}")))?;
        for (member, ids) in sent_of(record.as_ref()) {
            for id in ids {
                // Withdrawn or trimmed meanwhile (false): nothing to disown.
                self.update_if(
                    key(notify_pk(&member), notification_sk(&id)),
                    "SET actor = :deleted",
                    "attribute_exists(PK)",
                    HashMap::new(),
                    HashMap::from([(":deleted".to_owned(), deleted.clone())]),
                )
                .await?;
            }
        }
        Ok(())
    }

    /// The state (for the read mark) and one Query of the kept days.
    async fn notifications(
        &self,
        member: &MemberId,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<NotificationPage> {
        let member = member.as_str();
        let before = cursor.map(cursor::decode).transpose()?;
        let limit = limit.get();
        let state = self.notify_state(member).await?;
        let floor = kept_floor(first_kept_day());
        let upper = before.as_deref().map_or(NOTIFICATIONS_END.to_owned(), notification_sk);
        // BETWEEN includes the cursor's own item: one more, dropped below.
        let items = self
            .notification_range(member, &floor, &upper, true, Some(limit + 2), true)
            .await?;
        let mut notifications = items
            .into_iter()
            .map(from_item::<NotificationItem>)
            .filter_map(|item| {
                let item = match item {
                    Ok(item) => item,
                    Err(e) => return Some(Err(e)),
                };
                let id = item.sk.strip_prefix(NOTIFICATION_PREFIX).unwrap_or_default().to_owned();
                if before.as_deref() == Some(id.as_str()) {
                    return None;
                }
                Some(Ok(Notification {
                    read: id <= state.mark,
                    kind: match NotificationKind::parse(&item.kind) {
                        Some(kind) => kind,
                        None => {
                            return Some(Err(StoreError::Internal(format!(
                                "a stored notification kind: {}",
                                item.kind
                            ))));
                        }
                    },
                    id,
                    board: item.board,
                    post_id: item.post_id,
                    comment_id: item.comment_id,
                    actor: item.actor,
                    excerpt: item.excerpt,
                    created_at: item.created_at,
                }))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let more = notifications.len() > limit;
        notifications.truncate(limit);
        Ok(NotificationPage {
            next_cursor: more
                .then(|| notifications.last().map(|n| cursor::encode(&n.id)))
                .flatten(),
            notifications,
        })
    }

    /// One consistent GetItem of the member's state.
    async fn unread_notifications(&self, member: &MemberId) -> StoreResult<u64> {
        Ok(self.notify_state(member.as_str()).await?.unread_count())
    }

    /// Reads the state, counts what stays unread above the new mark (none
    /// when marking all) and writes both if no other write came between.
    async fn mark_notifications_read(&self, member: &MemberId, up_to: Option<&str>) -> StoreResult<u64> {
        let member = member.as_str();
        retry_races("marking notifications read kept losing races", (), |()| async move {
            let old = self.notify_state(member).await?;
            let floor = kept_floor(first_kept_day());
            let newest = self
                .notification_range(member, &floor, NOTIFICATIONS_END, true, Some(1), false)
                .await?
                .first()
                .and_then(|item| text(item, "SK")?.strip_prefix(NOTIFICATION_PREFIX).map(str::to_owned));
            // Never past the newest notification: a mark in the future would
            // make the next ones read, or leave no id above it.
            let mark = match up_to {
                Some(id) => newest.clone().map(|newest| newest.min(id.to_owned())),
                None => newest.clone(),
            };
            let Some(mark) = mark.filter(|mark| *mark > old.mark) else {
                return Ok(Race::Done(old.unread_count()));
            };
            let mut next = State {
                mark: mark.clone(),
                unread: BTreeMap::new(),
                ..old.clone()
            };
            // Below the newest, some stay unread: count them.
            if newest.as_deref() != Some(mark.as_str()) {
                let from = notification_sk(&mark).max(floor);
                for item in self
                    .notification_range(member, &from, NOTIFICATIONS_END, false, None, false)
                    .await?
                {
                    let Some(id) = text(&item, "SK").and_then(|sk| sk.strip_prefix(NOTIFICATION_PREFIX)) else {
                        continue;
                    };
                    if id > mark.as_str() {
                        *next.unread.entry(day_of(id)?).or_default() += 1;
                    }
                }
            }
            if self.write_state(member, &old, &next).await? {
                Ok(Race::Done(next.unread_count()))
            } else {
                Ok(Race::Lost(()))
            }
        })
        .await
    }

    /// DynamoDB's TTL deletes them (`expires_at`), and the counts by day
    /// forget their days: nothing to do.
    async fn expire_notifications(&self, _before: &str) -> StoreResult<u64> {
        Ok(0)
    }

    async fn forget_member(&self, member: &MemberId) -> StoreResult<()> {
        let member = member.as_str();
        let mut keys = self
            .notification_range(member, NOTIFICATION_PREFIX, NOTIFICATIONS_END, false, None, false)
            .await?
            .into_iter()
            .map(|item| key(notify_pk(member), text(&item, "SK").unwrap_or_default().to_owned()))
            .collect::<Vec<_>>();
        keys.push(state_key(member));
        keys.push(blocks_key(member));
        self.delete_all(keys).await
    }
}
