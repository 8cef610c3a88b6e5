//! The application: one function per use case (docs/DESIGN.md, Layout),
//! typed commands in and typed results out. Throttling, authorization,
//! hashing and rehash are decided here, so their rules are tested without
//! HTTP; the HTTP adapter only parses requests into commands and results into
//! responses.

#[cfg(all(feature = "totp", feature = "tokens"))]
pub mod account;
pub mod blocks;
pub mod boards;
#[cfg(feature = "hashing")]
mod errors;
#[cfg(feature = "hashing")]
pub mod guest;
mod idempotency;
pub mod media;
pub mod moderation;
pub mod notify;
pub mod pacing;
#[cfg(feature = "hashing")]
mod passwords;
pub mod posts;
pub mod pow;
pub mod purge;
mod read_cache;
pub mod reads;
#[cfg(all(feature = "totp", feature = "tokens"))]
pub mod sessions;
mod settings;
#[cfg(feature = "passwords")]
pub mod signup;
pub mod tags;
pub mod throttle;
#[cfg(feature = "tokens")]
pub mod tokens;
#[cfg(all(feature = "totp", feature = "tokens"))]
pub mod totp;
pub mod views;
pub mod votes;

use std::sync::Arc;

use crate::domain::moderation::Screened;
use crate::domain::{Author, BanRecord, BanSubject, BlockedWords, BoardSlug, MemberId, PostKey, Writer};
use crate::error::ApiError;
#[cfg(feature = "hashing")]
use crate::hashing::Hashing;
use crate::store::Store;
use throttle::{Limits, Refusal};
#[cfg(feature = "tokens")]
use tokens::JwtKeys;

pub use crate::domain::Boards;
pub use idempotency::{Answer, ClaimOutcome, IdempotencyClaim, IdempotencyKey, KeyOwner, RememberedAnswer};
pub use settings::{AdminEnrollToken, AppSettings, NIST_SINGLE_FACTOR_MIN, PasswordSettings};
use tags::TagKeys;

/// The label the proof-of-work key is derived from the tag key with:
/// changing it invalidates every challenge issued.
const POW_KEY_LABEL: &[u8] = b"community-boards proof-of-work key v1";

/// The client address a request came from (docs/API.md, Client address):
/// what failure limits are counted per.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAddress(pub String);

impl ClientAddress {
    /// The range around this address key, as a `"range"` ban names it
    /// (docs/API.md, Hardening, Bans): the IPv4 /24 or the IPv6 /48. A key
    /// that is neither (`unknown`) is its own range.
    pub fn range(&self) -> ClientAddress {
        if let Ok(v4) = self.0.parse::<std::net::Ipv4Addr>() {
            let net = ipnet::Ipv4Net::new(v4, 24).expect("24 is a valid prefix").trunc();
            return ClientAddress(net.to_string());
        }
        if let Ok(v6) = self.0.parse::<ipnet::Ipv6Net>() {
            let net = ipnet::Ipv6Net::new(v6.addr(), 48.min(v6.prefix_len()))
                .expect("a valid prefix")
                .trunc();
            return ClientAddress(net.to_string());
        }
        self.clone()
    }
}

/// The member a verified bearer token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    pub id: MemberId,
    /// What `ADMIN_USERNAMES` names.
    pub username: String,
    pub nickname: String,
    /// Whether the member's TOTP is confirmed, as the session
    /// check read it (false where no session check ran).
    pub second_factor: bool,
}

impl SignedIn {
    pub fn author(&self) -> Author {
        Author::Member {
            member_id: self.id.as_str().to_owned(),
            nickname: self.nickname.clone(),
        }
    }
}

