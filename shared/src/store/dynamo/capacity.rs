//! Consumed capacity, read and write units per table and per index, as
//! DynamoDB reports it (`ReturnConsumedCapacity: INDEXES`, which every request
//! asks for). A [`CapacityMeter`] on the store adds up what its requests
//! consumed: tests and the capacity table in docs/storage.md read it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemOutput;
use aws_sdk_dynamodb::operation::delete_item::DeleteItemOutput;
use aws_sdk_dynamodb::operation::get_item::GetItemOutput;
use aws_sdk_dynamodb::operation::put_item::PutItemOutput;
use aws_sdk_dynamodb::operation::query::QueryOutput;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsOutput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemOutput;
use aws_sdk_dynamodb::types::{Capacity, ConsumedCapacity};

/// Read and write units.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Units {
    pub read: f64,
    pub write: f64,
}

/// What requests consumed: on the table, on each index by name, and on each
/// partition key.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Consumed {
    pub table: Units,
    pub indexes: BTreeMap<String, Units>,
    /// Units by partition key (`POST#...`, `COUNT#free#3`, ...): a request's
    /// table units split evenly over the items it named (exact where they
    /// are all small, as in a like). Index units are under `GSI1`, all
    /// board partitions together.
    pub partitions: BTreeMap<String, Units>,
}

impl Consumed {
    /// The most read and the most written units that landed on one
    /// partition of `kind` (each maximum on its own).
    pub fn hottest(&self, kind: Partition) -> Units {
        self.partitions
            .iter()
            .filter(|(pk, _)| Partition::of(pk) == kind)
            .fold(Units::default(), |max, (_, u)| Units {
                read: max.read.max(u.read),
                write: max.write.max(u.write),
            })
    }
}

/// The kinds of partition key in the table (docs/DESIGN.md, single table):
/// the per-partition limits (1,000 write and 3,000 read units a second)
/// apply to each partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    /// `POST#<id>`: the post item and its comments (and, v3, its report
    /// pointers and reporters).
    Post,
    /// `COUNT#<board>#<n>`: shard n of every post of a board.
    CounterShard,
    /// `LIKES#<id>#<n>`: one like partition of a post.
    Likes,
    /// `GSI1`: the board index (all its partitions together).
    BoardIndex,
    /// `MEMBER#<username>`; and `ACCOUNT_PURGE`, the pending deletions.
    Member,
    /// `ATTEMPT#<key>`: a key's failure windows; `POW#<challenge>`,
    /// a spent proof-of-work challenge.
    Attempt,
    /// `MODS#`, `BANS#`, `BAN#`, `MODLOG#`, `REPORTS#`: a board's
    /// moderators, bans (and each banned subject's item), log and reports.
    Moderation,
    /// `ById`: the keys-only index by id (all its partitions together).
    IdIndex,
    /// `ByOwner`: a member's posts, comments and likes (all its
    /// partitions together).
    OwnerIndex,
    /// `BOARDS` (every board's settings), `NUMBERS#<board>` (a
    /// board's post number counter), `POSTS#<board>` (its live post count).
    Board,
    /// `ByNumber`, `ByCategory` and `Best` (each all its partitions together).
    ListingIndex,
}

impl Partition {
    pub fn of(pk: &str) -> Partition {
        match pk.split('#').next() {
            Some("COUNT") => Partition::CounterShard,
            Some("LIKES") => Partition::Likes,
            Some("MEMBER") => Partition::Member,
            // A spent proof-of-work challenge: as small and short-lived.
            Some("ATTEMPT" | "POW") => Partition::Attempt,
            Some("GSI1") => Partition::BoardIndex,
            Some("MODS" | "BANS" | "BAN" | "MODLOG" | "REPORTS") => Partition::Moderation,
            Some("ById") => Partition::IdIndex,
            Some("ByOwner") => Partition::OwnerIndex,
            Some("BOARDS" | "NUMBERS" | "POSTS") => Partition::Board,
            Some("ByNumber" | "ByCategory" | "Best") => Partition::ListingIndex,
            // Pending account deletions.
            Some("ACCOUNT_PURGE") => Partition::Member,
            _ => Partition::Post,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Partition::Post => "post",
            Partition::CounterShard => "counter shard",
            Partition::Likes => "likes",
            Partition::BoardIndex => "board index",
            Partition::Member => "member",
            Partition::Attempt => "attempt",
            Partition::Moderation => "moderation",
            Partition::IdIndex => "id index",
            Partition::OwnerIndex => "owner index",
            Partition::Board => "board",
            Partition::ListingIndex => "number, category or best index",
        }
    }
}

