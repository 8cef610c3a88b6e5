//! A member's `STATE` item: the read mark and, per UTC day of the kept
//! window, how many notifications they have and how many are unread; every
//! write of it conditioned on its version. And the days that window counts.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, NaiveDate, Utc};

use crate::domain::notifications::NOTIFICATION_DAYS;
use crate::store::dynamo::attributes::{Item, key, n, s, text};
use crate::store::{StoreError, StoreResult};

use super::{STATE_SK, notification_sk, notify_pk};

/// The day a notification id (a ULID) was made on, as `yyyymmdd`.
pub(super) fn day_of(id: &str) -> StoreResult<String> {
    let ulid = ulid::Ulid::from_string(id).map_err(|e| StoreError::Internal(format!("a notification id: {e}")))?;
    let at = DateTime::<Utc>::from_timestamp_millis(i64::try_from(ulid.timestamp_ms()).unwrap_or(i64::MAX))
        .ok_or_else(|| StoreError::Internal(format!("a notification id's time: {id}")))?;
    Ok(at.format("%Y%m%d").to_string())
}

/// The oldest day still kept: notifications of earlier days are neither
/// listed nor counted (TTL deletes them a little later).
pub(super) fn first_kept_day() -> NaiveDate {
    (Utc::now() - chrono::Duration::days(NOTIFICATION_DAYS)).date_naive()
}

/// The SK below which every notification is older than the kept days.
pub(super) fn kept_floor(first_day: NaiveDate) -> String {
    let ms = first_day
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc().timestamp_millis())
        .unwrap_or(0);
    notification_sk(&ulid::Ulid::from_parts(u64::try_from(ms).unwrap_or(0), 0).to_string())
}

/// When TTL may delete a notification of `day`: two days after it leaves
/// the kept days (TTL itself takes up to a few days more).
pub(super) fn expires_at(day: &str) -> i64 {
    NaiveDate::parse_from_str(day, "%Y%m%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp() + (NOTIFICATION_DAYS + 2) * 86_400)
        .unwrap_or(0)
}

/// What a member's `STATE` item says.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct State {
    /// Its version: 0 while there is no item.
    pub(super) version: i64,
    /// Every notification id up to it is read ("" when none is).
    pub(super) mark: String,
    /// Per day (`yyyymmdd`): how many notifications, and how many unread.
    pub(super) total: BTreeMap<String, i64>,
    pub(super) unread: BTreeMap<String, i64>,
}

impl State {
    pub(super) fn of(item: Option<&Item>) -> Self {
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
    pub(super) fn unread_count(&self) -> u64 {
        kept_sum(&self.unread)
    }

    pub(super) fn total_count(&self) -> u64 {
        kept_sum(&self.total)
    }

    /// The state with one notification `id` more (unread: above the mark).
    pub(super) fn with_added(&self, day: &str) -> Self {
        let mut next = self.clone();
        *next.total.entry(day.to_owned()).or_default() += 1;
        *next.unread.entry(day.to_owned()).or_default() += 1;
        next
    }

    /// The state without notification `id`.
    pub(super) fn with_removed(&self, id: &str, day: &str) -> Self {
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
    pub(super) fn update_to(&self, next: &State) -> Update {
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

pub(super) fn is_day(s: &str) -> bool {
    s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit())
}

pub(super) fn kept_sum(counts: &BTreeMap<String, i64>) -> u64 {
    let first_day = first_kept_day().format("%Y%m%d").to_string();
    let sum: i64 = counts.range(first_day..).map(|(_, n)| *n).sum();
    u64::try_from(sum).unwrap_or(0)
}

/// An update expression with its condition and placeholders.
pub(super) struct Update {
    pub(super) expression: String,
    pub(super) condition: String,
    pub(super) names: HashMap<String, String>,
    pub(super) values: HashMap<String, AttributeValue>,
}

pub(super) fn state_key(member: &str) -> Item {
    key(notify_pk(member), STATE_SK.to_owned())
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
