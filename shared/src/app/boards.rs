//! Boards as data (docs/API.md, Boards): every board's settings are
//! read from the store in one small read and kept in the process, so a
//! request names its board without a store read. A process that is its
//! store's only writer (the server on SQLite) keeps them until it changes
//! them itself, so a change applies at once; any other (a Lambda function)
//! for at most [`BOARD_SETTINGS_TTL`], so a change reaches every function
//! within 10 seconds. `BOARDS` only seeds: a board it names that the store
//! lacks is created, with the defaults, by the first load that misses it.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::{App, SignedIn};
use crate::domain::board::{parse_best_likes, parse_categories};
use crate::domain::{
    Board, BoardDescription, BoardList, BoardName, BoardSettings, BoardSlug, DislikePolicy, LogAction, LogEntry,
    LogTarget, new_id, now,
};
use crate::error::ApiError;

/// How long a process that shares its store may use board settings it read.
pub const BOARD_SETTINGS_TTL: Duration = Duration::from_secs(10);

/// The boards as last read, by slug.
#[derive(Debug)]
struct Loaded {
    at: Instant,
    boards: Arc<HashMap<String, Arc<BoardSettings>>>,
}

/// The process's copy of every board's settings.
#[derive(Debug, Default)]
pub(crate) struct BoardCache {
    loaded: RwLock<Option<Loaded>>,
}

impl BoardCache {
    fn fresh(&self, ttl: Option<Duration>) -> Option<Arc<HashMap<String, Arc<BoardSettings>>>> {
        let loaded = self.loaded.read().unwrap_or_else(|e| e.into_inner());
        let loaded = loaded.as_ref()?;
        match ttl {
            Some(ttl) if loaded.at.elapsed() >= ttl => None,
            _ => Some(loaded.boards.clone()),
        }
    }

    fn keep(&self, boards: Arc<HashMap<String, Arc<BoardSettings>>>, at: Instant) {
        *self.loaded.write().unwrap_or_else(|e| e.into_inner()) = Some(Loaded { at, boards });
    }

