//! The rows of the route table: each route's function, method, path,
//! handler and what docs/openapi.json says of it.

use axum::routing::on;
use http::Method;

use super::super::handlers as h;
use super::{Route, doc, filter, route};
use crate::domain as d;
use crate::function::Function;

macro_rules! routes_table {
    ($( $(#[$cfg:meta])* $function:ident $method:ident $path:literal => $handler:path, $doc:expr; )*) => {
        /// Every route of docs/API.md (except `GET /health`, which every
        /// function serves) that this build links: a function built without
        /// a feature has none of the routes that need it.
        #[expect(clippy::vec_init_then_push)]
        pub fn routes() -> Vec<Route> {
            // Rows are pushed one by one: each may be compiled out.
            let mut all = Vec::new();
            $( $(#[$cfg])* all.push(route(Function::$function, Method::$method, $path, $doc, on(filter(&Method::$method), $handler))); )*
            all
        }
    };
}

routes_table! {
    #[cfg(feature = "passwords")]
    Signup POST "/members" => h::signup::signup,
        doc("createMember", "Sign up", 201, "The new member").idempotent()
            .details("Creates a member account (the member tier hashes the password). Log in with `createSession` for a token. Counted against the signup quota of the client address.")
            .takes::<h::signup::SignUpRequest>().returns::<d::Member>().errors(&["username_taken", "rate_limited"])
            .listed("-", "`201` member");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Login POST "/sessions" => h::sessions::login,
        doc("createSession", "Log in", 200, "A session with its bearer token")
            .details("Checks a member's password and answers a bearer token for the member routes. Every cause of a failed login answers the same `401 invalid_credentials`; repeated failures for one username from one address are throttled (`429 too_many_attempts`, before any hashing). A member whose TOTP is on sends `totp` too (a code or a recovery code): without it, once the password matched, `401 totp_required`. The session carries `password_warning` when the password breaks today's rules (the login succeeds).")
            .takes::<h::sessions::LogInRequest>().returns::<crate::app::sessions::Session>().errors(&["invalid_credentials", "totp_required", "too_many_attempts"])
            .listed("-", "`200` session");
    Read GET "/boards/{slug}/posts" => h::read::list_posts,
        doc("listPosts", "List a board's posts, newest first", 200, "A page of post summaries")
            .details("A page of a board's post summaries, newest first; pass a page's `next_cursor` as `cursor` for the next one. With a bearer token the posts of whom the member blocks are left out: a page may hold fewer than `limit`, and `next_cursor` still pages on.")
            .returns::<d::Page>().errors(&["validation_failed", "not_found"])
            .listed("-", "`200` page of post summaries");
    Read GET "/boards/{slug}/posts/{post_id}" => h::read::get_post,
        doc("getPost", "Read a post with its comments (counts this view)", 200, "The post")
            .details("The post with its first page of comments; counts this view (a `HEAD` does not). Its `ETag` names this version of the title and body, for `If-Match` on an edit. With a bearer token the comments of whom the member blocks are left out.")
            .returns::<d::PostDetail>().errors(&["not_found"])
            .listed("-", "`200` post detail; counts this view");
    Read GET "/boards/{slug}/posts/{post_id}/comments" => h::read::list_comments,
        doc("listComments", "Page through a post's comments, oldest first", 200, "A page of comments")
            .details("A page of a post's comments, oldest first; pass `next_cursor` (or the post's `comments_next_cursor`) as `cursor` for the next one. With a bearer token the comments of whom the member blocks are left out (a page may hold fewer than `limit`).")
            .returns::<d::CommentPage>().errors(&["validation_failed", "not_found"])
            .listed("-", "`200` page of comments");
    Read GET "/boards/{slug}/posts/{post_id}/comments/{comment_id}" => h::read::get_comment,
        doc("getComment", "Read one comment of a post", 200, "The comment")
            .details("One comment of a post, as its comment pages show it. A comment of another post, or one deleted or removed, is `404`.")
            .returns::<d::Comment>().errors(&["not_found"])
            .listed("-", "`200` comment");
    Read GET "/boards/{slug}/posts/{post_id}/revisions" => h::read::list_revisions,
        doc("listRevisions", "Read a post's edit history, newest first", 200, "The versions its edits replaced")
            .details("A page of the versions of the post that its edits replaced, newest first; the post keeps the last 50 (`revision_count` in the post says how many). Each has its `number` (which edit replaced it; 1 is the original), the title and body it had and `edited_at`, when it was written. Pass `next_cursor` as `cursor` for the next page. They go with the post.")
            .returns::<d::Revisions>().errors(&["validation_failed", "not_found"])
            .listed("-", "`200 {\"revisions\": [...], \"next_cursor\"}`");
    Read GET "/challenge" => h::read::challenge,
        doc("getChallenge", "Get a proof-of-work challenge", 200, "An ALTCHA challenge")
            .details("A fresh ALTCHA challenge (SHA-256), signed by the server and valid 10 minutes. Find the number whose SHA-256 after the salt gives `challenge` (the `altcha` widget or `altcha-lib` do), and send `{algorithm, challenge, number, salt, signature}` as base64 JSON in `X-Pow` on an anonymous write that asks for it (`428 pow_required`, which also carries a challenge). Each solution is accepted once.")
            .returns::<crate::app::pow::Challenge>()
            .listed("-", "`200` proof-of-work challenge");
    #[cfg(feature = "tokens")]
    MemberWrite POST "/boards/{slug}/posts" => h::member::create_post,
        doc("createMemberPost", "Create a member post", 201, "The new post").idempotent()
            .details("Posts on a board as the signed-in member. Counted against the write quotas of the member and of the client address.")
            .takes::<h::member::PostRequest>().returns::<d::PostDetail>().errors(&["not_found", "rate_limited"])
            .listed("bearer", "`201` post detail");
    #[cfg(feature = "tokens")]
    MemberWrite PUT "/boards/{slug}/posts/{post_id}" => h::member::update_post,
        doc("updateMemberPost", "Edit your post", 200, "The edited post")
            .details("Replaces the title and body of a post the signed-in member wrote. With `If-Match` naming another version than the current one: `412` and nothing changes; without it the last edit wins.")
            .takes::<h::member::PostRequest>().returns::<d::PostDetail>().errors(&["forbidden", "not_found", "locked", "precondition_failed"])
            .listed("bearer, author", "`200` post detail");
    #[cfg(feature = "tokens")]
    MemberWrite DELETE "/boards/{slug}/posts/{post_id}" => h::member::delete_post,
        doc("deleteMemberPost", "Delete your post", 204, "Deleted")
            .details("Deletes a post the signed-in member wrote.")
            .errors(&["forbidden", "not_found", "locked"])
            .listed("bearer, author", "`204`");
    #[cfg(feature = "tokens")]
    MemberWrite POST "/boards/{slug}/posts/{post_id}/comments" => h::member::create_comment,
        doc("createMemberComment", "Comment as a member", 201, "The new comment").idempotent()
            .details("Comments on a post as the signed-in member; `parent_id` makes it a reply to a top-level comment of the same post. Counted against the write quotas.")
            .takes::<h::member::CommentRequest>().returns::<d::Comment>().errors(&["not_found", "rate_limited"])
            .listed("bearer", "`201` comment");
    #[cfg(feature = "tokens")]
    MemberWrite DELETE "/boards/{slug}/posts/{post_id}/revisions/{revision}" => h::member::delete_revision,
        doc("deleteRevision", "Delete one revision of a post", 204, "Deleted")
            .details("Deletes one kept revision (its `number`) of a post: the post's member author may, and staff of its board, whose delete is written to the board's public log (`delete_revision`). The post's `revision_count` goes down by one.")
            .errors(&["validation_failed", "forbidden", "not_found"])
            .listed("bearer, author or staff", "`204`");
    #[cfg(feature = "tokens")]
    MemberWrite DELETE "/boards/{slug}/posts/{post_id}/comments/{comment_id}" => h::member::delete_comment,
        doc("deleteMemberComment", "Delete your comment (its replies stay)", 204, "Deleted")
            .details("Deletes a comment the signed-in member wrote; its replies stay in place.")
            .errors(&["forbidden", "not_found"])
            .listed("bearer, author", "`204`");
    #[cfg(feature = "hashing")]
    GuestPost POST "/boards/{slug}/posts/guest" => h::guest::create_guest_post,
        doc("createGuestPost", "Create a guest post", 201, "The new post").idempotent()
            .details("Posts on a board without an account: the guest password (guest tier hashing) is what later edits and deletes the post. Counted against the write quota of the client address.")
            .takes::<h::guest::GuestPostRequest>().returns::<d::PostDetail>().errors(&["not_found", "rate_limited"])
            .listed("guest password", "`201` post detail");
    #[cfg(feature = "hashing")]
    GuestPost PUT "/boards/{slug}/posts/{post_id}/guest" => h::guest::update_guest_post,
        doc("updateGuestPost", "Edit a guest post with its password", 200, "The edited post")
            .details("Replaces the title and body of a guest post, with its guest password. Wrong passwords are throttled per post and client address (`429 too_many_attempts`). With `If-Match` naming another version than the current one: `412` and nothing changes.")
            .takes::<h::guest::GuestEditRequest>().returns::<d::PostDetail>().errors(&["wrong_password", "forbidden", "not_found", "locked", "precondition_failed", "too_many_attempts"])
            .listed("guest password", "`200` post detail");
    #[cfg(feature = "hashing")]
    GuestPost DELETE "/boards/{slug}/posts/{post_id}/guest" => h::guest::delete_guest_post,
        doc("deleteGuestPost", "Delete a guest post with its password", 204, "Deleted")
            .details("Deletes a guest post, with its guest password (in the body). Wrong passwords are throttled per post and client address.")
            .takes::<h::guest::GuestProofRequest>().errors(&["wrong_password", "forbidden", "not_found", "locked", "too_many_attempts"])
            .listed("guest password", "`204`");
    #[cfg(feature = "hashing")]
    GuestComment POST "/boards/{slug}/posts/{post_id}/comments/guest" => h::guest::create_guest_comment,
        doc("createGuestComment", "Comment as a guest", 201, "The new comment").idempotent()
            .details("Comments on a post without an account: the guest password is what later deletes the comment; `parent_id` makes it a reply. Counted against the write quota of the client address.")
            .takes::<h::guest::GuestCommentRequest>().returns::<d::Comment>().errors(&["not_found", "rate_limited"])
            .listed("guest password", "`201` comment");
    #[cfg(feature = "hashing")]
    GuestComment DELETE "/boards/{slug}/posts/{post_id}/comments/{comment_id}/guest" => h::guest::delete_guest_comment,
        doc("deleteGuestComment", "Delete a guest comment with its password", 204, "Deleted")
            .details("Deletes a guest comment, with its guest password (in the body); its replies stay. Wrong passwords are throttled per comment and client address.")
            .takes::<h::guest::GuestProofRequest>().errors(&["wrong_password", "forbidden", "not_found", "too_many_attempts"])
            .listed("guest password", "`204`");
    #[cfg(feature = "tokens")]
    Like PUT "/boards/{slug}/posts/{post_id}/like" => h::votes::like,
        doc("likePost", "Like a post (idempotent)", 200, "The vote state")
            .details("The signed-in member likes the post, withdrawing their dislike in the same change; liking again changes nothing. Not on one's own post. The like that first brings `like_count - dislike_count` to the board's `best_likes` makes the post best.")
            .returns::<d::VoteState>().errors(&["forbidden", "not_found"])
            .listed("bearer", "`200` like state");
    #[cfg(feature = "tokens")]
    Like DELETE "/boards/{slug}/posts/{post_id}/like" => h::votes::unlike,
        doc("unlikePost", "Unlike a post (idempotent)", 200, "The vote state")
            .details("The signed-in member takes back a like (a dislike stays); unliking again changes nothing.")
            .returns::<d::VoteState>().errors(&["forbidden", "not_found"])
            .listed("bearer", "`200` like state");
    #[cfg(feature = "tokens")]
    Like PUT "/boards/{slug}/posts/{post_id}/dislike" => h::votes::dislike,
        doc("dislikePost", "Dislike a post (idempotent)", 200, "The vote state")
            .details("The signed-in member dislikes the post (bichucheon), withdrawing their like in the same change; disliking again changes nothing. Not on one's own post; `403` where the board has dislikes off. `dislike_count` is absent where the board hides dislikes from the caller.")
            .returns::<d::VoteState>().errors(&["forbidden", "not_found"])
            .listed("bearer", "`200` vote state");
    #[cfg(feature = "tokens")]
    Like DELETE "/boards/{slug}/posts/{post_id}/dislike" => h::votes::undislike,
        doc("undislikePost", "Take back a dislike (idempotent)", 200, "The vote state")
            .details("The signed-in member takes back a dislike (a like stays); again changes nothing. `403` where the board has dislikes off.")
            .returns::<d::VoteState>().errors(&["forbidden", "not_found"])
            .listed("bearer", "`200` vote state");
    Read GET "/boards/{slug}/moderators" => h::read::list_moderators,
        doc("listModerators", "List a board's moderators", 200, "The board's moderators")
            .details("The members an admin appointed to moderate this board, in the order they were appointed. Admins (`ADMIN_USERNAMES`) are staff of every board and are not listed.")
            .returns::<d::Moderators>().errors(&["not_found"])
            .listed("-", "`200 {\"moderators\": [<member>...]}`");
    Read GET "/boards/{slug}/modlog" => h::read::modlog,
        doc("listModerationLog", "Read a board's moderation log, newest first", 200, "A page of log entries")
            .details("Every removal, ban, unban and appointment on the board, newest first: who did it, to what, and why. It never shows an address, and a removed post's entry keeps its title but not its body.")
            .returns::<d::LogPage>().errors(&["validation_failed", "not_found"])
            .listed("-", "`200` page of moderation log entries, newest first");
    #[cfg(feature = "tokens")]
    Moderation PUT "/boards/{slug}/moderators/{member_id}" => h::moderation::appoint,
        doc("appointModerator", "Appoint a moderator (admins)", 204, "Appointed")
            .details("An admin makes a member a moderator of the board; appointing again changes nothing. Logged as `add_moderator`. While `STAFF_REQUIRE_TOTP` is on (the default) the member must have turned on TOTP first, else `409 totp_required`: a staff role takes effect only with TOTP on.")
            .errors(&["forbidden", "not_found", "moderator_totp_required"])
            .listed("bearer, admin", "`204`");
    #[cfg(feature = "tokens")]
    Moderation DELETE "/boards/{slug}/moderators/{member_id}" => h::moderation::dismiss,
        doc("dismissModerator", "Dismiss a moderator (admins)", 204, "Dismissed")
            .details("An admin takes a member's moderation of the board away; dismissing one who is not a moderator changes nothing. Logged as `remove_moderator`.")
            .errors(&["forbidden", "not_found"])
            .listed("bearer, admin", "`204`");
    #[cfg(feature = "tokens")]
    Moderation POST "/boards/{slug}/posts/{post_id}/remove" => h::moderation::remove_post,
        doc("removePost", "Remove a post (staff)", 204, "Removed").idempotent()
            .details("Staff of the board remove a post with a reason: it goes as if its author had deleted it (its comments and likes too), its open reports and those of its comments are resolved, and the log keeps its title.")
            .takes::<h::moderation::ReasonRequest>().errors(&["forbidden", "not_found"])
            .listed("bearer, staff", "`204`");
    #[cfg(feature = "tokens")]
    Moderation POST "/boards/{slug}/posts/{post_id}/comments/{comment_id}/remove" => h::moderation::remove_comment,
        doc("removeComment", "Remove a comment (staff)", 204, "Removed").idempotent()
            .details("Staff of the board remove a comment with a reason; its replies stay, its open report is resolved, and the log records it without its body.")
            .takes::<h::moderation::ReasonRequest>().errors(&["forbidden", "not_found"])
            .listed("bearer, staff", "`204`");
    #[cfg(feature = "tokens")]
    Moderation POST "/boards/{slug}/bans" => h::moderation::ban,
        doc("createBan", "Ban a writer from a board (staff)", 201, "The ban").idempotent()
            .details("Bans a member (`member_id`), or the writer of a post or comment (`post_id`, `comment_id`): its member, or for a guest the address it was written from, never shown (the ban shows the guest's tag). For `duration_s` seconds, or for good when it is absent or null. While it lasts every write on the board by that member, or from that address, answers `403 banned`. A new ban of the same writer replaces the old one. Staff of the board cannot be banned (`403 forbidden`).")
            .takes::<h::moderation::BanRequest>().returns::<d::Ban>().errors(&["forbidden", "not_found"])
            .listed("bearer, staff", "`201` ban");
    #[cfg(feature = "tokens")]
    Moderation GET "/boards/{slug}/bans" => h::moderation::list_bans,
        doc("listBans", "List a board's active bans (staff)", 200, "A page of bans, newest first")
            .details("The bans in force on the board, newest first; expired and lifted bans are not listed.")
            .returns::<d::BanPage>().errors(&["validation_failed", "forbidden", "not_found"])
            .listed("bearer, staff", "`200` page of active bans, newest first");
    #[cfg(feature = "tokens")]
    Moderation DELETE "/boards/{slug}/bans/{ban_id}" => h::moderation::unban,
        doc("deleteBan", "Lift a ban (staff)", 204, "Lifted")
            .details("Lifts a ban at once: the writer's next write goes through. Logged as `unban`.")
            .errors(&["forbidden", "not_found"])
            .listed("bearer, staff", "`204`");
    #[cfg(feature = "tokens")]
    Moderation POST "/boards/{slug}/posts/{post_id}/reports" => h::moderation::report_post,
        doc("reportPost", "Report a post", 201, "The post's report, opened by this request").idempotent()
            .details("Anyone reports a post to the board's staff, signed in or not. A post has one open report: the first answers `201`, every later one `200` with the same report, and each reporter (a member, or an address) is counted once. Counted against the reports quota of the client address (`429 rate_limited`).")
            .or(200, "The post's open report, which this reporter joined")
            .takes::<h::moderation::ReasonRequest>().returns::<d::Report>().errors(&["unauthorized", "banned", "not_found", "rate_limited"])
            .listed("- (bearer optional)", "`201` report (`200` when it joins the open one)");
    #[cfg(feature = "tokens")]
    Moderation POST "/boards/{slug}/posts/{post_id}/comments/{comment_id}/reports" => h::moderation::report_comment,
        doc("reportComment", "Report a comment", 201, "The comment's report, opened by this request").idempotent()
            .details("Anyone reports a comment, as a post is reported: one open report per comment, each reporter counted once.")
            .or(200, "The comment's open report, which this reporter joined")
            .takes::<h::moderation::ReasonRequest>().returns::<d::Report>().errors(&["unauthorized", "banned", "not_found", "rate_limited"])
            .listed("- (bearer optional)", "`201` report (`200` when it joins the open one)");
    #[cfg(feature = "tokens")]
    Moderation GET "/boards/{slug}/reports" => h::moderation::list_reports,
        doc("listReports", "List a board's open reports (staff)", 200, "A page of open reports, newest first")
            .details("The open reports of the board's posts and comments, newest first, each with `reporters`: how many distinct reporters it has.")
            .returns::<d::ReportPage>().errors(&["validation_failed", "forbidden", "not_found"])
            .listed("bearer, staff", "`200` page of open reports, newest first");
    #[cfg(feature = "tokens")]
    Moderation POST "/boards/{slug}/reports/{report_id}/resolve" => h::moderation::resolve_report,
        doc("resolveReport", "Resolve a report (staff)", 204, "Resolved").idempotent()
            .details("Closes an open report: it leaves the open list. A later report of the same target opens a new one.")
            .errors(&["forbidden", "not_found"])
            .listed("bearer, staff", "`204`");
    Read GET "/boards" => h::read::list_boards,
        doc("listBoards", "List the boards", 200, "Every board")
            .details("Every board with its settings and live post count, in slug order. On Lambda a board's settings may be up to 10 s old; on the server a change shows at once.")
            .returns::<d::BoardList>()
            .listed("-", "`200 {\"boards\": [<board>...]}`");
    Read GET "/boards/{slug}" => h::read::get_board,
        doc("getBoard", "Read a board's settings", 200, "The board")
            .details("A board's name, description, categories (malmeori), best-post threshold, dislike policy, whether guests write, and its live post count.")
            .returns::<d::Board>().errors(&["not_found"])
            .listed("-", "`200` board");
    #[cfg(feature = "tokens")]
    Moderation PUT "/boards/{slug}" => h::moderation::put_board,
        doc("putBoard", "Open a board (admins) or set its rules (staff)", 201, "The board opened")
            .details("An admin opens a board (`201`, `Location`); admins and the board's moderators replace its settings (`200`). An absent field takes its default: description `\"\"`, no categories, `best_likes` 10, `dislikes` `shown`, `guest_writes` true, `lock_after_comments` false. Each create and change is logged as `board_settings`. Boards are never deleted.")
            .takes::<h::moderation::BoardRequest>().returns::<d::Board>().or(200, "The board's new settings").errors(&["forbidden"])
            .listed("bearer, admin (create) or staff (update)", "`201` board created, `200` updated");
    Read GET "/boards/{slug}/posts/by-number/{number}" => h::read::get_post_by_number,
        doc("getPostByNumber", "Read a post by its number on the board (counts this view)", 200, "The post")
            .details("The post a board numbered `number` (1, 2, 3... in creation order), as `getPost` answers it. A number no post has (never given, or its post deleted) is `404`.")
            .returns::<d::PostDetail>().errors(&["not_found"])
            .listed("-", "`200` post detail; counts this view");
    #[cfg(feature = "tokens")]
    Like POST "/boards/{slug}/posts/{post_id}/votes/guest" => h::votes::guest_vote,
        doc("voteAsGuest", "Vote on a post as a guest (once)", 200, "The vote state")
            .details("A guest likes or dislikes a post, once per post per client address (IPv4 address or IPv6 /64), never withdrawn: a second vote from there is `409 already_voted`. Not on a post written from the same address; `403` where the board takes no guest writes or has dislikes off. Counted against the guest-vote quota of the client address. Takes no `Idempotency-Key`: a retried vote answers `409 already_voted`, which says it counted.")
            .takes::<h::votes::GuestVoteRequest>().returns::<d::VoteState>().errors(&["forbidden", "not_found", "already_voted", "rate_limited"])
            .listed("-", "`200` vote state");
    #[cfg(feature = "tokens")]
    Moderation PUT "/boards/{slug}/posts/{post_id}/category" => h::moderation::recategorize,
        doc("recategorizePost", "Change a post's category (staff)", 200, "The post's summary")
            .details("Staff of the board set a post's category: null, or one of the board's categories. Logged as `recategorize`.")
            .takes::<h::moderation::CategoryRequest>().returns::<d::PostSummary>().errors(&["forbidden", "not_found"])
            .listed("bearer, staff", "`200` post summary");
    #[cfg(feature = "tokens")]
    Moderation DELETE "/boards/{slug}/best/{post_id}" => h::moderation::unbest,
        doc("unbestPost", "Take a post out of the best posts (staff)", 204, "Taken out")
            .details("Staff of the board take a post out of the best posts (gaenyeomgeul) for good: it never becomes best again, whatever the votes do. Logged as `unbest`.")
            .errors(&["forbidden", "not_found"])
            .listed("bearer, staff", "`204`");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account GET "/members/me" => h::account::me,
        doc("getMe", "Your account and roles", 200, "The signed-in member with their roles")
            .details("The signed-in member as stored, with `roles`: whether they are an admin, and the boards they moderate. With `listMyPosts` and `listMyComments` it is the member's data export.")
            .returns::<d::Me>()
            .listed("bearer", "`200` me");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account PUT "/members/me/password" => h::account::change_password,
        doc("changePassword", "Change your password", 204, "Changed; every earlier token stops working")
            .details("Checks `current_password` as a login does (a wrong one is `401 invalid_credentials` and counts as a failed login under the login limits), stores `new_password` under the member tier, and ends every session: every token issued before, this one included, answers `401` from now on. Log in again with the new password.")
            .takes::<h::account::ChangePasswordRequest>().errors(&["invalid_credentials", "too_many_attempts"])
            .listed("bearer", "`204`");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account DELETE "/members/me/sessions" => h::account::end_sessions,
        doc("deleteSessions", "Sign out everywhere", 204, "Every earlier token stops working")
            .details("Ends every session of the member: every token issued before this call, the one that made it included, answers `401`. On Lambda another execution environment may still accept one for up to 10 seconds; on the server it takes effect at once.")
            .listed("bearer", "`204`: sign out everywhere");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account DELETE "/members/me" => h::account::delete_account,
        doc("deleteMe", "Delete your account", 204, "Deleted")
            .details("With the member's password (a wrong one is `401 invalid_credentials`, counted as a failed login). With `delete_content` true every post and comment the member wrote is deleted and their likes are withdrawn, every count staying exact; with false the posts and comments stay, written by `{\"kind\": \"deleted_member\", \"nickname\": \"deleted member\"}`. Either way the tokens stop working, the username stays taken and nothing of the account can be read under its id again.")
            .takes::<h::account::DeleteAccountRequest>().errors(&["invalid_credentials", "too_many_attempts"])
            .listed("bearer", "`204`: delete the account");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account GET "/members/me/posts" => h::account::my_posts,
        doc("listMyPosts", "Your posts on every board, newest first", 200, "A page of your post summaries")
            .details("The signed-in member's posts on every board, newest first; pass a page's `next_cursor` as `cursor` for the next one.")
            .returns::<d::Page>().errors(&["validation_failed"])
            .listed("bearer", "`200` page of post summaries, newest first");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account GET "/members/me/comments" => h::account::my_comments,
        doc("listMyComments", "Your comments on every post, newest first", 200, "A page of your comments")
            .details("The signed-in member's comments on every post of every board, newest first; pass a page's `next_cursor` as `cursor` for the next one.")
            .returns::<d::CommentPage>().errors(&["validation_failed"])
            .listed("bearer", "`200` page of comments, newest first");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account POST "/members/me/totp" => h::account::start_totp,
        doc("startTotp", "Start turning on TOTP", 200, "A new secret, waiting for its first code")
            .details("A new TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s) for an authenticator app: `otpauth_uri` as a QR code, or `secret` typed in. It takes effect only once `confirmTotp` gets a code from it; starting again replaces one still waiting. Needs the current `password` (checked as a login checks it: a wrong one is `401 invalid_credentials` naming `password`, counted). `403` while TOTP is on (remove it first), and for an admin named in `ADMIN_USERNAMES` without the `Admin-Enroll-Token` header.")
            .takes::<h::account::StartTotpRequest>().returns::<crate::app::totp::TotpEnrollment>().errors(&["validation_failed", "invalid_credentials", "forbidden", "too_many_attempts"])
            .listed("bearer", "`200 {\"secret\", \"otpauth_uri\"}`");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account POST "/members/me/totp/confirm" => h::account::confirm_totp,
        doc("confirmTotp", "Turn on TOTP with a first code", 200, "TOTP is on: the recovery codes, shown this once")
            .details("A code from the app for the waiting secret turns TOTP on and answers 10 single-use recovery codes, shown only now: keep them. From then on a login needs `totp`, and staff routes accept this member. A wrong code is `401 invalid_credentials` (`field` `code`), counted as a failed login; no enrollment waiting is `404`.")
            .takes::<h::account::ConfirmTotpRequest>().returns::<crate::app::totp::RecoveryCodes>().errors(&["validation_failed", "invalid_credentials", "forbidden", "not_found", "too_many_attempts"])
            .listed("bearer", "`200 {\"recovery_codes\": [...]}`");
    #[cfg(all(feature = "totp", feature = "tokens"))]
    Account DELETE "/members/me/totp" => h::account::end_totp,
        doc("deleteTotp", "Turn off TOTP", 204, "TOTP is off")
            .details("With the password and, while TOTP is on, a code or a recovery code; an enrollment still waiting needs only the password. Each wrong one is `401 invalid_credentials` naming the field, counted as a failed login. Under `PASSWORD_POLICY=nist` a password shorter than 15 characters must be changed first (`400`).")
            .takes::<h::account::EndTotpRequest>().errors(&["validation_failed", "invalid_credentials", "too_many_attempts"])
            .listed("bearer", "`204`");
    #[cfg(feature = "tokens")]
    Media POST "/boards/{slug}/media" => h::media::grant_upload,
        doc("createUpload", "Ask to upload an image", 201, "Where to send the file, until `expires_at`").idempotent()
            .details("A grant to upload one image of the declared `content_type` and at most `bytes` (1 to `MEDIA_MAX_BYTES`, 20 MiB by default) to `upload.url`: on AWS a presigned S3 POST (`multipart/form-data`: every `fields` entry, then the file as `file`), on the server a `PUT` of the bytes with `headers`. Then the file is checked off the request: `getMedia` says `pending`, then `ready` (decoded, re-encoded without metadata, with a 320-pixel-wide thumbnail) or `rejected` with a reason. Attach a ready image with a post's or comment's `media`. Anonymous is a guest: the board must take guest writes, and the proof of work of anonymous writes applies. Counted against the upload quotas of the client address (30 in 10 minutes) and the member (60). A grant never attached is deleted with its file after 24 hours.")
            .takes::<h::media::GrantRequest>().returns::<crate::app::media::MediaGrant>().errors(&["validation_failed", "unauthorized", "forbidden", "banned", "not_found", "pow_required", "rate_limited"])
            .listed("- (bearer optional)", "`201` upload grant");
    #[cfg(feature = "tokens")]
    Media GET "/media/{media_id}" => h::media::get_media,
        doc("getMedia", "An uploaded image's state", 200, "The upload")
            .details("`pending` until its file is checked, then `ready` with `width`, `height`, `bytes`, `url` and `thumbnail_url` (served with the decoded type, `nosniff`, `Content-Security-Policy: sandbox` and a long immutable cache), or `rejected` with a `reason` (not the image it claims, or over a limit: 8,192 pixels a side, 50 megapixels, 300 frames).")
            .returns::<crate::app::media::MediaView>().errors(&["not_found"])
            .listed("-", "`200` upload state");
    #[cfg(feature = "tokens")]
    Read GET "/members/me/notifications" => h::notifications::list_notifications,
        doc("listNotifications", "Your notifications, newest first", 200, "A page of notifications")
            .details("Comments on your posts (`comment`), replies to your comments (`reply`) and `@username` mentions (`mention`) by others, newest first, each with `read`. They appear within seconds of the text, off the request path; a deleted or removed text takes its notifications with it; the newest 1,000 are kept, for 90 days. Pass `next_cursor` as `cursor` for the next page.")
            .returns::<d::NotificationPage>().errors(&["validation_failed"])
            .listed("bearer", "`200` page of notifications, newest first");
    #[cfg(feature = "tokens")]
    Read GET "/members/me/notifications/unread" => h::notifications::unread,
        doc("getUnreadCount", "How many of your notifications are unread", 200, "The unread count")
            .details("One small read: what a client polls (at most every 30 s) for a badge.")
            .returns::<d::Unread>()
            .listed("bearer", "`200 {\"unread\": n}`");
    #[cfg(feature = "tokens")]
    MemberWrite POST "/members/me/notifications/read" => h::notifications::mark_read,
        doc("markNotificationsRead", "Mark your notifications read", 200, "The unread count after")
            .details("`up_to`: every notification up to this id (a notification's `id`) is read; without it, all of them. A mark never moves back. Answers the unread count left.")
            .takes::<h::notifications::MarkReadRequest>().returns::<d::Unread>().errors(&["validation_failed"])
            .listed("bearer", "`200 {\"unread\": n}`");
    #[cfg(feature = "tokens")]
    Read GET "/members/me/blocks" => h::blocks::list_blocks,
        doc("listBlocks", "Whom you block", 200, "Your blocks, oldest first")
            .details("The members and guest tags you block. Their posts and comments are left out of the board pages, comment pages and post details you read with your token, and they never notify you.")
            .returns::<d::BlockList>()
            .listed("bearer", "`200 {\"members\": [...], \"guests\": [...]}`");
    #[cfg(feature = "tokens")]
    MemberWrite PUT "/members/me/blocks/members/{member_id}" => h::blocks::block_member,
        doc("blockMember", "Block a member (idempotent)", 204, "Blocked")
            .details("At most 500 blocks (members and guests together): the 501st is `400 validation_failed`. Blocking yourself is `400`; an unknown member `404`.")
            .errors(&["validation_failed", "not_found"])
            .listed("bearer", "`204`");
    #[cfg(feature = "tokens")]
    MemberWrite DELETE "/members/me/blocks/members/{member_id}" => h::blocks::unblock_member,
        doc("unblockMember", "Unblock a member (idempotent)", 204, "Not blocked")
            .details("Done whether or not they were blocked.")
            .errors(&["not_found"])
            .listed("bearer", "`204`");
    #[cfg(feature = "tokens")]
    MemberWrite PUT "/members/me/blocks/guests/{tag}" => h::blocks::block_guest,
        doc("blockGuest", "Block a guest by tag (idempotent)", 204, "Blocked")
            .details("A guest's tag (the `tag` of a guest author) names every text written from that address key. At most 500 blocks in all.")
            .errors(&["validation_failed"])
            .listed("bearer", "`204`");
    #[cfg(feature = "tokens")]
    MemberWrite DELETE "/members/me/blocks/guests/{tag}" => h::blocks::unblock_guest,
        doc("unblockGuest", "Unblock a guest (idempotent)", 204, "Not blocked")
            .details("Done whether or not the tag was blocked.")
            .errors(&["validation_failed"])
            .listed("bearer", "`204`");
}