#[derive(Debug, Default, Clone)]
pub struct CapacityMeter(Arc<Mutex<Consumed>>);

impl CapacityMeter {
    /// What was consumed since the last `take`.
    pub fn take(&self) -> Consumed {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Adds what one request consumed; `touched` is the partition key of
    /// every item it named (one entry per item).
    pub(crate) fn record(&self, kind: Kind, reports: &[ConsumedCapacity], touched: &[String]) {
        let mut consumed = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut request = Units::default();
        for report in reports {
            let table = report.table().cloned().unwrap_or_else(|| {
                Capacity::builder()
                    .set_capacity_units(report.capacity_units())
                    .set_read_capacity_units(report.read_capacity_units())
                    .set_write_capacity_units(report.write_capacity_units())
                    .build()
            });
            add(&mut consumed.table, kind, &table);
            add(&mut request, kind, &table);
            for (name, capacity) in report.global_secondary_indexes().into_iter().flatten() {
                add(consumed.indexes.entry(name.clone()).or_default(), kind, capacity);
                add(consumed.partitions.entry(name.clone()).or_default(), kind, capacity);
            }
        }
        let share = 1.0 / touched.len().max(1) as f64;
        for pk in touched {
            let units = consumed.partitions.entry(pk.clone()).or_default();
            units.read += request.read * share;
            units.write += request.write * share;
        }
    }
}

/// What one request consumed on the table and its indexes together.
pub(crate) fn request_units(kind: Kind, reports: &[ConsumedCapacity]) -> Units {
    let mut units = Units::default();
    for report in reports {
        let total = Capacity::builder()
            .set_capacity_units(report.capacity_units())
            .set_read_capacity_units(report.read_capacity_units())
            .set_write_capacity_units(report.write_capacity_units())
            .build();
        add(&mut units, kind, &total);
    }
    units
}

/// Whether a request reads or writes: DynamoDB reports a read's or a write's
/// units as plain `CapacityUnits` where it does not split them.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Read,
    Write,
}

fn add(units: &mut Units, kind: Kind, capacity: &Capacity) {
    let read = capacity.read_capacity_units();
    let write = capacity.write_capacity_units();
    if read.is_none() && write.is_none() {
        let total = capacity.capacity_units().unwrap_or(0.0);
        match kind {
            Kind::Read => units.read += total,
            Kind::Write => units.write += total,
        }
    } else {
        units.read += read.unwrap_or(0.0);
        units.write += write.unwrap_or(0.0);
    }
}

/// The consumed capacity an output reports, and whether it was a read.
pub(crate) trait Reports {
    fn reports(&self) -> (Kind, &[ConsumedCapacity]);
}

impl Reports for aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput {
    fn reports(&self) -> (Kind, &[ConsumedCapacity]) {
        (Kind::Read, self.consumed_capacity())
    }
}

macro_rules! single {
    ($($output:ty => $kind:expr),* $(,)?) => {$(
        impl Reports for $output {
            fn reports(&self) -> (Kind, &[ConsumedCapacity]) {
                ($kind, self.consumed_capacity.as_slice())
            }
        }
    )*};
}

single!(
    GetItemOutput => Kind::Read,
    QueryOutput => Kind::Read,
    PutItemOutput => Kind::Write,
    UpdateItemOutput => Kind::Write,
    DeleteItemOutput => Kind::Write,
);

impl Reports for TransactWriteItemsOutput {
    fn reports(&self) -> (Kind, &[ConsumedCapacity]) {
        (Kind::Write, self.consumed_capacity())
    }
}

impl Reports for BatchWriteItemOutput {
    fn reports(&self) -> (Kind, &[ConsumedCapacity]) {
        (Kind::Write, self.consumed_capacity())
    }
}
