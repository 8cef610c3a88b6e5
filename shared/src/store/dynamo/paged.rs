//! Queries read page by page: [`Pages`] sends each page's request with the
//! table, the start key and the metering added, until DynamoDB has no more;
//! [`DynamoStore::query_all`] is the common case on top of it.

use aws_sdk_dynamodb::operation::query::QueryOutput;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;

use super::DynamoStore;
use super::attributes::{Item, s};
use super::metered::Metered;
use crate::store::StoreResult;

/// A Query's own part: its key condition and values, and any projection
/// or order ([`DynamoStore::query_all`] adds the rest).
pub(super) type QueryShape<'a> = &'a (dyn Fn(QueryFluentBuilder) -> QueryFluentBuilder + Send + Sync);

/// The pages of one Query, in order.
pub(super) struct Pages<'s> {
    store: &'s DynamoStore,
    touched: Vec<String>,
    start: Option<Item>,
    done: bool,
}

impl Pages<'_> {
    /// The next page, `shape` giving its request everything but the table
    /// and the start key; `None` after the last.
    pub(super) async fn next(
        &mut self,
        shape: impl FnOnce(QueryFluentBuilder) -> QueryFluentBuilder,
    ) -> StoreResult<Option<QueryOutput>> {
        if self.done {
            return Ok(None);
        }
        let query = self
            .store
            .client()
            .await
            .query()
            .table_name(&self.store.table)
            .set_exclusive_start_key(self.start.take());
        let out = shape(query).metered(self.store, &self.touched).await?;
        self.start.clone_from(&out.last_evaluated_key);
        self.done = self.start.is_none();
        Ok(Some(out))
    }
}

impl DynamoStore {
    /// The pages of a Query; `touched` names its partition (none for an
    /// index, whose units are metered on their own).
    pub(super) fn pages(&self, touched: &[String]) -> Pages<'_> {
        Pages {
            store: self,
            touched: touched.to_vec(),
            start: None,
            done: false,
        }
    }

    /// Every item one consistent Query of partition `pk` finds, page after
    /// page, or its first `limit`: `shape` sets the key condition (on
    /// `:pk`, which this sets), other values, a projection, an order.
    pub(super) async fn query_all(
        &self,
        pk: &str,
        limit: Option<usize>,
        shape: QueryShape<'_>,
    ) -> StoreResult<Vec<Item>> {
        let mut items: Vec<Item> = Vec::new();
        let mut pages = self.pages(&[pk.to_owned()]);
        loop {
            let left = limit.map(|l| i32::try_from(l.saturating_sub(items.len())).unwrap_or(i32::MAX));
            let page = pages
                .next(|query| {
                    shape(
                        query
                            .expression_attribute_values(":pk", s(pk))
                            .consistent_read(true)
                            .set_limit(left),
                    )
                })
                .await?;
            let Some(out) = page else { return Ok(items) };
            items.extend(out.items.unwrap_or_default());
            if limit.is_some_and(|l| items.len() >= l) {
                return Ok(items);
            }
        }
    }
}
