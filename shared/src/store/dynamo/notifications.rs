//! [`Notifications`] and [`Blocks`] on DynamoDB (docs/storage.md,
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
//! - `BLOCKS#<member>` / `BLOCKS`: every block of the member in one map, read
//!   with one GetItem (at most 500 entries, ~90 KB).

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder as QueryBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity, ReturnValue, TransactWriteItem};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use super::DynamoStore;
use super::attributes::{Item, from_item, key, n, s, text, to_item};
use super::transact::{Race, TRANSACTION_ITEMS, TxFailure, failed_at, retry_races, sdk_error};
use crate::domain::notifications::{MAX_BLOCKS, MAX_NOTIFICATIONS, NOTIFICATION_DAYS};
use crate::domain::{
    Author, BlockEntry, Blocked, Blocking, Member, MemberId, NewNotification, Notification, NotificationKind,
    NotificationPage, PageLimit, TextRef, new_id,
};
use crate::store::{Blocks, Notifications, StoreError, StoreResult, cursor};

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

fn notified_pk(post: &str) -> String {
    format!("NOTIFIED#{post}")
}

fn blocks_key(member: &str) -> Item {
    key(format!("BLOCKS#{member}"), "BLOCKS".to_owned())
}

/// The day a notification id (a ULID) was made on, as `yyyymmdd`.
fn day_of(id: &str) -> StoreResult<String> {
    let ulid = ulid::Ulid::from_string(id).map_err(|e| StoreError::Internal(format!("a notification id: {e}")))?;
    let at = DateTime::<Utc>::from_timestamp_millis(i64::try_from(ulid.timestamp_ms()).unwrap_or(i64::MAX))
        .ok_or_else(|| StoreError::Internal(format!("a notification id's time: {id}")))?;
    Ok(at.format("%Y%m%d").to_string())
}

/// The oldest day still kept: notifications of earlier days are neither
/// listed nor counted (TTL deletes them a little later).
fn first_kept_day() -> NaiveDate {
    (Utc::now() - chrono::Duration::days(NOTIFICATION_DAYS)).date_naive()
}

/// The SK below which every notification is older than the kept days.
fn kept_floor(first_day: NaiveDate) -> String {
    let ms = first_day
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc().timestamp_millis())
        .unwrap_or(0);
    notification_sk(&ulid::Ulid::from_parts(u64::try_from(ms).unwrap_or(0), 0).to_string())
}

