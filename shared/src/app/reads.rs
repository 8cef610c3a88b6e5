//! Board pages and post details, answered from the process's read cache
//! and view buffer where the process is its store's only writer (the
//! server on SQLite), else from the store on every request.

use std::sync::Arc;

use super::posts::ListPosts;
use super::read_cache::{CachedDetail, CachedPage, ReadCache, ReadIn, page_key, post_key};
use super::views::{Flushed, ViewBuffer};
use super::{App, SignedIn};
use crate::domain::{BoardSlug, Page, PostDetail, PostKey, PostSummary, PostVersion};
use crate::error::ApiError;

/// A board page or a post detail as the response carries it.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub json: String,
    /// A post detail's version (its `ETag`).
    pub version: Option<PostVersion>,
}

/// What a process that owns its store keeps between reads.
#[derive(Debug, Default)]
pub(crate) struct Reads {
    cache: ReadCache,
    views: ViewBuffer,
}

/// How often a read starts over when a sweep of the view buffer came
/// between reading the store and counting (sweeps are minutes apart).
const ATTEMPTS: usize = 4;

impl App {
    /// Keeps board pages and post details in the process and counts views
    /// in memory: only for a store no other process writes
    /// ([`crate::store::Freshness::generation`] is `Some`); otherwise unchanged.
    pub fn with_owned_store_reads(mut self) -> Self {
        if self.store.generation().is_some() {
            self.reads = Some(Arc::new(Reads::default()));
        }
        self
    }

    /// Whether views wait in memory (and [`Self::flush_views_in_background`] must run).
    pub fn buffers_views(&self) -> bool {
        self.reads.is_some()
    }

    /// Writes the counted views until the process ends (the server spawns it).
    pub async fn flush_views_in_background(self) {
        if let Some(reads) = &self.reads {
            reads.views.run(self.store.as_ref()).await;
        }
    }

    /// Writes every counted view now: the server's last act at shutdown.
    pub async fn flush_views(&self) -> Result<Flushed, ApiError> {
        match &self.reads {
            Some(reads) => Ok(reads.views.flush(self.store.as_ref()).await?),
            None => Ok(Flushed::default()),
        }
    }

    /// A page of the board's posts as the store keeps them: every count
    /// (the dislikes too, whatever the board's policy; see [`Self::board_page`]).
    pub async fn list_posts(&self, query: ListPosts) -> Result<Page, ApiError> {
        let cursor = query.cursor.as_deref().filter(|c| !c.is_empty());
        if query.filtered() {
            // A category or the best posts: a range of the filter's own
            // index, read from the store each time (the server's cache keeps
            // the board's plain pages, the ones read most).
            let mut page = match (&query.category, query.best) {
                (category, true) => {
                    self.store
                        .list_best(&query.board, category.as_ref(), query.limit, cursor)
                        .await?
                }
                (Some(category), false) => {
                    self.store
                        .list_category(&query.board, category, query.limit, cursor)
                        .await?
                }
                (None, false) => unreachable!("filtered"),
            };
            self.with_counted_views(&mut page);
            return Ok(page);
        }
        let Some(reads) = &self.reads else {
            return Ok(self.store.list_posts(&query.board, query.limit, cursor).await?);
        };
        let (cached, counts) = self.cached_page(reads, &query).await?;
        let mut page = cached.page.clone();
        for (summary, count) in page.posts.iter_mut().zip(counts) {
            summary.view_count = count;
        }
        Ok(page)
    }

    /// A board page as `viewer` is shown it (the board's dislike policy).
    pub async fn board_page(&self, query: ListPosts, viewer: Option<&SignedIn>) -> Result<Page, ApiError> {
        let board = self.board_settings(query.board.as_str()).await?;
        let visible = self.dislikes_visible(&board, viewer).await?;
        let blocks = self.block_set(viewer).await?;
        let mut page = self.list_posts(query).await?;
        if !visible {
            page.posts.iter_mut().for_each(hide_dislikes);
        }
        super::blocks::filter_page(&mut page, &blocks);
        Ok(page)
    }

