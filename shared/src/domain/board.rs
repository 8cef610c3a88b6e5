//! Boards as resources (docs/API.md, Boards), and the votes their
//! posts take (Votes and best posts).

use caseless::Caseless as _;
use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization as _;

use super::fields::{BoardDescription, BoardName, BoardSlug, Category};
use crate::error::ApiError;

/// How a board shows dislikes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum DislikePolicy {
    /// Summaries and details carry `dislike_count`.
    #[default]
    Shown,
    /// Dislikes count (best posts too), but only the board's staff see them.
    Hidden,
    /// Dislike votes are refused and none is shown.
    Off,
}

/// The most categories a board has.
pub const MAX_CATEGORIES: usize = 20;
/// `best_likes` is 1 to this, or null.
pub const MAX_BEST_LIKES: u32 = 10_000;
/// `best_likes` of a board that does not say.
pub const DEFAULT_BEST_LIKES: u32 = 10;

/// A board's settings: what `PUT /boards/{slug}` sets, every field
/// parsed. The store keeps them; requests read them through a cache
/// (docs/DESIGN.md, Boards: at most 10 s old on Lambda).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardSettings {
    pub slug: BoardSlug,
    pub name: BoardName,
    pub description: BoardDescription,
    pub categories: Vec<Category>,
    /// None: the board has no best posts.
    pub best_likes: Option<u32>,
    pub dislikes: DislikePolicy,
    pub guest_writes: bool,
    pub lock_after_comments: bool,
    pub created_at: String,
}

/// The seeded Q&A board: created with `lock_after_comments` true.
pub const QNA_SLUG: &str = "qna";

impl BoardSettings {
    /// A board `BOARDS` names, as it is created at start: every default,
    /// its slug as its name; except that a board named [`QNA_SLUG`] locks
    /// answered posts (docs/API.md, Edit history and edit locks): a
    /// question emptied once answered is what such a board is there against.
    pub fn seeded(slug: BoardSlug, created_at: String) -> Self {
        let locks = slug.as_str() == QNA_SLUG;
        BoardSettings {
            name: BoardName::from_stored(slug.as_str().to_owned()),
            slug,
            description: BoardDescription::empty(),
            categories: Vec::new(),
            best_likes: Some(DEFAULT_BEST_LIKES),
            dislikes: DislikePolicy::Shown,
            guest_writes: true,
            lock_after_comments: locks,
            created_at,
        }
    }

