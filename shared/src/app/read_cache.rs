//! Board pages and post details kept in the process, serialized once, until
//! a write changes them (docs/DESIGN.md, Reads). Only where the process is
//! its store's only writer: the store's [`Freshness::generation`] advances
//! after every write that may change a page or a detail, and an entry is
//! used only while the generation (and the view buffer's sweep) it was read
//! in is still the current one. The generation is read before the store is,
//! so a write that lands during the read makes the entry stale at once.
//!
//! View counts change with every view and are not part of the cache: the
//! JSON keeps a hole where each `view_count` goes, filled per response from
//! the view buffer (`app::views`).
//!
//! [`Freshness::generation`]: crate::store::Freshness::generation

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::domain::{BoardSlug, Page, PageLimit, PostDetail, PostId, PostKey, PostSummary, PostVersion};

/// Entries per kind above which stale ones are dropped (all of them if
/// none is stale: the next reads fill it again).
const MOST_ENTRIES: usize = 4_096;

/// A board page: the board, the page size and the cursor it starts after.
pub(crate) type PageKey = (BoardSlug, usize, Option<String>);

#[derive(Debug, Default)]
pub(crate) struct ReadCache {
    pages: Entries<PageKey, CachedPage>,
    details: Entries<PostKey, CachedDetail>,
}

/// What the cache was read in: the store's generation and the view buffer's sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadIn {
    pub generation: u64,
    pub sweep: u64,
}

#[derive(Debug)]
pub(crate) struct CachedPage {
    pub read_in: ReadIn,
    /// With the stored view counts.
    pub page: Page,
    pub keys: Vec<PostKey>,
    pub json: Spliced,
}

#[derive(Debug)]
pub(crate) struct CachedDetail {
    pub read_in: ReadIn,
    /// With the stored view count.
    pub detail: PostDetail,
    pub version: PostVersion,
    pub json: Spliced,
}

impl CachedPage {
    pub(crate) fn new(page: Page, read_in: ReadIn) -> Self {
        let keys = page.posts.iter().map(post_key).collect();
        let mut holes = page.clone();
        for summary in &mut holes.posts {
            summary.view_count = hole();
        }
        let json = Spliced::new(&holes, page.posts.len());
        CachedPage {
            read_in,
            page,
            keys,
            json,
        }
    }

    /// The stored counts, in the order of the page (and of its holes).
    pub(crate) fn stored_counts(&self) -> impl Iterator<Item = (&PostKey, u64)> {
        self.keys
            .iter()
            .zip(self.page.posts.iter().map(|summary| summary.view_count))
    }
}

impl CachedDetail {
    pub(crate) fn new(detail: PostDetail, read_in: ReadIn) -> Self {
        let version = PostVersion::of(&detail.post.summary.title, &detail.post.body);
        let mut holes = detail.clone();
        holes.post.summary.view_count = hole();
        let json = Spliced::new(&holes, 1);
        CachedDetail {
            read_in,
            detail,
            version,
            json,
        }
    }
}

impl ReadCache {
    pub(crate) fn page(&self, key: &PageKey, now: ReadIn) -> Option<Arc<CachedPage>> {
        self.pages.get(key, now, |entry| entry.read_in)
    }

    pub(crate) fn keep_page(&self, key: PageKey, page: Arc<CachedPage>, now: ReadIn) {
        self.pages.put(key, page, now, |entry| entry.read_in);
    }

    pub(crate) fn detail(&self, key: &PostKey, now: ReadIn) -> Option<Arc<CachedDetail>> {
        self.details.get(key, now, |entry| entry.read_in)
    }

    pub(crate) fn keep_detail(&self, key: PostKey, detail: Arc<CachedDetail>, now: ReadIn) {
        self.details.put(key, detail, now, |entry| entry.read_in);
    }
}

/// The key of a post a summary read from the store names.
pub(crate) fn post_key(summary: &PostSummary) -> PostKey {
    PostKey {
        board: BoardSlug::from_stored(summary.board.clone()),
        post: PostId::from_stored(summary.id.clone()),
    }
}