    /// [`Self::board_page`] as the response's JSON: the plain pages from
    /// the cache's JSON where everyone sees what the cache keeps.
    pub async fn list_posts_json(&self, query: ListPosts, viewer: Option<&SignedIn>) -> Result<Rendered, ApiError> {
        let board = self.board_settings(query.board.as_str()).await?;
        if query.filtered()
            || !self.dislikes_visible(&board, viewer).await?
            || !self.block_set(viewer).await?.is_empty()
        {
            return rendered(&self.board_page(query, viewer).await?, None);
        }
        let Some(reads) = &self.reads else {
            return rendered(&self.list_posts(query).await?, None);
        };
        let (cached, counts) = self.cached_page(reads, &query).await?;
        match cached.json.render(&counts) {
            Some(json) => Ok(Rendered { json, version: None }),
            None => rendered(&self.list_posts(query).await?, None),
        }
    }

    /// Counts the view; the detail includes it (docs/API.md, Counting).
    pub async fn read_post(&self, key: &PostKey) -> Result<PostDetail, ApiError> {
        let Some(reads) = &self.reads else {
            return self.store.view_post(key).await?.ok_or_else(|| self.not_found_post());
        };
        let (cached, count) = self.counted_detail(reads, key, true).await?;
        Ok(with_count(&cached.detail, count))
    }

    /// [`Self::read_post`] as the response's JSON, as `viewer` is shown it:
    /// with their `my_vote`, and the board's dislike policy.
    pub async fn read_post_json(&self, key: &PostKey, viewer: Option<&SignedIn>) -> Result<Rendered, ApiError> {
        self.viewed_json(key, true, viewer).await
    }

    /// The post numbered `number` on its board, as [`Self::read_post_json`].
    pub async fn read_post_by_number_json(
        &self,
        board: &BoardSlug,
        number: u64,
        viewer: Option<&SignedIn>,
    ) -> Result<Rendered, ApiError> {
        let post = self
            .store
            .post_by_number(board, number)
            .await?
            .ok_or_else(|| self.not_found_post())?;
        let key = PostKey {
            board: board.clone(),
            post,
        };
        self.read_post_json(&key, viewer).await
    }

    /// A detail for `viewer`: the cached JSON where it is what anyone
    /// anonymous sees, else the typed detail with the viewer's parts.
    async fn viewed_json(
        &self,
        key: &PostKey,
        count_view: bool,
        viewer: Option<&SignedIn>,
    ) -> Result<Rendered, ApiError> {
        let board = self.board_settings(key.board.as_str()).await?;
        let visible = self.dislikes_visible(&board, viewer).await?;
        if viewer.is_none() && visible {
            return self.detail_json(key, count_view).await;
        }
        let mut detail = match count_view {
            true => self.read_post(key).await?,
            false => self.peek_post(key).await?,
        };
        if let Some(member) = viewer {
            detail.my_vote = Some(self.store.member_vote(&key.post, &member.id).await?);
            super::blocks::filter_detail(&mut detail, &*self.block_set(viewer).await?);
        }
        if !visible {
            hide_dislikes(&mut detail.post.summary);
        }
        let version = PostVersion::of(&detail.post.summary.title, &detail.post.body);
        rendered(&detail, Some(version))
    }

    /// A detail or summary a use case answers, as `viewer` is shown it.
    pub(crate) async fn shown_to(&self, summary: &mut PostSummary, viewer: Option<&SignedIn>) -> Result<(), ApiError> {
        let board = self.board_settings(&summary.board).await?;
        if !self.dislikes_visible(&board, viewer).await? {
            hide_dislikes(summary);
        }
        Ok(())
    }

    /// The detail without counting a view: what a `HEAD` looks at.
    pub async fn peek_post(&self, key: &PostKey) -> Result<PostDetail, ApiError> {
        let Some(reads) = &self.reads else {
            return self.store.post_detail(key).await?.ok_or_else(|| self.not_found_post());
        };
        let (cached, count) = self.counted_detail(reads, key, false).await?;
        Ok(with_count(&cached.detail, count))
    }

    /// [`Self::peek_post`] as the response's JSON, as `viewer` is shown it.
    pub async fn peek_post_json(&self, key: &PostKey, viewer: Option<&SignedIn>) -> Result<Rendered, ApiError> {
        self.viewed_json(key, false, viewer).await
    }

    async fn detail_json(&self, key: &PostKey, count_view: bool) -> Result<Rendered, ApiError> {
        let Some(reads) = &self.reads else {
            let detail = match count_view {
                true => self.read_post(key).await?,
                false => self.peek_post(key).await?,
            };
            let version = PostVersion::of(&detail.post.summary.title, &detail.post.body);
            return rendered(&detail, Some(version));
        };
        let (cached, count) = self.counted_detail(reads, key, count_view).await?;
        let version = Some(cached.version.clone());
        match cached.json.render(&[count]) {
            Some(json) => Ok(Rendered { json, version }),
            None => rendered(&with_count(&cached.detail, count), version),
        }
    }

