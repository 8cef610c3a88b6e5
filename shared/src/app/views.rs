//! Views counted in memory and written in batches (docs/API.md, Counting;
//! docs/operations.md, What a crash may lose). Where the process is its
//! store's only writer (the server's SQLite file), a view costs a map
//! update instead of a synced commit: the views wait here and [`ViewBuffer::run`]
//! writes them every [`FLUSH_EVERY`], or sooner once [`FLUSH_AT`] wait,
//! and once more at shutdown. What a crash loses is what waits: at most
//! the views of the last flush interval.
//!
//! The count a reader is shown stays exact: a post viewed since start (or
//! since the last sweep) has an entry whose count is its stored count when
//! first viewed plus every view since, written or not. A post without an
//! entry has nothing waiting, so what the store (or a cache filled since the
//! last sweep) says is its count. A sweep forgets entries whose views are
//! all written, to bound the memory, and advances [`ViewBuffer::sweep`],
//! which the read cache keys its entries by.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::domain::PostKey;
use crate::store::{Store, StoreResult};

/// How long a view may wait before it is written.
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// How many waiting views write at once without waiting for the interval.
pub const FLUSH_AT: u64 = 10_000;

/// Posts with an entry above which a flush forgets the fully written ones.
const SWEEP_ABOVE: usize = 50_000;

#[derive(Debug, Default)]
pub struct ViewBuffer {
    state: Mutex<State>,
    full: tokio::sync::Notify,
    /// One flush at a time: two that overlapped (the periodic one and the
    /// shutdown's) would each take the same unwritten views and write
    /// them twice.
    flushing: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct State {
    posts: HashMap<PostKey, Counted>,
    waiting: u64,
    sweep: u64,
}

#[derive(Debug, Clone, Copy)]
struct Counted {
    /// The stored count when the entry was made.
    base: u64,
    /// Views counted since.
    added: u64,
    /// How many of them are in the store.
    written: u64,
}

/// The views a flush wrote, or would have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flushed {
    pub posts: usize,
    pub views: u64,
}

impl ViewBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The sweep a stored count read now belongs to.
    pub fn sweep(&self) -> u64 {
        self.state().sweep
    }

    /// Counts one view of `key`, whose count was `stored` when read during
    /// sweep `read_in`; the count including this view. `None` (nothing
    /// counted) when a sweep came between: read the count again.
    pub fn view(&self, key: &PostKey, stored: u64, read_in: u64) -> Option<u64> {
        let mut state = self.state();
        if state.sweep != read_in && !state.posts.contains_key(key) {
            return None;
        }
        state.waiting += 1;
        let waiting = state.waiting;
        let counted = state.posts.entry(key.clone()).or_insert(Counted {
            base: stored,
            added: 0,
            written: 0,
        });
        counted.added += 1;
        let count = counted.base + counted.added;
        drop(state);
        if waiting >= FLUSH_AT {
            self.full.notify_one();
        }
        Some(count)
    }

    /// The counts of `posts` as a reader is shown them, given what was
    /// stored when read during sweep `read_in`; `None` when a sweep came
    /// between (read again).
    pub fn counts<'a>(&self, posts: impl IntoIterator<Item = (&'a PostKey, u64)>, read_in: u64) -> Option<Vec<u64>> {
        let state = self.state();
        posts
            .into_iter()
            .map(|(key, stored)| match state.posts.get(key) {
                Some(counted) => Some(counted.base + counted.added),
                None if state.sweep == read_in => Some(stored),
                None => None,
            })
            .collect()
    }

    /// Writes every waiting view in one store call. On failure they stay
    /// waiting, for the next flush.
    pub async fn flush(&self, store: &dyn Store) -> StoreResult<Flushed> {
        let _alone = self.flushing.lock().await;
        let batch: Vec<(PostKey, u64)> = self
            .state()
            .posts
            .iter()
            .filter(|(_, counted)| counted.added > counted.written)
            .map(|(key, counted)| (key.clone(), counted.added - counted.written))
            .collect();
        if batch.is_empty() {
            return Ok(Flushed::default());
        }
        store.add_views(&batch).await?;
        let mut state = self.state();
        let mut flushed = Flushed::default();
        for (key, views) in &batch {
            if let Some(counted) = state.posts.get_mut(key) {
                counted.written += views;
            }
            flushed.posts += 1;
            flushed.views += views;
        }
        state.waiting = state.waiting.saturating_sub(flushed.views);
        if state.posts.len() > SWEEP_ABOVE {
            state.posts.retain(|_, counted| counted.added > counted.written);
            state.sweep += 1;
        }
        Ok(flushed)
    }

    /// Flushes every [`FLUSH_EVERY`], or sooner when [`FLUSH_AT`] views
    /// wait, for as long as the process runs (the final flush is the
    /// shutdown's: [`crate::app::App::flush_views`]).
    pub async fn run(&self, store: &dyn Store) {
        loop {
            let _ = tokio::time::timeout(FLUSH_EVERY, self.full.notified()).await;
            if let Err(e) = self.flush(store).await {
                tracing::warn!(error = %e, "could not write the counted views; they wait for the next flush");
            }
        }
    }

    /// Views counted and not yet written.
    pub fn waiting(&self) -> u64 {
        self.state().waiting
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{BoardSlug, PostId};

    fn key(post: &str) -> PostKey {
        PostKey {
            board: BoardSlug::from_stored("free".into()),
            post: PostId::from_stored(post.into()),
        }
    }

    const A: &str = "01HZX3Q7Y0000000000000000A";
    const B: &str = "01HZX3Q7Y0000000000000000B";

    #[test]
    fn a_view_counts_on_top_of_the_stored_count_and_later_stored_counts_are_ignored() {
        let views = ViewBuffer::new();
        assert_eq!(views.view(&key(A), 7, 0), Some(8));
        // A cache filled before the first view says 7: the entry wins.
        assert_eq!(views.view(&key(A), 7, 0), Some(9));
        assert_eq!(views.counts([(&key(A), 7), (&key(B), 3)], 0), Some(vec![9, 3]));
        assert_eq!(views.waiting(), 2);
    }

    #[test]
    fn a_count_read_before_a_sweep_is_refused_for_a_post_without_an_entry() {
        let views = ViewBuffer::new();
        views.state().sweep = 1;
        assert_eq!(views.view(&key(A), 7, 0), None);
        assert_eq!(views.counts([(&key(A), 7)], 0), None);
        assert_eq!(views.view(&key(A), 7, 1), Some(8));
        // With an entry the stored count is not looked at.
        assert_eq!(views.counts([(&key(A), 0)], 0), Some(vec![8]));
    }
}