pub(crate) fn page_key(board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> PageKey {
    (board.clone(), limit.get(), cursor.map(str::to_owned))
}

#[derive(Debug)]
struct Entries<K, V> {
    map: Mutex<HashMap<K, Arc<V>>>,
}

impl<K, V> Default for Entries<K, V> {
    fn default() -> Self {
        Entries {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Hash + Eq, V> Entries<K, V> {
    fn get(&self, key: &K, now: ReadIn, read_in: impl Fn(&V) -> ReadIn) -> Option<Arc<V>> {
        let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(key).filter(|entry| read_in(entry) == now).cloned()
    }

    fn put(&self, key: K, value: Arc<V>, now: ReadIn, read_in: impl Fn(&V) -> ReadIn) {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= MOST_ENTRIES && !map.contains_key(&key) {
            map.retain(|_, entry| read_in(entry) == now);
            if map.len() >= MOST_ENTRIES {
                map.clear();
            }
        }
        map.insert(key, value);
    }
}

/// Stands for a view count while serializing: a number no count reaches.
/// A text cannot hold the marker `"view_count":<hole>` (JSON escapes the
/// quote after the key); the number is drawn once per process all the same.
fn hole() -> u64 {
    static HOLE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *HOLE.get_or_init(|| rand::random::<u64>() | 1 << 63)
}

const KEY: &str = "\"view_count\":";

/// JSON with holes where the view counts go; without them (serialize per
/// response) should the holes found not be the holes expected.
#[derive(Debug)]
pub(crate) struct Spliced {
    parts: Option<Vec<String>>,
}

impl Spliced {
    /// `value`, whose `holes` view counts are [`hole`], serialized once.
    fn new<T: Serialize>(value: &T, holes: usize) -> Self {
        let json = serde_json::to_string(value).expect("domain types serialize");
        let marker = format!("{KEY}{}", hole());
        let parts: Vec<String> = json.split(&marker).map(str::to_owned).collect();
        Spliced {
            parts: (parts.len() == holes + 1).then_some(parts),
        }
    }

    /// The JSON with `counts` in its holes, in order; `None` when it could
    /// not be kept with holes.
    pub(crate) fn render(&self, counts: &[u64]) -> Option<String> {
        use std::fmt::Write as _;
        let parts = self.parts.as_ref()?;
        let mut json = String::with_capacity(parts.iter().map(String::len).sum::<usize>() + 32 * counts.len());
        let mut counts = counts.iter();
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                let _ = write!(json, "{KEY}{}", counts.next().copied().unwrap_or(0));
            }
            json.push_str(part);
        }
        Some(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Two {
        title: &'static str,
        view_count: u64,
        inner: Inner,
    }

    #[derive(Serialize)]
    struct Inner {
        view_count: u64,
        body: &'static str,
    }

    #[test]
    fn a_spliced_json_takes_each_count_in_its_place() {
        let value = Two {
            title: "\"view_count\":18446744073709551615",
            view_count: hole(),
            inner: Inner {
                view_count: hole(),
                body: "b",
            },
        };
        let spliced = Spliced::new(&value, 2);
        let json: serde_json::Value = serde_json::from_str(&spliced.render(&[7, 12345]).unwrap()).unwrap();
        assert_eq!(json["view_count"], 7);
        assert_eq!(json["inner"]["view_count"], 12345);
        assert_eq!(json["title"], "\"view_count\":18446744073709551615");
        assert_eq!(json["inner"]["body"], "b");
    }

    #[test]
    fn a_value_whose_holes_do_not_match_is_kept_without_holes() {
        let value = Two {
            title: "t",
            view_count: hole(),
            inner: Inner {
                view_count: 5,
                body: "b",
            },
        };
        assert_eq!(Spliced::new(&value, 2).render(&[1, 2]), None);
        assert!(Spliced::new(&value, 1).render(&[1]).is_some());
    }
}