    /// What the cache was read in now: read before the store is.
    fn read_in(&self, reads: &Reads) -> ReadIn {
        ReadIn {
            generation: self.store.generation().unwrap_or(0),
            sweep: reads.views.sweep(),
        }
    }

    /// The page from the cache (or the store, then kept) with its view counts.
    async fn cached_page(&self, reads: &Reads, query: &ListPosts) -> Result<(Arc<CachedPage>, Vec<u64>), ApiError> {
        let cursor = query.cursor.as_deref().filter(|c| !c.is_empty());
        let key = page_key(&query.board, query.limit, cursor);
        for _ in 0..ATTEMPTS {
            let now = self.read_in(reads);
            let cached = match reads.cache.page(&key, now) {
                Some(cached) => cached,
                None => {
                    let page = self.store.list_posts(&query.board, query.limit, cursor).await?;
                    let cached = Arc::new(CachedPage::new(page, now));
                    reads.cache.keep_page(key.clone(), cached.clone(), now);
                    cached
                }
            };
            if let Some(counts) = reads.views.counts(cached.stored_counts(), cached.read_in.sweep) {
                return Ok((cached, counts));
            }
        }
        Err(ApiError::Internal(
            "the view counts kept changing under a board page".into(),
        ))
    }

    /// The detail from the cache (or the store, then kept) and its view
    /// count, with this view when `count_view`.
    async fn counted_detail(
        &self,
        reads: &Reads,
        key: &PostKey,
        count_view: bool,
    ) -> Result<(Arc<CachedDetail>, u64), ApiError> {
        for _ in 0..ATTEMPTS {
            let now = self.read_in(reads);
            let cached = match reads.cache.detail(key, now) {
                Some(cached) => cached,
                None => {
                    let detail = self
                        .store
                        .post_detail(key)
                        .await?
                        .ok_or_else(|| self.not_found_post())?;
                    let cached = Arc::new(CachedDetail::new(detail, now));
                    reads.cache.keep_detail(key.clone(), cached.clone(), now);
                    cached
                }
            };
            let stored = cached.detail.post.summary.view_count;
            let count = match count_view {
                true => reads.views.view(key, stored, cached.read_in.sweep),
                false => reads
                    .views
                    .counts([(key, stored)], cached.read_in.sweep)
                    .and_then(|counts| counts.first().copied()),
            };
            if let Some(count) = count {
                return Ok((cached, count));
            }
        }
        Err(ApiError::Internal("the view count kept changing under a post".into()))
    }

    /// The counts a reader is shown for summaries read from the store just
    /// now (a member's own posts), counted views included.
    pub(crate) fn with_counted_views(&self, page: &mut Page) {
        let Some(reads) = &self.reads else { return };
        let keys: Vec<PostKey> = page.posts.iter().map(post_key).collect();
        let stored = keys.iter().zip(page.posts.iter().map(|s| s.view_count));
        // Without a sweep check: an entry, if any, is the truth; else the
        // store just read is.
        if let Some(counts) = reads.views.counts(stored, reads.views.sweep()) {
            for (summary, count) in page.posts.iter_mut().zip(counts) {
                summary.view_count = count;
            }
        }
    }

    /// [`Self::with_counted_views`] for one detail read from the store just now.
    pub(crate) fn with_counted_view(&self, detail: &mut PostDetail) {
        let Some(reads) = &self.reads else { return };
        let key = post_key(&detail.post.summary);
        let stored = detail.post.summary.view_count;
        if let Some(count) = reads
            .views
            .counts([(&key, stored)], reads.views.sweep())
            .and_then(|counts| counts.first().copied())
        {
            detail.post.summary.view_count = count;
        }
    }
}

/// Where the board hides its dislikes from the reader, or has them off.
pub(crate) fn hide_dislikes(summary: &mut PostSummary) {
    summary.dislike_count = None;
}

fn with_count(detail: &PostDetail, count: u64) -> PostDetail {
    let mut detail = detail.clone();
    detail.post.summary.view_count = count;
    detail
}

fn rendered<T: serde::Serialize>(value: &T, version: Option<PostVersion>) -> Result<Rendered, ApiError> {
    let json = serde_json::to_string(value).map_err(|e| ApiError::Internal(format!("serializing an answer: {e}")))?;
    Ok(Rendered { json, version })
}