/// When TTL may delete a notification of `day`: two days after it leaves
/// the kept days (TTL itself takes up to a few days more).
fn expires_at(day: &str) -> i64 {
    NaiveDate::parse_from_str(day, "%Y%m%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp() + (NOTIFICATION_DAYS + 2) * 86_400)
        .unwrap_or(0)
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

/// What a member's `STATE` item says.
#[derive(Clone, Debug, Default, PartialEq)]
struct State {
    /// Its version: 0 while there is no item.
    version: i64,
    /// Every notification id up to it is read ("" when none is).
    mark: String,
    /// Per day (`yyyymmdd`): how many notifications, and how many unread.
    total: BTreeMap<String, i64>,
    unread: BTreeMap<String, i64>,
}

impl State {
    fn of(item: Option<&Item>) -> Self {
        let Some(item) = item else {
            return State::default();
        };
        let number = |v: &AttributeValue| v.as_n().ok().and_then(|n| n.parse::<i64>().ok()).unwrap_or(0);
        let mut state = State {
            version: item.get("v").map(number).unwrap_or(0),
            mark: text(item, "mark").unwrap_or_default().to_owned(),
            ..State::default()
        };
        for (name, value) in item {
            let counts = match name.split_at_checked(1) {
                Some(("t", day)) if is_day(day) => &mut state.total,
                Some(("u", day)) if is_day(day) => &mut state.unread,
                _ => continue,
            };
            counts.insert(name[1..].to_owned(), number(value));
        }
        state
    }

    /// Of the days still kept.
    fn unread_count(&self) -> u64 {
        kept_sum(&self.unread)
    }

    fn total_count(&self) -> u64 {
        kept_sum(&self.total)
    }

    /// The state with one notification `id` more (unread: above the mark).
    fn with_added(&self, day: &str) -> Self {
        let mut next = self.clone();
        *next.total.entry(day.to_owned()).or_default() += 1;
        *next.unread.entry(day.to_owned()).or_default() += 1;
        next
    }

    /// The state without notification `id`.
    fn with_removed(&self, id: &str, day: &str) -> Self {
        let mut next = self.clone();
        *next.total.entry(day.to_owned()).or_default() -= 1;
        if id > self.mark.as_str() {
            *next.unread.entry(day.to_owned()).or_default() -= 1;
        }
        next
    }

    /// The update that turns `self` (as read) into `next`, if no other
    /// write came between: `(expression, condition, names, values)`. Days
    /// no longer kept and zero counts are removed, so the item stays small.
    fn update_to(&self, next: &State) -> Update {
        let first_day = first_kept_day().format("%Y%m%d").to_string();
        let mut sets = vec!["#v = :v".to_owned()];
        let mut removes = Vec::new();
        let mut names = HashMap::from([("#v".to_owned(), "v".to_owned())]);
        let mut values = HashMap::from([(":v".to_owned(), n(self.version + 1))]);
        if next.mark != self.mark {
            sets.push("#mark = :mark".to_owned());
            names.insert("#mark".to_owned(), "mark".to_owned());
            values.insert(":mark".to_owned(), s(next.mark.clone()));
        }
        for (prefix, old, new) in [("t", &self.total, &next.total), ("u", &self.unread, &next.unread)] {
            let days: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
            for day in days {
                let (was, will) = (old.get(day).copied(), new.get(day).copied().unwrap_or(0));
                let placeholder = format!("#{prefix}{day}");
                if will > 0 && *day >= first_day {
                    if was != Some(will) {
                        sets.push(format!("{placeholder} = :{prefix}{day}"));
                        values.insert(format!(":{prefix}{day}"), n(will));
                        names.insert(placeholder, format!("{prefix}{day}"));
                    }
                } else if was.is_some() {
                    removes.push(placeholder.clone());
                    names.insert(placeholder, format!("{prefix}{day}"));
                }
            }
        }
        let mut expression = format!("SET {}", sets.join(", "));
        if !removes.is_empty() {
            expression += &format!(" REMOVE {}", removes.join(", "));
        }
        let condition = if self.version == 0 {
            "attribute_not_exists(#v)".to_owned()
        } else {
            values.insert(":was".to_owned(), n(self.version));
            "#v = :was".to_owned()
        };
        Update {
            expression,
            condition,
            names,
            values,
        }
    }
}

fn is_day(s: &str) -> bool {
    s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit())
}

fn kept_sum(counts: &BTreeMap<String, i64>) -> u64 {
    let first_day = first_kept_day().format("%Y%m%d").to_string();
    let sum: i64 = counts.range(first_day..).map(|(_, n)| *n).sum();
    u64::try_from(sum).unwrap_or(0)
}

/// An update expression with its condition and placeholders.
struct Update {
    expression: String,
    condition: String,
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

fn state_key(member: &str) -> Item {
    key(notify_pk(member), STATE_SK.to_owned())
}

/// A `sent` entry of a text's record: `<member> <notification id>`.
fn sent_entry(member: &str, id: &str) -> AttributeValue {
    s(format!("{member} {id}"))
}

/// The notifications a text's record says it made, by member.
fn sent_of(record: Option<&Item>) -> BTreeMap<String, Vec<String>> {
    let mut by_member: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let entries = record
        .and_then(|r| r.get("sent"))
        .and_then(|v| v.as_l().ok())
        .map(Vec::as_slice)
        .unwrap_or_default();
    for entry in entries.iter().filter_map(|e| e.as_s().ok()) {
        if let Some((member, id)) = entry.split_once(' ') {
            by_member.entry(member.to_owned()).or_default().push(id.to_owned());
        }
    }
    by_member
}

const WITHDRAWN_CHECK: &str = "attribute_not_exists(withdrawn)";

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
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(pk, text_id.to_owned())))
            .update_expression("SET withdrawn = :yes, expires_at = if_not_exists(expires_at, :expires)")
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .expression_attribute_values(":expires", n(record_expiry()))
            .return_values(ReturnValue::AllOld)
            .send()
            .await
            .inspect(|out| self.record(out, &touched))
            .map_err(sdk_error)?;
        Ok(sent_of(out.attributes.as_ref()))
    }

    /// Every text record of a post (its own and its comments'), read consistently.
    async fn records_of(&self, post: &str) -> StoreResult<Vec<Item>> {
        let shape = |q: QueryBuilder| q.key_condition_expression("PK = :pk");
        self.query_all(&notified_pk(post), None, &shape).await
    }
}

