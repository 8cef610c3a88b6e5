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
//! Each kind is a bounded cache with scan-resistant eviction
//! (`quick_cache`: CLOCK-Pro, close to S3-FIFO and W-TinyLFU in hit rate)
//! and a per-entry expiry kept beside each value: a few hot posts stay
//! cached while a crawler reads a thousand cold ones, where v2's map, emptied
//! whenever it was full, lost them all every 64 misses. `quick_cache` was
//! chosen over `moka` for its size (hashbrown and foldhash, both already
//! linked; no background threads) in the `read` function's binary
//! (docs/DESIGN.md, "Binary size").

use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quick_cache::sync::{Cache, EntryAction, EntryResult};

use super::counters;
use super::items::{PostItem, SummaryFields};
use crate::domain::{CommentPage, SessionState};

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
    /// Whether a member moderates a board, by (board, member id), for
    /// [`MODERATOR_TTL`] whatever `READ_CACHE_TTL_MS` says.
    pub(super) moderators: TtlMap<(String, String), bool>,
    /// A member's session state (epoch and, v4, whether TOTP is on) by
    /// (member id, username), `None` for an account that is gone, for
    /// [`crate::store::SESSION_TTL`] whatever `READ_CACHE_TTL_MS` says.
    pub(super) sessions: TtlMap<(String, String), KnownSession>,
    /// Posts whose best gate is done, by post id: true when best,
    /// false when staff took it out. Done is for good, so any TTL is safe;
    /// a vote on such a post skips the gate's read.
    pub(super) gates_done: TtlMap<String, bool>,
}

/// What this process knows of a member's session state: `None` for an
/// account that is gone; with `written_at` when this process's own write
/// set it (the moment DynamoDB answered the write), so a read sent before
/// that moment does not replace it (see `accounts::sessions`).
#[derive(Debug, Clone, Copy)]
pub(super) struct KnownSession {
    pub(super) state: Option<SessionState>,
    pub(super) written_at: Option<Instant>,
}

/// How long a process trusts what it read of a moderator appointment:
/// every staff route and every write from an address that is banned asks,
/// and one small read per request is what the cache saves. An appointment or
/// dismissal made by another process (another Lambda execution environment)
/// takes effect here within this time; one made by this process at once
/// (it writes its own answer). The API allows it (docs/API.md, Accounts:
/// "a function may remember a member's session state for at most 10 seconds").
pub(super) const MODERATOR_TTL: Duration = Duration::from_secs(10);

/// How long a process remembers that a post's best gate is done.
const GATE_DONE_TTL: Duration = Duration::from_secs(3_600);

impl ReadCache {
    pub(super) fn new(ttl: Duration) -> Self {
        ReadCache {
            details: TtlMap::new(ttl, 64),
            shards: TtlMap::new(ttl, 4_096),
            pages: TtlMap::new(ttl, 64),
            moderators: TtlMap::new(MODERATOR_TTL, 4_096),
            sessions: TtlMap::new(crate::store::SESSION_TTL, 4_096),
            gates_done: TtlMap::new(GATE_DONE_TTL, 16_384),
        }
    }

    /// Lookups of post details, shards and pages so far.
    pub(super) fn stats(&self) -> [CacheStats; 3] {
        [self.details.stats(), self.shards.stats(), self.pages.stats()]
    }

    /// Forgets what this process read of a post it just changed.
    pub(super) fn forget_post(&self, post_id: &str) {
        self.details.remove(&post_id.to_owned());
        self.shards.remove(&post_id.to_owned());
    }
}

/// Lookups of one kind of entry so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
}

impl CacheStats {
    pub fn hit_rate(&self) -> f64 {
        let lookups = self.hits + self.misses;
        if lookups == 0 {
            0.0
        } else {
            self.hits as f64 / lookups as f64
        }
    }
}

/// One kind of cached entry, each kept for `ttl` from its read, at most
/// `capacity` of them (the eviction chooses which).
pub(super) struct TtlMap<K: Eq + Hash, V: Clone> {
    ttl: Duration,
    /// `None` when the TTL is zero: nothing is cached.
    entries: Option<Cache<K, (Instant, V)>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Eq + Hash, V: Clone> std::fmt::Debug for TtlMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlMap")
            .field("ttl", &self.ttl)
            .field("entries", &self.entries.as_ref().map(Cache::len))
            .finish_non_exhaustive()
    }
}