/// What the use cases run on, built once per process (per cold start on
/// Lambda) by the composition root. A function that hashes no password has
/// no [`Hashing`]; one that handles no token has no [`JwtKeys`]. The store
/// is private: the use cases are its only door.
#[derive(Clone)]
pub struct App {
    store: Arc<dyn Store>,
    #[cfg(feature = "hashing")]
    hashing: Option<Hashing>,
    #[cfg(feature = "tokens")]
    tokens: Option<Arc<JwtKeys>>,
    /// Present in functions that write on boards or check bans.
    tags: Option<Arc<TagKeys>>,
    pub boards: Boards,
    pub limits: Limits,
    /// `ADMIN_USERNAMES`.
    admins: Arc<Vec<String>>,
    /// `BLOCKED_WORDS`.
    blocked: Arc<BlockedWords>,
    /// `ADMIN_ENROLL_TOKEN`: only signup reads it.
    #[cfg(feature = "passwords")]
    admin_enroll_token: Option<Arc<AdminEnrollToken>>,
    /// Wakes the background purge after a post's delete ([`purge`]).
    purge_wake: Arc<tokio::sync::Notify>,
    /// The read cache and view buffer of a process that owns its store ([`reads`]).
    reads: Option<Arc<reads::Reads>>,
    /// Every board's settings as last read ([`boards`]).
    board_cache: Arc<boards::BoardCache>,
    /// `POW` and its thresholds ([`pow`]).
    pow: pow::PowSettings,
    /// What challenges are signed with: `POW_KEY`, else derived from the tag key.
    pow_key: Option<Arc<pow::PowKey>>,
    /// Member password rules and TOTP settings.
    passwords: settings::PasswordSettings,
    /// What TOTP secrets are sealed with: in `login` and `account`.
    #[cfg(all(feature = "totp", feature = "tokens"))]
    totp: Option<Arc<totp::TotpKeys>>,
    /// The server's notifier ([`notify`]); none on Lambda, where
    /// the table's stream tells the `notify` function.
    notifier: Option<tokio::sync::mpsc::Sender<crate::domain::TextEvent>>,
    /// Members' block sets as last read ([`blocks`]).
    block_cache: Arc<blocks::BlockCache>,
    /// Upload grants and the files of images.
    media: Option<Arc<media::MediaKit>>,
    /// The server's image checker ([`App::check_media_in_background`]).
    media_checker: Option<Arc<media::CheckQueue>>,
    sweep_wake: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("boards", &self.boards)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl App {
    /// An application without hashing or tokens: add them with
    /// [`App::with_hashing`] and [`App::with_tokens`] where the routes use them.
    pub fn new(store: Arc<dyn Store>, settings: AppSettings) -> Self {
        App {
            store,
            #[cfg(feature = "hashing")]
            hashing: None,
            #[cfg(feature = "tokens")]
            tokens: None,
            tags: None,
            boards: settings.boards,
            limits: settings.limits,
            admins: Arc::new(settings.admins),
            blocked: Arc::new(settings.blocked_words),
            #[cfg(feature = "passwords")]
            admin_enroll_token: settings.admin_enroll_token.map(Arc::new),
            purge_wake: Arc::new(tokio::sync::Notify::new()),
            reads: None,
            board_cache: Arc::default(),
            pow: settings.pow,
            pow_key: None,
            passwords: settings.passwords,
            #[cfg(all(feature = "totp", feature = "tokens"))]
            totp: None,
            notifier: None,
            block_cache: Arc::default(),
            media: None,
            media_checker: None,
            sweep_wake: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// The tag key, and the proof-of-work key derived from it unless one
    /// was given ([`App::with_pow_key`]).
    pub fn with_tags(mut self, tags: TagKeys) -> Self {
        if self.pow_key.is_none() {
            self.pow_key = Some(Arc::new(pow::PowKey::new(&tags.derive(POW_KEY_LABEL))));
        }
        self.tags = Some(Arc::new(tags));
        self
    }

    /// Present in functions that write on boards; a configuration without it
    /// for such a function is refused at start (`runtime::build`), so the
    /// error here is only for an `App` assembled by hand.
    pub fn tags(&self) -> Result<&TagKeys, ApiError> {
        self.tags
            .as_deref()
            .ok_or_else(|| ApiError::Internal("this function was built without a tag key".into()))
    }

    /// `400 validation_failed` naming the first field that holds a
    /// blocked word (docs/API.md, Field rules). Called after the ban check
    /// and the quotas, so a refused writer pays nothing for it, and before
    /// anything is written. Without a list, nothing is done; a text that
    /// may fold to more than [`SCREEN_IN_PLACE`] characters is searched on
    /// the blocking pool, so no runtime worker is held while it is (an
    /// expanded 20,000-character body held one for 120 ms before the
    /// single automaton, and still takes about a millisecond).
    pub(crate) async fn screen(&self, fields: &[(Screened, &str)]) -> Result<(), ApiError> {
        if self.blocked.is_empty() {
            return Ok(());
        }
        // NFKC lengthens a character 18 times at most (U+FDFA), a text has
        // no more characters than bytes, and the field's limit cuts the
        // rest: this bounds what is folded, without reading the text.
        let most: usize = fields
            .iter()
            .map(|(field, text)| field.limit().min(text.len().saturating_mul(18)))
            .sum();
        if most <= SCREEN_IN_PLACE {
            return fields
                .iter()
                .try_for_each(|(field, text)| self.blocked.check(*field, text));
        }
        let blocked = Arc::clone(&self.blocked);
        let owned: Vec<(Screened, String)> = fields
            .iter()
            .map(|(field, text)| (*field, (*text).to_owned()))
            .collect();
        tokio::task::spawn_blocking(move || owned.iter().try_for_each(|(field, text)| blocked.check(*field, text)))
            .await
            .map_err(|e| ApiError::Internal(format!("screening for blocked words failed: {e}")))?
    }

    /// [`Self::screen`] once a quota has counted the request: a refused
    /// text gives the counts back, as every create that wrote nothing does.
    async fn screen_counted(
        &self,
        fields: &[(Screened, &str)],
        reservation: throttle::Reservation,
    ) -> Result<throttle::Reservation, ApiError> {
        match self.screen(fields).await {
            Ok(()) => Ok(reservation),
            Err(refused) => {
                throttle::forgive(&*self.store, reservation).await;
                Err(refused)
            }
        }
    }

    /// Whether the member is staff of the board: an admin by username
    /// (from the token, no read), else one small read (docs/DESIGN.md,
    /// Moderation: how fresh it is).
    pub async fn is_staff(&self, board: &BoardSlug, member: &SignedIn) -> Result<bool, ApiError> {
        if self.is_admin(member) {
            return Ok(true);
        }
        Ok(self.store.is_moderator(board, &member.id).await?)
    }

    pub fn is_admin(&self, member: &SignedIn) -> bool {
        self.admins.iter().any(|admin| admin == &member.username)
    }

    /// `403 banned` when the writer is banned from the board, before
    /// any hashing or counting: one store read (a member's id, the address
    /// key and its range's, and for a guest the guest-only subjects a
    /// ban through a member's post adds; each under the previous tag keys
    /// too after a rotation). Staff of the board are never stopped by an
    /// address or range ban. Answers the keys what they write is stored with.
    pub(crate) async fn require_not_banned(
        &self,
        board: &BoardSlug,
        client: &ClientAddress,
        member: Option<&SignedIn>,
    ) -> Result<Writer, ApiError> {
        let tags = self.tags()?;
        let (keys, ranges) = (tags.writer_keys(client), tags.range_keys(client));
        let mut subjects: Vec<BanSubject> = member
            .map(|m| BanSubject::Member(m.id.as_str().to_owned()))
            .into_iter()
            .collect();
        subjects.extend(keys.iter().cloned().map(BanSubject::Address));
        subjects.extend(ranges.iter().cloned().map(BanSubject::Range));
        if member.is_none() {
            subjects.extend(keys.iter().cloned().map(BanSubject::GuestAddress));
            subjects.extend(ranges.iter().cloned().map(BanSubject::GuestRange));
        }
        let now = throttle::unix_now();
        if let Some(found) = self.store.active_ban(board, &subjects, now).await? {
            let exempt = match member {
                Some(member) if found.subject.is_address() => self.is_staff(board, member).await?,
                _ => false,
            };
            if !exempt {
                return Err(banned(&found));
            }
        }
        Ok(tags.writer(client))
    }

    /// The store itself, for tests that seed or inspect it (feature
    /// `test-support`, never in a deployed build): requests reach the store
    /// only through the use cases.
    #[cfg(feature = "test-support")]
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    #[cfg(feature = "hashing")]
    pub fn with_hashing(mut self, hashing: Hashing) -> Self {
        self.hashing = Some(hashing);
        self
    }

    #[cfg(feature = "tokens")]
    pub fn with_tokens(mut self, tokens: JwtKeys) -> Self {
        self.tokens = Some(Arc::new(tokens));
        self
    }

    #[cfg(feature = "hashing")]
    /// Present in functions that hash passwords; refused at start without it
    /// like [`App::tags`].
    pub fn hashing(&self) -> Result<&Hashing, ApiError> {
        self.hashing
            .as_ref()
            .ok_or_else(|| ApiError::Internal("this function was built without password hashing".into()))
    }

    #[cfg(feature = "tokens")]
    /// Present in functions that handle bearer tokens; refused at start
    /// without it like [`App::tags`].
    pub fn tokens(&self) -> Result<&JwtKeys, ApiError> {
        self.tokens
            .as_deref()
            .ok_or_else(|| ApiError::Internal("this function was built without a JWT key".into()))
    }

    #[cfg(feature = "tokens")]
    /// The member a bearer token names by its signature alone (what an
    /// `Idempotency-Key` is owned by), or `401 unauthorized`.
    pub fn verify_token(&self, token: &str) -> Result<SignedIn, ApiError> {
        self.verify_claims(token).map(|(member, _)| member)
    }

    #[cfg(feature = "tokens")]
    fn verify_claims(&self, token: &str) -> Result<(SignedIn, u64), ApiError> {
        let claims = self.tokens()?.verify(token)?;
        let member = SignedIn {
            id: claims.member_id()?,
            username: claims.username,
            nickname: claims.nickname,
            second_factor: false,
        };
        Ok((member, claims.sep))
    }

    #[cfg(feature = "tokens")]
    /// The member a bearer token names while its session lasts: the
    /// signature, then the member's stored session epoch (one small read;
    /// docs/API.md, Accounts). A token of an earlier epoch, or of an
    /// account that is gone, is `401` with `invalid_token`. The same
    /// read says whether the member's TOTP is confirmed.
    pub async fn authenticate(&self, token: &str) -> Result<SignedIn, ApiError> {
        let (member, epoch) = self.verify_claims(token)?;
        match self.store.session_state(&member.id, &username_of(&member)?).await? {
            Some(state) if state.epoch == epoch => Ok(SignedIn {
                second_factor: state.totp,
                ..member
            }),
            _ => Err(revoked()),
        }
    }

    fn not_found_post(&self) -> ApiError {
        ApiError::not_found("post")
    }

    /// Counts one create against the write quotas (docs/API.md, Throttling
    /// and quotas), before any hashing; `429 rate_limited` over a quota.
    async fn reserve_create(
        &self,
        client: &ClientAddress,
        member: Option<&SignedIn>,
        earlier: throttle::Reservation,
    ) -> Result<throttle::Reservation, ApiError> {
        let keys = throttle::create_keys(&self.limits, &client.0, member.map(|m| m.id.as_str()));
        throttle::reserve_after(&*self.store, &keys, Refusal::RateLimited, earlier).await
    }

    /// A create's quota counts stay only for what it created: a failure,
    /// and a replay (it wrote nothing), give them back.
    async fn keep_only_if_created<T>(&self, created: &Result<Answer<T>, ApiError>, reservation: throttle::Reservation) {
        if !matches!(created, Ok(Answer::Created(_))) {
            throttle::forgive(&*self.store, reservation).await;
        }
    }

    /// An edit's quota counts stay only when it changed the post.
    async fn keep_only_if_done<T>(&self, done: &Result<T, ApiError>, reservation: throttle::Reservation) {
        if done.is_err() {
            throttle::forgive(&*self.store, reservation).await;
        }
    }

    /// The post must exist on its board.
    async fn require_post(&self, key: &PostKey) -> Result<crate::domain::Guard, ApiError> {
        self.store.post_guard(key).await?.ok_or_else(|| self.not_found_post())
    }
}

/// The most characters of folded text [`App::screen`] searches on the
/// request's own thread: about 20 µs of work, no more than handing it to
/// the blocking pool costs. A nickname or a short comment stays in place.
const SCREEN_IN_PLACE: usize = 1_000;

/// A token whose session ended (docs/API.md, Accounts).
#[cfg(feature = "tokens")]
pub(crate) fn revoked() -> ApiError {
    ApiError::InvalidToken("bearer token has been revoked: log in again".into())
}

/// The username a verified token carries (it was valid when signed).
#[cfg(feature = "tokens")]
pub(crate) fn username_of(member: &SignedIn) -> Result<crate::domain::Username, ApiError> {
    crate::domain::Username::parse(member.username.clone()).map_err(|_| revoked())
}

/// What a banned writer is told: until when, and why.
fn banned(found: &BanRecord) -> ApiError {
    let until = match &found.ban.expires_at {
        Some(at) => format!("until {at}"),
        None => "permanently".to_owned(),
    };
    ApiError::Banned(format!("you are banned from this board {until}: {}", found.ban.reason))
}

/// The idempotency record a create writes with its item, when it holds a key.
pub(crate) fn completion<T: serde::Serialize>(
    claim: Option<&IdempotencyClaim>,
    created: &T,
) -> Result<Option<crate::store::Completion>, ApiError> {
    claim.map(|claim| claim.complete(created)).transpose()
}