/// A text's record outlives its notifications: a stream keeps records 24
/// hours, so no add comes later.
fn record_expiry() -> i64 {
    Utc::now().timestamp() + (NOTIFICATION_DAYS + 2) * 86_400
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

/// A block as its map entry stores it.
#[derive(Serialize, Deserialize)]
struct BlockValue {
    created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    member: Option<Member>,
}

#[async_trait]
impl Blocks for DynamoStore {
    /// One UpdateItem adding the entry when the map exists, has room and
    /// lacks it; when its condition fails, one GetItem says why (and the
    /// member's first block puts the item).
    async fn block(&self, member: &MemberId, entry: &BlockEntry) -> StoreResult<Blocking> {
        let member = member.as_str();
        let blocked = entry.blocked.key();
        let value = BlockValue {
            created_at: entry.created_at.clone(),
            member: entry.member.clone(),
        };
        let value = serde_dynamo::to_attribute_value::<_, AttributeValue>(&value)
            .map_err(|e| StoreError::Internal(format!("encoding a block: {e}")))?;
        retry_races("blocking kept losing races", (), |()| {
            let (blocked, value) = (&blocked, &value);
            async move {
                let added = self
                    .update_if(
                        blocks_key(member),
                        "SET #blocked.#key = :value",
                        "attribute_exists(#blocked) AND attribute_not_exists(#blocked.#key) AND size(#blocked) < :max",
                        HashMap::from([
                            ("#blocked".to_owned(), "blocked".to_owned()),
                            ("#key".to_owned(), blocked.clone()),
                        ]),
                        HashMap::from([
                            (":value".to_owned(), value.clone()),
                            (":max".to_owned(), n(MAX_BLOCKS as i64)),
                        ]),
                    )
                    .await?;
                if added {
                    return Ok(Race::Done(Blocking::Added));
                }
                let Some(item) = self.get(blocks_key(member)).await? else {
                    let mut item = blocks_key(member);
                    item.insert(
                        "blocked".to_owned(),
                        AttributeValue::M(HashMap::from([(blocked.clone(), value.clone())])),
                    );
                    return Ok(if self.put_new(item, None).await? {
                        Race::Done(Blocking::Added)
                    } else {
                        Race::Again(())
                    });
                };
                let map = item.get("blocked").and_then(|v| v.as_m().ok());
                Ok(match map {
                    Some(map) if map.contains_key(blocked) => Race::Done(Blocking::Already),
                    Some(map) if map.len() >= MAX_BLOCKS => Race::Done(Blocking::Full),
                    // Unblocked or changed between the two requests.
                    _ => Race::Lost(()),
                })
            }
        })
        .await
    }

    /// One UpdateItem removing the entry if it is there.
    async fn unblock(&self, member: &MemberId, blocked: &Blocked) -> StoreResult<bool> {
        self.update_if(
            blocks_key(member.as_str()),
            "REMOVE #blocked.#key",
            "attribute_exists(#blocked.#key)",
            HashMap::from([
                ("#blocked".to_owned(), "blocked".to_owned()),
                ("#key".to_owned(), blocked.key()),
            ]),
            HashMap::new(),
        )
        .await
    }

    /// One consistent GetItem: a block counts from the next request on.
    async fn blocks(&self, member: &MemberId) -> StoreResult<Vec<BlockEntry>> {
        let Some(mut item) = self.get(blocks_key(member.as_str())).await? else {
            return Ok(Vec::new());
        };
        let Some(AttributeValue::M(map)) = item.remove("blocked") else {
            return Ok(Vec::new());
        };
        let mut entries = map
            .into_iter()
            .map(|(key, value)| {
                let blocked = Blocked::from_key(&key)
                    .ok_or_else(|| StoreError::Internal(format!("a stored block does not parse: {key}")))?;
                let value: BlockValue = serde_dynamo::from_attribute_value(value)
                    .map_err(|e| StoreError::Internal(format!("decoding a block: {e}")))?;
                Ok(BlockEntry {
                    blocked,
                    created_at: value.created_at,
                    member: value.member,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        entries.sort_by(|a, b| (&a.created_at, a.blocked.key()).cmp(&(&b.created_at, b.blocked.key())));
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_update_sets_what_changed_removes_what_is_gone_and_is_conditioned_on_the_version() {
        let today = Utc::now().format("%Y%m%d").to_string();
        let old_day = "20000101".to_owned();
        let old = State {
            version: 3,
            mark: String::new(),
            total: BTreeMap::from([(today.clone(), 2), (old_day.clone(), 5)]),
            unread: BTreeMap::from([(today.clone(), 1)]),
        };
        let next = old.with_removed("01ZZZZZZZZZZZZZZZZZZZZZZZZ", &today);
        let update = old.update_to(&next);
        assert_eq!(update.condition, "#v = :was");
        assert!(
            update.expression.contains(&format!("#t{today} = :t{today}")),
            "{}",
            update.expression
        );
        // Unread went to 0 and the old day is out of the kept window: removed.
        assert!(update.expression.contains("REMOVE"), "{}", update.expression);
        assert_eq!(update.names.get(&format!("#u{today}")), Some(&format!("u{today}")));
        assert_eq!(update.names.get(&format!("#t{old_day}")), Some(&format!("t{old_day}")));
        assert_eq!(next.unread_count(), 0);
        assert_eq!(next.total_count(), 1);
        assert_eq!(State::default().update_to(&old).condition, "attribute_not_exists(#v)");
    }

    #[test]
    fn a_state_read_back_counts_only_the_kept_days() {
        let today = Utc::now().format("%Y%m%d").to_string();
        let item = Item::from([
            ("v".to_owned(), n(2)),
            ("mark".to_owned(), s("01ABC")),
            (format!("u{today}"), n(4)),
            (format!("t{today}"), n(6)),
            ("u19990101".to_owned(), n(7)),
            ("PK".to_owned(), s("NOTIFY#x")),
        ]);
        let state = State::of(Some(&item));
        assert_eq!((state.version, state.mark.as_str()), (2, "01ABC"));
        assert_eq!(state.unread_count(), 4);
        assert_eq!(state.total_count(), 6);
    }

    #[test]
    fn a_notification_id_is_dated_by_its_ulid() {
        let id = ulid::Ulid::from_parts(1_764_806_400_000, 7).to_string(); // 2025-12-04T00:00:00Z
        assert_eq!(day_of(&id).unwrap(), "20251204");
        assert!(kept_floor(NaiveDate::from_ymd_opt(2025, 12, 4).unwrap()) <= notification_sk(&id));
    }
}