impl<K: Eq + Hash + Clone, V: Clone> TtlMap<K, V> {
    pub(super) fn new(ttl: Duration, capacity: usize) -> Self {
        TtlMap {
            ttl,
            entries: (!ttl.is_zero()).then(|| Cache::new(capacity)),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    pub(super) fn enabled(&self) -> bool {
        self.entries.is_some()
    }

    pub(super) fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    pub(super) fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.as_ref()?;
        let found = match entries.get(key) {
            Some((at, value)) if at.elapsed() < self.ttl => Some(value),
            Some(_) => {
                // Expired: its place goes to the next read.
                entries.remove(key);
                None
            }
            None => None,
        };
        let counter = if found.is_some() { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    #[cfg(test)]
    pub(super) fn put(&self, key: K, value: V) {
        self.put_at(key, value, Instant::now());
    }

    /// Stores a value read at `at` (before the request that fetched it left),
    /// so it never outlives the TTL counted from the read.
    pub(super) fn put_at(&self, key: K, value: V, at: Instant) {
        if let Some(entries) = &self.entries {
            entries.insert(key, (at, value));
        }
    }

    /// Stores a value read (or written) at `at` unless there is a fresh
    /// entry that `keep` says is newer: a read that started before this
    /// process's own write and ended after it does not put back what the
    /// write replaced.
    pub(super) fn put_unless(&self, key: K, value: V, at: Instant, keep: impl FnOnce(&V) -> bool) {
        let Some(entries) = &self.entries else { return };
        let ttl = self.ttl;
        let mut value = Some(value);
        // A zero timeout: never wait for another thread's insertion (this
        // value is then dropped: the other one is as new).
        let found = entries.entry(&key, Some(Duration::ZERO), |_, slot| {
            if !(slot.0.elapsed() < ttl && keep(&slot.1))
                && let Some(value) = value.take()
            {
                *slot = (at, value);
            }
            EntryAction::Retain(())
        });
        if let EntryResult::Vacant(guard) = found
            && let Some(value) = value.take()
        {
            let _ = guard.insert((at, value));
        }
    }

    /// Changes a fresh entry in place (a count this process just wrote),
    /// atomically with other changes of it.
    pub(super) fn update(&self, key: &K, change: impl FnOnce(&mut V)) {
        let Some(entries) = &self.entries else { return };
        let ttl = self.ttl;
        // A zero timeout: never wait for another thread's insertion; a
        // vacant key's guard is dropped at once, inserting nothing.
        let _ = entries.entry(key, Some(Duration::ZERO), |_, (at, value)| {
            if at.elapsed() < ttl {
                change(value);
                EntryAction::Retain(())
            } else {
                EntryAction::Remove
            }
        });
    }

    pub(super) fn remove(&self, key: &K) {
        if let Some(entries) = &self.entries {
            entries.remove(key);
        }
    }

    pub(super) fn clear(&self) {
        if let Some(entries) = &self.entries {
            entries.clear();
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
    fn put_unless_keeps_a_newer_fresh_entry_and_replaces_the_rest() {
        let map = TtlMap::new(Duration::from_secs(60), 8);
        let newer = |old: &u64, new: u64| *old > new;
        map.put_unless("k", 1, Instant::now(), |old| newer(old, 1));
        assert_eq!(map.get(&"k"), Some(1));
        map.put_unless("k", 3, Instant::now(), |old| newer(old, 3));
        map.put_unless("k", 2, Instant::now(), |old| newer(old, 2));
        assert_eq!(map.get(&"k"), Some(3), "an older read does not replace a newer write");
        map.put_at("old", 9, Instant::now() - Duration::from_secs(61));
        map.put_unless("old", 1, Instant::now(), |old| newer(old, 1));
        assert_eq!(map.get(&"old"), Some(1), "an expired entry is replaced");
    }

    #[test]
    fn a_full_map_keeps_its_size_bounded() {
        let map = TtlMap::new(Duration::from_secs(60), 64);
        for i in 0..64 * 3 {
            map.put(i, i);
        }
        assert!(map.entries.as_ref().unwrap().len() <= 64);
        assert_eq!(map.get(&(64 * 3 - 1)), Some(64 * 3 - 1));
    }

    /// v2's map, kept here only as the reference the new one is measured
    /// against: a map emptied whenever it is full of unexpired entries.
    struct EmptiedWhenFull(std::collections::HashMap<u64, ()>, usize);

    impl EmptiedWhenFull {
        fn read(&mut self, key: u64) -> bool {
            if self.0.contains_key(&key) {
                return true;
            }
            if self.0.len() >= self.1 {
                self.0.clear();
            }
            self.0.insert(key, ());
            false
        }
    }

    /// The hot posts' hit rate, and v2's, when `hot` posts are read in turn
    /// and a crawler's read of the next of 1,000 cold posts comes in after
    /// every `hot_run` of them, through a cache of 64 details. Read-through
    /// as the store does: a miss is read from the table and put.
    fn hot_hit_rates(hot: u64, hot_run: u64) -> (f64, f64, CacheStats) {
        let map = TtlMap::new(Duration::from_secs(60), 64);
        let mut v2 = EmptiedWhenFull(std::collections::HashMap::new(), 64);
        let (mut hits, mut reads, mut v2_hits) = (0u64, 0u64, 0u64);
        let mut next_hot = (0..hot).cycle();
        for cold in 1_000..2_000u64 {
            for key in (0..hot_run).map(|_| next_hot.next().unwrap()).chain([cold]) {
                let hit = map.get(&key).is_some();
                if !hit {
                    map.put(key, key);
                }
                let v2_hit = v2.read(key);
                if key < hot {
                    reads += 1;
                    hits += u64::from(hit);
                    v2_hits += u64::from(v2_hit);
                }
            }
        }
        (hits as f64 / reads as f64, v2_hits as f64 / reads as f64, map.stats())
    }

    /// docs/DESIGN.md, "At internet scale": hot posts stay cached while
    /// 1,000 cold ones are read once each, whatever the share of cold reads.
    #[test]
    fn hot_posts_stay_cached_under_a_scan_of_a_thousand_cold_ones() {
        for (hot, hot_run) in [(4, 3), (16, 3), (16, 1)] {
            let (rate, v2_rate, all) = hot_hit_rates(hot, hot_run);
            println!(
                "read cache of 64: {hot} hot posts, one cold read after every {hot_run} hot: \
                 hot hit rate {:.1}% (an emptied-when-full map {:.1}%); all reads {:.1}%",
                rate * 1e2,
                v2_rate * 1e2,
                all.hit_rate() * 1e2,
            );
            assert!(rate > 0.95, "the hot posts stay cached: {rate}");
            assert!(rate > v2_rate, "better than v2's map");
        }
    }
}