    /// The category a post create or edit names, checked against the
    /// board's list: `400 validation_failed` naming `category` otherwise.
    pub fn category(&self, asked: Option<String>) -> Result<Option<Category>, ApiError> {
        let Some(asked) = asked else { return Ok(None) };
        let asked = Category::parse_as("category", asked)?;
        match self.categories.iter().find(|c| c.as_str() == asked.as_str()) {
            Some(found) => Ok(Some(found.clone())),
            None if self.categories.is_empty() => Err(ApiError::invalid(
                "category",
                "must be null: this board has no categories",
            )),
            None => Err(ApiError::invalid(
                "category",
                format_args!(
                    "must be null or one of this board's categories: {}",
                    self.categories
                        .iter()
                        .map(Category::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }

    /// Whether `like_count - dislike_count` makes a post best here.
    pub fn makes_best(&self, likes: u64, dislikes: u64) -> bool {
        self.best_likes
            .is_some_and(|at| i128::from(likes) - i128::from(dislikes) >= i128::from(at))
    }
}

/// A board as `GET /boards` and `GET /boards/{slug}` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Board {
    #[cfg_attr(feature = "openapi", schema(pattern = "^[a-z0-9-]{1,40}$"))]
    pub slug: String,
    pub name: String,
    pub description: String,
    pub categories: Vec<String>,
    /// Null: the board has no best posts.
    #[cfg_attr(feature = "openapi", schema(required = true, minimum = 1, maximum = 10000))]
    pub best_likes: Option<u32>,
    pub dislikes: DislikePolicy,
    pub guest_writes: bool,
    pub lock_after_comments: bool,
    /// Live posts on the board.
    pub post_count: u64,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
}

impl Board {
    pub fn new(settings: &BoardSettings, post_count: u64) -> Self {
        Board {
            slug: settings.slug.as_str().to_owned(),
            name: settings.name.as_str().to_owned(),
            description: settings.description.as_str().to_owned(),
            categories: settings.categories.iter().map(|c| c.as_str().to_owned()).collect(),
            best_likes: settings.best_likes,
            dislikes: settings.dislikes,
            guest_writes: settings.guest_writes,
            lock_after_comments: settings.lock_after_comments,
            post_count,
            created_at: settings.created_at.clone(),
        }
    }
}

/// `GET /boards`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardList {
    pub boards: Vec<Board>,
}

/// The categories of `PUT /boards/{slug}`: at most [`MAX_CATEGORIES`],
/// each a [`Category`], unique after NFKC and case folding.
pub fn parse_categories(list: Vec<String>) -> Result<Vec<Category>, ApiError> {
    if list.len() > MAX_CATEGORIES {
        return Err(ApiError::invalid(
            "categories",
            format_args!("must list at most {MAX_CATEGORIES} categories"),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    list.into_iter()
        .map(|c| {
            let category = Category::parse_as("categories", c)?;
            let folded: String = category.as_str().chars().nfkc().default_case_fold().nfkc().collect();
            if !seen.insert(folded) {
                return Err(ApiError::invalid(
                    "categories",
                    "must be unique (after NFKC and case folding)",
                ));
            }
            Ok(category)
        })
        .collect()
}

/// `best_likes` of `PUT /boards/{slug}`: 1-10,000 or null.
pub fn parse_best_likes(value: Option<i64>) -> Result<Option<u32>, ApiError> {
    match value {
        None => Ok(None),
        Some(n) if (1..=i64::from(MAX_BEST_LIKES)).contains(&n) => Ok(Some(n as u32)),
        Some(_) => Err(ApiError::invalid("best_likes", "must be 1-10000 or null")),
    }
}

/// A member's or a guest's vote on a post.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Vote {
    Like,
    Dislike,
}

/// What a member asks of their vote (like and dislike routes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteChange {
    /// `PUT .../like`: likes, withdrawing a dislike in the same change.
    Like,
    /// `PUT .../dislike`: dislikes, withdrawing a like in the same change.
    Dislike,
    /// `DELETE .../like`: withdraws a like (a dislike stays).
    Unlike,
    /// `DELETE .../dislike`: withdraws a dislike (a like stays).
    Undislike,
    /// Account deletion with content: withdraws either.
    Withdraw,
}

impl VoteChange {
    /// The member's vote after this change of `before`: the one rule both
    /// stores apply (a like and a dislike exclude each other; a withdrawal
    /// of the other kind changes nothing).
    pub fn applied_to(self, before: Option<Vote>) -> Option<Vote> {
        match self {
            VoteChange::Like => Some(Vote::Like),
            VoteChange::Dislike => Some(Vote::Dislike),
            VoteChange::Unlike if before == Some(Vote::Like) => None,
            VoteChange::Undislike if before == Some(Vote::Dislike) => None,
            VoteChange::Unlike | VoteChange::Undislike => before,
            VoteChange::Withdraw => None,
        }
    }
}

/// What going from `before` to `after` adds to `(likes, dislikes)`.
pub fn vote_deltas(before: Option<Vote>, after: Option<Vote>) -> (i64, i64) {
    let count = |vote: Vote| i64::from(after == Some(vote)) - i64::from(before == Some(vote));
    (count(Vote::Like), count(Vote::Dislike))
}

/// A post's votes as the store counted them, and the voter's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub like_count: u64,
    pub dislike_count: u64,
    /// The voter's vote after the change (a guest's: the one they cast).
    pub mine: Option<Vote>,
    /// Whether the post is best after the change.
    pub best: bool,
}

/// Vote state (docs/API.md, Votes and best posts): the v3 like state plus
/// the dislike fields. `dislike_count` is absent where the board hides
/// dislikes from the caller or has them off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VoteState {
    pub liked: bool,
    pub disliked: bool,
    pub like_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub dislike_count: Option<u64>,
}

impl VoteState {
    /// `tally` as a caller sees it: `dislikes_visible` per the board's policy and the caller.
    pub fn of(tally: &Tally, dislikes_visible: bool) -> Self {
        VoteState {
            liked: tally.mine == Some(Vote::Like),
            disliked: tally.mine == Some(Vote::Dislike),
            like_count: tally.like_count,
            dislike_count: dislikes_visible.then_some(tally.dislike_count),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(categories: &[&str]) -> BoardSettings {
        let mut settings = BoardSettings::seeded(BoardSlug::from_stored("free".into()), "t".into());
        settings.categories = categories.iter().map(|c| Category::from_stored((*c).into())).collect();
        settings
    }

    #[test]
    fn a_post_names_one_of_its_boards_categories_or_none() {
        let free = board(&["질문", "정보"]);
        assert_eq!(free.category(None).unwrap(), None);
        assert_eq!(free.category(Some("정보".into())).unwrap().unwrap().as_str(), "정보");
        let refused = free.category(Some("잡담".into())).unwrap_err();
        assert_eq!(refused.field(), Some("category"));
        assert_eq!(
            board(&[]).category(Some("정보".into())).unwrap_err().field(),
            Some("category")
        );
    }

    #[test]
    fn categories_are_unique_after_folding_and_at_most_twenty() {
        assert_eq!(
            parse_categories(vec!["Tips".into(), "tips".into()])
                .unwrap_err()
                .field(),
            Some("categories")
        );
        assert_eq!(
            parse_categories(vec!["Ｑ".into(), "q".into()]).unwrap_err().field(),
            Some("categories")
        );
        assert!(parse_categories((0..20).map(|i| format!("c{i}")).collect()).is_ok());
        assert!(parse_categories((0..21).map(|i| format!("c{i}")).collect()).is_err());
        assert!(parse_categories(vec!["a,b".into()]).is_err());
        assert!(parse_categories(vec!["열세글자가넘는말머리입니다".into()]).is_err());
        assert!(parse_categories(vec![" ".into()]).is_err());
    }

    #[test]
    fn best_likes_is_one_to_ten_thousand_or_null() {
        assert_eq!(parse_best_likes(None).unwrap(), None);
        assert_eq!(parse_best_likes(Some(1)).unwrap(), Some(1));
        assert_eq!(parse_best_likes(Some(10_000)).unwrap(), Some(10_000));
        for bad in [0, -1, 10_001] {
            assert_eq!(parse_best_likes(Some(bad)).unwrap_err().field(), Some("best_likes"));
        }
    }

    #[test]
    fn the_net_score_decides_best() {
        let free = board(&[]);
        assert!(!free.makes_best(9, 0));
        assert!(free.makes_best(10, 0));
        assert!(!free.makes_best(12, 3));
        let mut none = free.clone();
        none.best_likes = None;
        assert!(!none.makes_best(1_000, 0));
    }
}
