//! Consumed capacity, read and write units per table and per index, as
//! DynamoDB reports it (`ReturnConsumedCapacity: INDEXES`, which every request
//! asks for). A [`CapacityMeter`] on the store adds up what its requests
//! consumed: tests and the capacity table in the README read it.

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

/// What requests consumed: on the table, on each index by name, and on one
/// partition of each kind ([`Partition`]).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Consumed {
    pub table: Units,
    pub indexes: BTreeMap<String, Units>,
    /// Units per partition of a kind: what a request consumed divided by the
    /// partitions of that kind it touched (a BatchGetItem of 16 counter
    /// shards puts 1/16 of its units on each), added up over requests. An
    /// upper bound for the hottest partition of that kind: two requests
    /// that touched different shards are added as if they hit one.
    pub partitions: BTreeMap<&'static str, Units>,
}

/// The kinds of partition key in the table (docs/DESIGN.md, single table):
/// the per-partition limits (1,000 write and 3,000 read units a second)
/// apply to each one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    /// `POST#<id>`: the post item and its comments.
    Post,
    /// `COUNT#<id>#<n>`: one counter shard.
    CounterShard,
    /// `LIKES#<id>#<n>`: one like partition.
    Likes,
    /// `BOARD#<slug>` in the board index.
    BoardIndex,
    Member,
    Attempt,
}

impl Partition {
    pub fn name(self) -> &'static str {
        match self {
            Partition::Post => "post",
            Partition::CounterShard => "counter shard",
            Partition::Likes => "likes",
            Partition::BoardIndex => "board index",
            Partition::Member => "member",
            Partition::Attempt => "attempt",
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

    /// Adds what one request consumed; `touched` lists every partition it
    /// touched (one entry per partition; a transaction's units are split
    /// evenly over its items, exact when they are all small).
    pub(crate) fn record(&self, kind: Kind, reports: &[ConsumedCapacity], touched: &[Partition]) {
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
                // The board index is the only index: its units land on its partition.
                let on_index = consumed.partitions.entry(Partition::BoardIndex.name()).or_default();
                add(on_index, kind, capacity);
            }
        }
        // Each partition a request touched carries an even share of it.
        let parts = touched.len().max(1) as f64;
        let mut seen = Vec::new();
        for partition in touched {
            if !seen.contains(partition) {
                seen.push(*partition);
                let units = consumed.partitions.entry(partition.name()).or_default();
                units.read += request.read / parts;
                units.write += request.write / parts;
            }
        }
    }
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