    /// After this process changed a board: the next request reads them again.
    fn forget(&self) {
        *self.loaded.write().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// `PUT /boards/{slug}`: every field parsed; absent fields take their defaults.
#[derive(Debug)]
pub struct PutBoard {
    pub name: BoardName,
    pub description: BoardDescription,
    pub categories: Vec<String>,
    /// The JSON value: absent (the default), null (no best posts) or a number.
    pub best_likes: Option<Option<i64>>,
    pub dislikes: DislikePolicy,
    pub guest_writes: bool,
    pub lock_after_comments: bool,
}

/// What `PUT /boards/{slug}` did.
#[derive(Debug)]
pub enum PutOutcome {
    Created(Board),
    Updated(Board),
}

/// A slug in a path: well formed, or `404` (a `GET`) without echoing it.
fn well_formed(slug: &str) -> bool {
    (1..=40).contains(&slug.len())
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn unknown_board(slug: &str) -> ApiError {
    if well_formed(slug) {
        ApiError::NotFound(format!("board {slug:?} does not exist"))
    } else {
        // Not echoed: it can be anything a client put in the path.
        ApiError::NotFound("board does not exist".into())
    }
}

impl App {
    /// How long this process may use what it read of the boards: `None`
    /// while it is the store's only writer (it forgets them when it
    /// changes one).
    fn board_ttl(&self) -> Option<Duration> {
        match self.store.generation() {
            Some(_) => None,
            None => Some(BOARD_SETTINGS_TTL),
        }
    }

    async fn all_boards(&self) -> Result<Arc<HashMap<String, Arc<BoardSettings>>>, ApiError> {
        if let Some(boards) = self.board_cache.fresh(self.board_ttl()) {
            return Ok(boards);
        }
        let at = Instant::now();
        let mut stored = self.store.boards().await?;
        let missing: Vec<&BoardSlug> = self
            .boards
            .slugs()
            .iter()
            .filter(|slug| !stored.iter().any(|b| &b.slug == *slug))
            .collect();
        if !missing.is_empty() {
            for slug in missing {
                // A seed writes no log entry: nobody acted.
                self.store
                    .create_board(&BoardSettings::seeded(slug.clone(), now()), None)
                    .await?;
            }
            stored = self.store.boards().await?;
        }
        let boards: Arc<HashMap<_, _>> = Arc::new(
            stored
                .into_iter()
                .map(|b| (b.slug.as_str().to_owned(), Arc::new(b)))
                .collect(),
        );
        self.board_cache.keep(boards.clone(), at);
        Ok(boards)
    }

    /// Creates the boards `BOARDS` names that the store lacks: the server
    /// at start, so its first request does not.
    pub async fn seed_boards(&self) -> Result<(), ApiError> {
        self.board_cache.forget();
        self.all_boards().await.map(drop)
    }

    /// The settings of the board a path names, or `404`.
    pub async fn board_settings(&self, slug: &str) -> Result<Arc<BoardSettings>, ApiError> {
        self.all_boards()
            .await?
            .get(slug)
            .cloned()
            .ok_or_else(|| unknown_board(slug))
    }

    /// The board a path names, or `404`.
    pub async fn resolve_board(&self, slug: &str) -> Result<BoardSlug, ApiError> {
        self.board_settings(slug).await.map(|b| b.slug.clone())
    }

    /// Every board's slug: what a member may moderate (the account routes).
    #[cfg(all(feature = "hashing", feature = "tokens"))]
    pub(crate) async fn board_slugs(&self) -> Result<Vec<BoardSlug>, ApiError> {
        let mut slugs: Vec<BoardSlug> = self.all_boards().await?.values().map(|b| b.slug.clone()).collect();
        slugs.sort();
        Ok(slugs)
    }

    /// `GET /boards`: in slug order, with their live post counts.
    pub async fn list_boards(&self) -> Result<BoardList, ApiError> {
        let boards = self.all_boards().await?;
        let mut settings: Vec<&Arc<BoardSettings>> = boards.values().collect();
        settings.sort_by(|a, b| a.slug.cmp(&b.slug));
        let slugs: Vec<BoardSlug> = settings.iter().map(|b| b.slug.clone()).collect();
        let counts = self.store.post_counts(&slugs).await?;
        Ok(BoardList {
            boards: settings
                .into_iter()
                .zip(counts)
                .map(|(settings, count)| Board::new(settings, count))
                .collect(),
        })
    }

    /// `GET /boards/{slug}`.
    pub async fn get_board(&self, slug: &str) -> Result<Board, ApiError> {
        let settings = self.board_settings(slug).await?;
        let count = self.store.post_counts(std::slice::from_ref(&settings.slug)).await?;
        Ok(Board::new(&settings, count.first().copied().unwrap_or(0)))
    }

    /// `PUT /boards/{slug}`: admins create (`201`); admins and the board's
    /// moderators replace its settings (`200`). Each writes a
    /// `board_settings` log entry with the change.
    pub async fn put_board(&self, member: &SignedIn, slug: &str, put: PutBoard) -> Result<PutOutcome, ApiError> {
        if !well_formed(slug) {
            return Err(ApiError::invalid("slug", "must be 1-40 characters of a-z, 0-9 and -"));
        }
        let slug = BoardSlug::from_stored(slug.to_owned());
        let categories = parse_categories(put.categories)?;
        let best_likes = match put.best_likes {
            None => Some(crate::domain::board::DEFAULT_BEST_LIKES),
            Some(value) => parse_best_likes(value)?,
        };
        let existing = self.all_boards().await?.get(slug.as_str()).cloned();
        let settings = BoardSettings {
            slug: slug.clone(),
            name: put.name,
            description: put.description,
            categories,
            best_likes,
            dislikes: put.dislikes,
            guest_writes: put.guest_writes,
            lock_after_comments: put.lock_after_comments,
            created_at: existing.as_ref().map_or_else(now, |b| b.created_at.clone()),
        };
        let entry = LogEntry {
            id: new_id(),
            action: LogAction::BoardSettings,
            target: LogTarget::Board {
                slug: slug.as_str().to_owned(),
            },
            reason: None,
            by: member.author(),
            at: now(),
        };
        let outcome = match existing {
            None => {
                if !self.is_admin(member) {
                    return Err(ApiError::Forbidden("only admins may open a board".into()));
                }
                self.require_staff_totp(member)?;
                if self.store.create_board(&settings, Some(&entry)).await? {
                    PutOutcome::Created(Board::new(&settings, 0))
                } else {
                    // Another admin opened it meanwhile: this is a change of it.
                    self.replace_board(&settings, &entry).await?
                }
            }
            Some(_) => {
                if !self.is_staff(&slug, member).await? {
                    return Err(ApiError::Forbidden(format!(
                        "only admins and moderators of board {} may change its settings",
                        slug.as_str()
                    )));
                }
                self.require_staff_totp(member)?;
                self.replace_board(&settings, &entry).await?
            }
        };
        self.board_cache.forget();
        Ok(outcome)
    }

    async fn replace_board(&self, settings: &BoardSettings, entry: &LogEntry) -> Result<PutOutcome, ApiError> {
        if !self.store.update_board(settings, entry).await? {
            return Err(ApiError::Internal(
                "a board that was read is gone: boards are never deleted".into(),
            ));
        }
        let count = self.store.post_counts(std::slice::from_ref(&settings.slug)).await?;
        Ok(PutOutcome::Updated(Board::new(
            settings,
            count.first().copied().unwrap_or(0),
        )))
    }
}
