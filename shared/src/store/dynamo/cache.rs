//! A per-process read cache with a short time to live (`READ_CACHE_TTL_MS`,
//! docs/DESIGN.md "At internet scale"): [`ReadCache`] holds posts with their
//! first comments, counter shards and board pages. One item serves at most
//! 3,000 read units a second: 10,000 views/s of one post cannot all read its
//! item and its comments, nor 10,000 listings/s one board's index partition.
//! With the cache each execution environment reads them once per TTL,
//! whatever its traffic. Off (TTL 0) by default: then every read goes to the
//! table.
//!
//! What this process writes it removes from its cache at once, so a process
//! reads its own writes; other processes see them within the TTL.
//!
//! A map behind a mutex, emptied when full: no eviction order is needed for
//! entries that live a second, and a cache crate would weigh on the `read`
//! function's binary (docs/DESIGN.md, "Binary size").

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::counters;
use super::items::{PostItem, SummaryFields};
use crate::domain::CommentPage;

/// What a process may serve from memory. The entry caps bound its memory: a
/// post with its first comments is at most about 360 KB (60 KB of body, 50
/// comments of 6 KB), so 64 of them stay under 25 MB of a 256 MB function; a
/// board page of 100 summaries about 100 KB.
#[derive(Debug)]
pub(super) struct ReadCache {
    /// A post item with its first page of comments, by post id.
    pub(super) details: TtlMap<String, Arc<(PostItem, CommentPage)>>,
    pub(super) shards: TtlMap<String, counters::Shards>,
    /// A board-index page (limit + 1 summaries) by board, cursor and limit.
    pub(super) pages: TtlMap<(String, Option<String>, usize), Arc<Vec<SummaryFields>>>,
}

impl ReadCache {
    pub(super) fn new(ttl: Duration) -> Self {
        ReadCache {
            details: TtlMap::new(ttl, 64),
            shards: TtlMap::new(ttl, 4_096),
            pages: TtlMap::new(ttl, 64),
        }
    }

    /// Forgets what this process read of a post it just changed.
    pub(super) fn forget_post(&self, post_id: &str) {
        self.details.remove(&post_id.to_owned());
        self.shards.remove(&post_id.to_owned());
    }
}

/// One kind of cached entry, each kept for `ttl` from its read.
#[derive(Debug)]
pub(super) struct TtlMap<K, V> {
    ttl: Duration,
    /// Entries before expired ones are dropped, and all of them if none is:
    /// what bounds the memory a flood of distinct keys can take.
    capacity: usize,
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: Eq + Hash, V: Clone> TtlMap<K, V> {
    pub(super) fn new(ttl: Duration, capacity: usize) -> Self {
        TtlMap {
            ttl,
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    pub(super) fn get(&self, key: &K) -> Option<V> {
        if !self.enabled() {
            return None;
        }
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(key)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, value)| value.clone())
    }

    #[cfg(test)]
    pub(super) fn put(&self, key: K, value: V) {
        self.put_at(key, value, Instant::now());
    }

    /// Stores a value read at `at` (before the request that fetched it left),
    /// so it never outlives the TTL counted from the read.
    pub(super) fn put_at(&self, key: K, value: V, at: Instant) {
        if !self.enabled() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity {
            entries.retain(|_, (at, _)| at.elapsed() < self.ttl);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(key, (at, value));
    }

    /// Changes a fresh entry in place (a count this process just wrote).
    pub(super) fn update(&self, key: &K, change: impl FnOnce(&mut V)) {
        if !self.enabled() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, value)) = entries.get_mut(key)
            && at.elapsed() < self.ttl
        {
            change(value);
        }
    }

    pub(super) fn remove(&self, key: &K) {
        if self.enabled() {
            self.entries.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        }
    }

    pub(super) fn clear(&self) {
        if self.enabled() {
            self.entries.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_ttl_stores_nothing() {
        let map = TtlMap::new(Duration::ZERO, 8);
        map.put("a", 1);
        assert_eq!(map.get(&"a"), None);
    }

    #[test]
    fn entries_expire_after_the_ttl() {
        let map = TtlMap::new(Duration::from_secs(60), 8);
        map.put("fresh", 1);
        map.put_at("old", 2, Instant::now() - Duration::from_secs(61));
        assert_eq!(map.get(&"fresh"), Some(1));
        assert_eq!(map.get(&"old"), None);
        map.update(&"fresh", |v| *v = 3);
        assert_eq!(map.get(&"fresh"), Some(3));
        map.remove(&"fresh");
        assert_eq!(map.get(&"fresh"), None);
    }

    #[test]
    fn a_full_map_keeps_its_size_bounded() {
        let map = TtlMap::new(Duration::from_secs(60), 64);
        for i in 0..64 * 3 {
            map.put(i, i);
        }
        assert!(map.entries.lock().unwrap().len() <= 64);
        assert_eq!(map.get(&(64 * 3 - 1)), Some(64 * 3 - 1));
    }
}
