//! The reads of a moderation partition: newest first a page at a time
//! (bans, reports, the log), or all of it (moderators, report pointers).

use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{Item, n, s};
use crate::store::{StoreResult, cursor};

/// Trims a `limit + 1` read and gives the cursor when more follow (as the
/// SQLite adapter's pages: the last id on the page).
pub(super) fn paged<T>(mut items: Vec<(String, T)>, limit: usize) -> (Vec<T>, Option<String>) {
    let more = items.len() > limit;
    items.truncate(limit);
    let next = more.then(|| items.last().map(|(id, _)| cursor::encode(id))).flatten();
    (items.into_iter().map(|(_, item)| item).collect(), next)
}

impl DynamoStore {
    /// Up to `want` items of partition `pk`, SK descending (newest first:
    /// the SKs are ULIDs), strictly before `after`; with `active_at`, only
    /// bans active then (`expires` absent or later). Reads on past
    /// DynamoDB's 1 MB pages and past the items the filter drops until it
    /// has `want` or the partition ends, so a page is never short while more
    /// follow. Consistent, as the SQLite adapter's reads are.
    pub(super) async fn newest_first(
        &self,
        pk: &str,
        after: Option<&str>,
        want: usize,
        active_at: Option<i64>,
    ) -> StoreResult<Vec<Item>> {
        let mut items: Vec<Item> = Vec::new();
        let mut pages = self.pages(&[pk.to_owned()]);
        for round in 0.. {
            // The first read asks for exactly what the page needs; a read
            // after the filter dropped ended bans asks for more at once.
            let mut need = want.saturating_sub(items.len()).max(1);
            if round > 0 {
                need = need.max(100);
            }
            let page = pages
                .next(|query| {
                    let query = query
                        .expression_attribute_values(":pk", s(pk))
                        .scan_index_forward(false)
                        .consistent_read(true)
                        .limit(i32::try_from(need).unwrap_or(i32::MAX));
                    let query = match after {
                        Some(after) => query
                            .key_condition_expression("PK = :pk AND SK < :after")
                            .expression_attribute_values(":after", s(after)),
                        None => query.key_condition_expression("PK = :pk"),
                    };
                    match active_at {
                        Some(now) => query
                            .filter_expression("attribute_not_exists(#expires) OR #expires > :now")
                            .expression_attribute_names("#expires", "expires")
                            .expression_attribute_values(":now", n(now)),
                        None => query,
                    }
                })
                .await?;
            let Some(out) = page else { break };
            items.extend(out.items.unwrap_or_default());
            if items.len() >= want {
                break;
            }
        }
        items.truncate(want);
        Ok(items)
    }

    /// Every item of partition `pk` whose SK starts with `prefix`, page by
    /// page; consistent.
    pub(super) async fn all_under(&self, pk: &str, prefix: Option<&str>) -> StoreResult<Vec<Item>> {
        self.query_all(pk, None, &|query| match prefix {
            Some(prefix) => query
                .key_condition_expression("PK = :pk AND begins_with(SK, :prefix)")
                .expression_attribute_values(":prefix", s(prefix)),
            None => query.key_condition_expression("PK = :pk"),
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_has_a_cursor_only_when_more_follow() {
        let rows = |n: usize| (0..n).map(|i| (format!("id{i}"), i)).collect::<Vec<_>>();
        assert_eq!(paged(rows(3), 3), (vec![0, 1, 2], None));
        assert_eq!(paged(rows(4), 3), (vec![0, 1, 2], Some(cursor::encode("id2"))));
        assert_eq!(paged(rows(0), 3), (vec![], None));
    }
}
