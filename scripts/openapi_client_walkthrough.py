"""README's curl walkthrough, through the client openapi-python-client
generates from docs/openapi.json (scripts/openapi-client runs it against a
local server). Every answer is asserted: status, parsed body, headers. Its
steps are scripts/openapi_client_walkthrough.steps, in order, as the
TypeScript walkthrough's are.

Anonymous calls of getPost, getPostByNumber, listPosts and reportPost pass
a plain `Client`, as a reader without an account would: the document takes
them with or without a token (security `[{}, {"bearer": []}]`), but
openapi-python-client 0.29.1 ignores the empty requirement and types their
`client` as `AuthenticatedClient` (openapi-python-client issue #1372). Any
client works at run time; a type checker would flag these calls.

    python3 scripts/openapi_client_walkthrough.py http://127.0.0.1:3000 scripts/openapi_client_walkthrough.steps
"""

import base64
import hashlib
import hmac
import struct
import sys
import time
import uuid
from urllib.parse import parse_qs, urlsplit

from community_boards_client import AuthenticatedClient, Client
from community_boards_client.api.account import (
    block_guest,
    block_member,
    change_password,
    confirm_totp,
    delete_me,
    delete_sessions,
    delete_totp,
    get_me,
    get_unread_count,
    list_blocks,
    list_my_comments,
    list_my_posts,
    list_notifications,
    mark_notifications_read,
    start_totp,
    unblock_guest,
    unblock_member,
)
from community_boards_client.api.boards import get_board, list_boards, put_board
from community_boards_client.api.comments import (
    create_guest_comment,
    create_member_comment,
    delete_member_comment,
    get_comment,
    list_comments,
)
from community_boards_client.api.health import get_health
from community_boards_client.api.likes import (
    dislike_post,
    like_post,
    undislike_post,
    unlike_post,
    vote_as_guest,
)
from community_boards_client.api.members import create_member
from community_boards_client.api.posts import (
    create_guest_post,
    create_member_post,
    delete_guest_post,
    delete_member_post,
    get_post,
    get_post_by_number,
    list_posts,
    list_revisions,
    update_guest_post,
)
from community_boards_client.api.challenges import get_challenge
from community_boards_client.api.moderation import (
    create_ban,
    delete_ban,
    list_bans,
    list_moderation_log,
    list_reports,
    recategorize_post,
    report_post,
    resolve_report,
    unbest_post,
)
from community_boards_client.api.sessions import create_session
from community_boards_client.models import (
    BanRequest,
    BoardRequest,
    CategoryRequest,
    ChangePasswordRequest,
    DeleteAccountRequest,
    DislikePolicy,
    ReasonRequest,
    CommentRequest,
    ConfirmTotpRequest,
    EndTotpRequest,
    Error,
    GuestAuthor,
    GuestCommentRequest,
    GuestEditRequest,
    GuestPostRequest,
    GuestProofRequest,
    GuestVoteRequest,
    LogInRequest,
    MarkReadRequest,
    MemberAuthor,
    NotificationKind,
    PostRequest,
    SignUpRequest,
    StartTotpRequest,
    Vote,
)
from community_boards_client.types import UNSET, Unset

checks = 0
# The walkthrough's steps (the .steps file) and how many have begun.
steps: list[str] = []
begun = 0

# scripts/openapi-client starts the server with it (an unclaimed admin
# name is reserved for a signup that carries it).
ADMIN_ENROLL_TOKEN = "walkthrough-admin-token"
# A guest elsewhere: scripts/openapi-client trusts the loopback as a
# proxy (TRUSTED_PROXIES), so this X-Forwarded-For is the guest's address,
# not the one every post of the walkthrough is written from (nobody votes
# on a post written from their own address).
GUEST_VOTER_ADDRESS = "198.51.100.7"
# A well-formed member id (a ULID) that names nobody.
NO_MEMBER_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
# Notifications follow their text off the request path, within 5 s
# (docs/API.md): a step that waits for one polls the unread count this long.
NOTIFICATION_WAIT_S = 10


def totp_code(secret, at):
    """RFC 6238 as authenticator apps compute it (the server's parameters,
    docs/API.md): HMAC-SHA-1 of the 30-second step `at` falls in, 6 digits."""
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", int(at) // 30), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"


def check(condition, what):
    global checks
    if not condition:
        raise AssertionError(what)
    checks += 1


def begin(what):
    """The next step of the .steps file is `what`: the walkthrough is the same for every client."""
    global begun
    expected = steps[begun] if begun < len(steps) else "(no more steps)"
    begun += 1
    if what != expected:
        raise AssertionError(f"the steps file names {expected!r}, the walkthrough ran {what!r}")


def expect_status(response, status, what):
    """Step `what` answered `status` with the request id header."""
    begin(what)
    body = response.content.decode(errors="replace")[:300]
    check(response.status_code == status, f"{what}: {response.status_code} {body}, expected {status}")
    check(bool(response.headers.get("x-request-id")), f"{what}: no X-Request-Id")


def expect(response, status, what):
    """Step `what` answered `status` with the request id header; returns the parsed body."""
    expect_status(response, status, what)
    return response.parsed


def expect_error(response, status, code, what):
    error = expect(response, status, what)
    check(isinstance(error, Error), f"{what}: the error body was not parsed: {error!r}")
    check(error.error.code == code, f"{what}: code {error.error.code}, expected {code}")
    check(bool(error.error.message), f"{what}: no message")
    return error


def header(response, name, what):
    """A header of docs/API.md the answer must carry, by the name the document declares."""
    value = response.headers.get(name)
    check(value is not None, f"{what}: no {name} header")
    return value


def head(client, path, what):
    """A HEAD, served beside every GET though the document leaves it out:
    through the client's own httpx client, as a client developer would."""
    response = client.get_httpx_client().head(path)
    expect_status(response, 200, what)
    check(response.content == b"", f"{what}: a body")
    return response


def walk(base):
    client = Client(base_url=base, raise_on_unexpected_status=True)

    # The request id is a header of the client, not an argument of each call.
    tagged = client.with_headers({"X-Request-Id": "walkthrough-1"})
    answered = get_health.sync_detailed(client=tagged)
    check(expect(answered, 200, "getHealth with an X-Request-Id").status == "ok", "getHealth: status ok")
    echoed = answered.headers["x-request-id"]
    check(echoed == "walkthrough-1", f"a tidy X-Request-Id is echoed, got {echoed}")
    head(client, "/health", "HEAD /health")

    # Sign up (idempotent: the same key answers the same member again) and log in.
    key = str(uuid.uuid4())
    signup = SignUpRequest(username="kim", password="correct horse", nickname="Kim")
    created = create_member.sync_detailed(
        client=client, body=signup, idempotency_key=key, admin_enroll_token=ADMIN_ENROLL_TOKEN
    )
    member = expect(created, 201, "createMember")
    check(member.username == "kim" and member.nickname == "Kim", f"createMember: {member}")
    check("idempotent-replayed" not in created.headers, "createMember: a first answer is not a replay")
    replay = create_member.sync_detailed(
        client=client, body=signup, idempotency_key=key, admin_enroll_token=ADMIN_ENROLL_TOKEN
    )
    check(expect(replay, 201, "createMember replayed").id == member.id, "the replay answers the same member")
    check(replay.headers.get("idempotent-replayed") == "true", "createMember replayed: Idempotent-Replayed")
    expect_error(
        create_member.sync_detailed(client=client, body=signup, idempotency_key=str(uuid.uuid4())),
        409,
        "username_taken",
        "createMember again",
    )
    wrong = create_session.sync_detailed(client=client, body=LogInRequest(username="kim", password="wrong horse"))
    expect_error(wrong, 401, "invalid_credentials", "createSession with a wrong password")
    header(wrong, "www-authenticate", "createSession 401")
    session = expect(
        create_session.sync_detailed(client=client, body=LogInRequest(username="kim", password="correct horse")),
        200,
        "createSession",
    )
    check(session.member.id == member.id and session.token, "createSession: a token for kim")
    kim = AuthenticatedClient(base_url=base, token=session.token, raise_on_unexpected_status=True)
    # A second member, to vote on kim's posts: nobody votes on their own.
    second = SignUpRequest(username="park", password="park's horse", nickname="Park")
    expect(create_member.sync_detailed(client=client, body=second), 201, "createMember of a second member")
    session = expect(
        create_session.sync_detailed(client=client, body=LogInRequest(username="park", password="park's horse")),
        200,
        "createSession of the second member",
    )
    park = AuthenticatedClient(base_url=base, token=session.token, raise_on_unexpected_status=True)
    park_id = session.member.id

    # A member post, a comment, a like (by the other member).
    created = create_member_post.sync_detailed(
        "free", client=kim, body=PostRequest(title="Hello", body="First post"), idempotency_key=str(uuid.uuid4())
    )
    post = expect(created, 201, "createMemberPost")
    check(post.title == "Hello" and post.body == "First post" and post.view_count == 0, f"createMemberPost: {post}")
    # The board's first post, with no category, not best, no dislikes.
    check(post.number == 1 and post.category is None and post.best is False, f"createMemberPost v4 fields: {post}")
    check(post.dislike_count == 0, f"createMemberPost: dislike_count {post.dislike_count!r}")
    location = header(created, "location", "createMemberPost")
    check(location == f"/boards/free/posts/{post.id}", f"createMemberPost: Location {location}")
    first_etag = header(created, "etag", "createMemberPost")
    created = create_member_comment.sync_detailed("free", post.id, client=kim, body=CommentRequest(body="first!"))
    comment = expect(created, 201, "createMemberComment")
    check(comment.body == "first!" and comment.post_id == post.id, f"createMemberComment: {comment}")
    location = header(created, "location", "createMemberComment")
    check(location == f"/boards/free/posts/{post.id}/comments/{comment.id}", f"createMemberComment: Location {location}")
    shown = expect(
        get_comment.sync_detailed("free", post.id, comment.id, client=client), 200, "getComment at the comment's Location"
    )
    check(shown.id == comment.id and shown.body == "first!", f"getComment: {shown}")
    for attempt in ("likePost", "likePost again"):
        liked = expect(like_post.sync_detailed("free", post.id, client=park), 200, attempt)
        check(liked.liked and not liked.disliked and liked.like_count == 1, f"{attempt}: {liked}")
        check(liked.dislike_count == 0, f"{attempt}: dislike_count {liked.dislike_count!r}")
    expect_error(like_post.sync_detailed("free", post.id, client=kim), 403, "forbidden", "likePost of one's own post")
    anonymous = create_member_post.sync_detailed("free", client=client, body=PostRequest(title="No", body="token"))
    expect_error(anonymous, 401, "unauthorized", "createMemberPost without a token")
    header(anonymous, "www-authenticate", "createMemberPost 401")

    # Read it (counts the view; a HEAD does not) and list the board.
    read = get_post.sync_detailed("free", post.id, client=client)
    detail = expect(read, 200, "getPost")
    check(detail.view_count == 1 and detail.like_count == 1, f"getPost counts: {detail}")
    check(detail.number == 1 and detail.category is None and detail.best is False, f"getPost v4 fields: {detail}")
    # `my_vote` only with a token.
    check(isinstance(detail.my_vote, Unset), f"getPost without a token: my_vote {detail.my_vote!r}")
    check([c.body for c in detail.comments] == ["first!"], f"getPost comments: {detail.comments}")
    etag = header(read, "etag", "getPost")
    check(etag == first_etag, "a view and a like leave the ETag as it was")
    peek = head(client, f"/boards/free/posts/{post.id}", "HEAD of the post")
    check(peek.headers.get("etag") == etag, "HEAD of the post: the GET's ETag")
    again = expect(get_post.sync_detailed("free", post.id, client=client), 200, "getPost after the HEAD")
    check(again.view_count == 2, "the HEAD counted no view")
    page = expect(list_posts.sync_detailed("free", client=client, limit=10), 200, "listPosts")
    check([p.id for p in page.posts] == [post.id], f"listPosts: {page.posts}")
    expect_error(list_posts.sync_detailed("nowhere", client=client), 404, "not_found", "listPosts of no board")

    # A guest post, a wrong password, then the right one.
    guest = GuestPostRequest(nickname="Lee", password="1234", title="Hi", body="from a guest")
    created = create_guest_post.sync_detailed("free", client=client, body=guest, idempotency_key=str(uuid.uuid4()))
    guest_post = expect(created, 201, "createGuestPost")
    check(guest_post.author.nickname == "Lee", f"createGuestPost: {guest_post.author}")
    check(guest_post.number == 2, f"createGuestPost: the board's second post, number {guest_post.number!r}")
    # A write under a quota says what is left of it.
    pacing = header(created, "ratelimit", "createGuestPost")
    check(pacing.startswith('"creates";r='), f"createGuestPost: RateLimit {pacing}")
    location = header(created, "location", "createGuestPost")
    check(location == f"/boards/free/posts/{guest_post.id}", f"createGuestPost: Location {location}")
    guest_etag = header(created, "etag", "createGuestPost")
    expect_error(
        update_guest_post.sync_detailed(
            "free", guest_post.id, client=client, body=GuestEditRequest(password="0000", title="Hi", body="edited")
        ),
        403,
        "wrong_password",
        "updateGuestPost with a wrong password",
    )
    edited = update_guest_post.sync_detailed(
        "free",
        guest_post.id,
        client=client,
        body=GuestEditRequest(password="1234", title="Hi", body="edited"),
        if_match=guest_etag,
    )
    check(expect(edited, 200, "updateGuestPost").body == "edited", "updateGuestPost: the edited post")
    new_etag = header(edited, "etag", "updateGuestPost")
    check(new_etag != guest_etag, "an edit changes the ETag")
    expect_error(
        update_guest_post.sync_detailed(
            "free",
            guest_post.id,
            client=client,
            body=GuestEditRequest(password="1234", title="Hi", body="stale"),
            if_match=guest_etag,
        ),
        412,
        "precondition_failed",
        "updateGuestPost with a stale If-Match",
    )
    # The edit kept the version it replaced; and a proof-of-work challenge to solve.
    history = expect(
        list_revisions.sync_detailed("free", guest_post.id, client=client), 200, "listRevisions of the edited guest post"
    )
    revision_texts = [(r.title, r.body) for r in history.revisions]
    check(revision_texts == [("Hi", "from a guest")], f"listRevisions: {history.revisions}")
    challenge = expect(get_challenge.sync_detailed(client=client), 200, "getChallenge")
    check(
        challenge.algorithm == "SHA-256" and challenge.maxnumber > 0 and challenge.salt.endswith("&"),
        f"getChallenge: {challenge}",
    )
    guest_comment = expect(
        create_guest_comment.sync_detailed(
            "free", post.id, client=client, body=GuestCommentRequest(nickname="Lee", password="1234", body="a guest comment")
        ),
        201,
        "createGuestComment",
    )
    comments = expect(list_comments.sync_detailed("free", post.id, client=client), 200, "listComments")
    check([c.id for c in comments.comments] == [comment.id, guest_comment.id], f"listComments: {comments.comments}")

    notifications_and_blocks(base, kim, member.id, park, park_id, post, comment, guest_post, guest_comment)

    kim, recovery_codes = staff_totp(base, client, kim)
    # Moderation: kim is the admin (ADMIN_USERNAMES), signed in
    # with TOTP, as staff routes require by default. Anyone reports the
    # guest post; the second report joins the first; kim bans its writer
    # through it (shown by tag, never the address), then lifts the ban and
    # resolves the report; the public log shows both.
    tag = guest_post.author.tag
    check(isinstance(tag, str) and len(tag) == 8, f"a guest author carries a tag: {guest_post.author}")
    report = expect(
        report_post.sync_detailed("free", guest_post.id, client=client, body=ReasonRequest(reason="spam")),
        201,
        "reportPost",
    )
    again = expect(
        report_post.sync_detailed("free", guest_post.id, client=client, body=ReasonRequest(reason="spam too")),
        200,
        "reportPost again",
    )
    check(again.id == report.id, "a second report of a post joins its open report")
    reports = expect(list_reports.sync_detailed("free", client=kim), 200, "listReports")
    check([(r.id, r.reporters) for r in reports.reports] == [(report.id, 1)], f"listReports: {reports.reports}")
    ban = expect(
        create_ban.sync_detailed(
            "free", client=kim, body=BanRequest(post_id=guest_post.id, reason="spam", duration_s=3600)
        ),
        201,
        "createBan",
    )
    check(ban.target.tag == tag, f"createBan: the guest is named by its tag: {ban.target}")
    expect_error(
        create_guest_post.sync_detailed("free", client=client, body=guest), 403, "banned", "createGuestPost banned"
    )
    bans = expect(list_bans.sync_detailed("free", client=kim), 200, "listBans")
    check([b.id for b in bans.bans] == [ban.id], f"listBans: {bans.bans}")
    expect_status(delete_ban.sync_detailed("free", ban.id, client=kim), 204, "deleteBan")
    expect_status(resolve_report.sync_detailed("free", report.id, client=kim), 204, "resolveReport")
    log = expect(list_moderation_log.sync_detailed("free", client=client), 200, "listModerationLog")
    check([e.action for e in log.entries] == ["unban", "ban"], f"listModerationLog: {log.entries}")

    deleted = delete_guest_post.sync_detailed("free", guest_post.id, client=client, body=GuestProofRequest(password="1234"))
    expect_status(deleted, 204, "deleteGuestPost")
    check(deleted.content == b"", "deleteGuestPost: a body")
    expect_error(
        get_post.sync_detailed("free", guest_post.id, client=client), 404, "not_found", "getPost of the deleted guest post"
    )

    # Errors name the field and the rule.
    error = expect_error(
        create_member.sync_detailed(client=client, body=SignUpRequest(username="x", password="pw", nickname="n")),
        400,
        "validation_failed",
        "createMember with a short username",
    )
    check("username" in error.error.message, f"the message names the field: {error.error.message}")
    # ... and say it as a typed field, to place the error by.
    check(error.error.field == "username", f"the error's field: {error.error.field}")
    # A password on the bundled blocklist is refused at signup.
    common = expect_error(
        create_member.sync_detailed(
            client=client, body=SignUpRequest(username="choi", password="password123", nickname="Choi")
        ),
        400,
        "validation_failed",
        "createMember with a common password",
    )
    check(common.error.field == "password", f"createMember with a common password: field {common.error.field!r}")
    check("too common" in common.error.message, f"createMember with a common password: {common.error.message}")

    # Unlike, then the member's own deletes.
    unliked = expect(unlike_post.sync_detailed("free", post.id, client=park), 200, "unlikePost")
    check(not unliked.liked and not unliked.disliked and unliked.like_count == 0, f"unlikePost: {unliked}")
    expect_status(delete_member_comment.sync_detailed("free", post.id, comment.id, client=kim), 204, "deleteMemberComment")
    expect_status(delete_member_post.sync_detailed("free", post.id, client=kim), 204, "deleteMemberPost")
    expect_error(
        get_post.sync_detailed("free", post.id, client=client), 404, "not_found", "getPost of the deleted member post"
    )

    boards_v4(base, client, kim, park)

    # The member's own account: who and what roles, their posts and
    # comments, a new password (every earlier token stops), sign-out
    # everywhere, and leaving with the content kept as a deleted member's.
    me = expect(get_me.sync_detailed(client=kim), 200, "getMe")
    check(me.username == "kim" and me.roles.admin and me.roles.moderates == [], f"getMe: {me}")
    mine = expect(
        create_member_post.sync_detailed("free", client=kim, body=PostRequest(title="mine", body="kept")),
        201,
        "createMemberPost of mine",
    )
    expect(
        create_member_comment.sync_detailed("free", mine.id, client=kim, body=CommentRequest(body="and mine")),
        201,
        "createMemberComment of mine",
    )
    posts = expect(list_my_posts.sync_detailed(client=kim), 200, "listMyPosts")
    check([p.id for p in posts.posts] == [mine.id], f"listMyPosts: {posts.posts}")
    comments = expect(list_my_comments.sync_detailed(client=kim), 200, "listMyComments")
    check(len(comments.comments) == 1 and comments.comments[0].post_id == mine.id, f"listMyComments: {comments}")
    changed = change_password.sync_detailed(
        client=kim, body=ChangePasswordRequest(current_password="correct horse", new_password="battery staple")
    )
    expect_status(changed, 204, "changePassword")
    expect_error(get_me.sync_detailed(client=kim), 401, "unauthorized", "getMe with a token from before the change")

    def log_in(password, what, totp=UNSET):
        session = expect(
            create_session.sync_detailed(
                client=client, body=LogInRequest(username="kim", password=password, totp=totp)
            ),
            200,
            what,
        )
        return AuthenticatedClient(base_url=base, token=session.token, raise_on_unexpected_status=True)

    # TOTP stays on through a password change: a recovery code signs
    # in (the TOTP steps up to the next one are spent), another turns it off.
    kim = log_in("battery staple", "createSession with the new password", totp=recovery_codes[1])
    expect_status(
        delete_totp.sync_detailed(client=kim, body=EndTotpRequest(password="battery staple", code=recovery_codes[2])),
        204,
        "deleteTotp",
    )
    expect_status(delete_sessions.sync_detailed(client=kim), 204, "deleteSessions")
    expect_error(get_me.sync_detailed(client=kim), 401, "unauthorized", "getMe after signing out everywhere")
    kim = log_in("battery staple", "createSession again")
    left = delete_me.sync_detailed(client=kim, body=DeleteAccountRequest(password="battery staple", delete_content=False))
    expect_status(left, 204, "deleteMe")
    kept = expect(get_post.sync_detailed("free", mine.id, client=client), 200, "getPost of a deleted member")
    check(kept.author.kind == "deleted_member" and kept.author.nickname == "deleted member", f"{kept.author}")
    expect_error(
        create_member.sync_detailed(
            client=client,
            body=SignUpRequest(username="kim", password="a new kim horse", nickname="K"),
            admin_enroll_token=ADMIN_ENROLL_TOKEN,
        ),
        409,
        "username_taken",
        "createMember with a deleted member's username",
    )


def elsewhere(base):
    """A client of a guest at GUEST_VOTER_ADDRESS: a client of its own,
    as `client.with_headers` would also add the header to the httpx client
    `client` has made already (openapi-python-client 0.29.1), and every
    later anonymous step would come from there."""
    return Client(
        base_url=base, headers={"X-Forwarded-For": GUEST_VOTER_ADDRESS}, raise_on_unexpected_status=True
    )


def unread_once_arrived(kim, at_least, what):
    """Step `what`: the unread count, polled (up to NOTIFICATION_WAIT_S)
    until it reaches `at_least`, for notifications come off the request path;
    the last answer is the step's. Answers the count."""
    deadline = time.monotonic() + NOTIFICATION_WAIT_S
    while True:
        answer = get_unread_count.sync_detailed(client=kim)
        arrived = answer.status_code == 200 and answer.parsed.unread >= at_least
        if arrived or answer.status_code != 200 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return expect(answer, 200, what).unread


def notifications_and_blocks(base, kim, kim_id, park, park_id, post, comment, guest_post, guest_comment):
    """Notifications and blocks. The guest's comment on kim's post has
    notified kim already; park replies to kim's comment, naming kim: one
    notification, of the strongest kind that applies (a reply). kim pages
    through them, marks the older read, blocks park and the guest (by tag)
    and reads the board without them; park's next comment does not notify
    kim, a guest elsewhere's does; kim reads everything and unblocks both."""
    tag = guest_post.author.tag
    check(isinstance(tag, str) and len(tag) == 8, f"a guest author carries a tag: {guest_post.author}")
    check(guest_comment.author.tag == tag, f"the guest's comment, from the same address: {guest_comment.author}")
    welcome = "@kim welcome aboard"
    reply = expect(
        create_member_comment.sync_detailed(
            "free", post.id, client=park, body=CommentRequest(body=welcome, parent_id=comment.id)
        ),
        201,
        "createMemberComment replying with a mention",
    )
    check(reply.parent_id == comment.id and reply.body == welcome, f"createMemberComment: {reply}")
    unread = unread_once_arrived(kim, 2, "getUnreadCount until the notifications arrive")
    check(unread == 2, f"getUnreadCount: {unread}, expected 2 (the guest's comment, park's reply)")

    # Newest first, a page at a time.
    page = expect(list_notifications.sync_detailed(client=kim, limit=1), 200, "listNotifications with a limit")
    check(len(page.notifications) == 1 and isinstance(page.next_cursor, str), f"listNotifications: {page}")
    newest = page.notifications[0]
    check(newest.kind == NotificationKind.REPLY, f"a reply that names kim notifies once, as a reply: {newest}")
    check(
        (newest.board, newest.post_id, newest.comment_id, newest.excerpt, newest.read)
        == ("free", post.id, reply.id, welcome, False),
        f"listNotifications: {newest}",
    )
    actor = newest.actor
    check(isinstance(actor, MemberAuthor) and actor.member_id == park_id and actor.nickname == "Park", f"{actor}")
    page = expect(
        list_notifications.sync_detailed(client=kim, limit=1, cursor=page.next_cursor),
        200,
        "listNotifications at the next cursor",
    )
    check(len(page.notifications) == 1 and page.next_cursor is None, f"listNotifications, the last page: {page}")
    older = page.notifications[0]
    check(older.kind == NotificationKind.COMMENT and older.id < newest.id, f"the guest's comment, older: {older}")
    check(
        (older.board, older.post_id, older.comment_id, older.excerpt, older.read)
        == ("free", post.id, guest_comment.id, "a guest comment", False),
        f"listNotifications at the next cursor: {older}",
    )
    actor = older.actor
    check(isinstance(actor, GuestAuthor) and actor.nickname == "Lee" and actor.tag == tag, f"{actor}")
    marked = expect(
        mark_notifications_read.sync_detailed(client=kim, body=MarkReadRequest(up_to=older.id)),
        200,
        "markNotificationsRead up to the older one",
    )
    check(marked.unread == 1, f"markNotificationsRead: unread {marked.unread}, expected 1")
    refused = expect_error(
        mark_notifications_read.sync_detailed(client=kim, body=MarkReadRequest(up_to="the older one")),
        400,
        "validation_failed",
        "markNotificationsRead with an up_to that is no id",
    )
    check(refused.error.field == "up_to", f"markNotificationsRead: the error's field {refused.error.field!r}")

    # kim blocks park (twice: the same) and the guest by tag; not themself, nor nobody.
    for attempt in ("blockMember", "blockMember again"):
        blocked = block_member.sync_detailed(park_id, client=kim)
        expect_status(blocked, 204, attempt)
        check(blocked.content == b"", f"{attempt}: a body")
    refused = expect_error(
        block_member.sync_detailed(kim_id, client=kim), 400, "validation_failed", "blockMember of oneself"
    )
    check(refused.error.field == "member_id", f"blockMember of oneself: the error's field {refused.error.field!r}")
    expect_error(block_member.sync_detailed(NO_MEMBER_ID, client=kim), 404, "not_found", "blockMember of no member")
    expect_status(block_guest.sync_detailed(tag, client=kim), 204, "blockGuest")
    # 8 characters, but 1, 8 and 0 are no letters of a tag.
    refused = expect_error(
        block_guest.sync_detailed("12345678", client=kim), 400, "validation_failed", "blockGuest of no tag"
    )
    check(refused.error.field == "tag", f"blockGuest of no tag: the error's field {refused.error.field!r}")
    blocks = expect(list_blocks.sync_detailed(client=kim), 200, "listBlocks")
    members = [(m.id, m.nickname) for m in blocks.members]
    check(members == [(park_id, "Park")], f"listBlocks: members {blocks.members}")
    check([g.tag for g in blocks.guests] == [tag], f"listBlocks: guests {blocks.guests}")

    # With kim's token the board leaves them out: the guest's post, their comments.
    page = expect(list_posts.sync_detailed("free", client=kim), 200, "listPosts with the blocker's token")
    check([p.id for p in page.posts] == [post.id], f"listPosts without the guest's post: {page.posts}")
    detail = expect(get_post.sync_detailed("free", post.id, client=kim), 200, "getPost with the blocker's token")
    check([c.id for c in detail.comments] == [comment.id], f"getPost without their comments: {detail.comments}")
    comments = expect(
        list_comments.sync_detailed("free", post.id, client=kim), 200, "listComments with the blocker's token"
    )
    check([c.id for c in comments.comments] == [comment.id], f"listComments without theirs: {comments.comments}")

    # park, blocked, notifies kim no more; a guest elsewhere (another tag)
    # does. Notifications follow their texts in order: once the guest's
    # has come, park's would have.
    again = expect(
        create_member_comment.sync_detailed("free", post.id, client=park, body=CommentRequest(body="@kim still there?")),
        201,
        "createMemberComment by a blocked member",
    )
    other = expect(
        create_guest_comment.sync_detailed(
            "free",
            post.id,
            client=elsewhere(base),
            body=GuestCommentRequest(nickname="Moon", password="5678", body="hello from elsewhere"),
        ),
        201,
        "createGuestComment from elsewhere",
    )
    other_tag = other.author.tag
    check(isinstance(other_tag, str) and other_tag != tag, f"a guest elsewhere has a tag of its own: {other.author}")
    unread = unread_once_arrived(kim, 2, "getUnreadCount until the next notification arrives")
    check(unread == 2, f"getUnreadCount: {unread}, expected 2 (park's reply, the guest elsewhere's comment)")
    page = expect(list_notifications.sync_detailed(client=kim), 200, "listNotifications after the blocks")
    shown = [(n.kind, n.comment_id, n.read) for n in page.notifications]
    expected = [
        (NotificationKind.COMMENT, other.id, False),
        (NotificationKind.REPLY, reply.id, False),
        (NotificationKind.COMMENT, guest_comment.id, True),
    ]
    check(shown == expected, f"listNotifications: {shown}, expected {expected} (none of {again.id})")
    actor = page.notifications[0].actor
    check(isinstance(actor, GuestAuthor) and actor.nickname == "Moon" and actor.tag == other_tag, f"{actor}")
    check(page.next_cursor is None, f"listNotifications: next_cursor {page.next_cursor!r}")
    marked = expect(
        mark_notifications_read.sync_detailed(client=kim, body=MarkReadRequest()), 200, "markNotificationsRead of all"
    )
    check(marked.unread == 0, f"markNotificationsRead of all: unread {marked.unread}")
    unread = expect(get_unread_count.sync_detailed(client=kim), 200, "getUnreadCount after reading").unread
    check(unread == 0, f"getUnreadCount after reading: {unread}")

    # Unblocking (again: the same) brings them back.
    expect_status(unblock_member.sync_detailed(park_id, client=kim), 204, "unblockMember")
    expect_status(unblock_member.sync_detailed(park_id, client=kim), 204, "unblockMember again")
    expect_status(unblock_guest.sync_detailed(tag, client=kim), 204, "unblockGuest")
    blocks = expect(list_blocks.sync_detailed(client=kim), 200, "listBlocks after unblocking")
    check(blocks.members == [] and blocks.guests == [], f"listBlocks after unblocking: {blocks}")
    comments = expect(
        list_comments.sync_detailed("free", post.id, client=kim),
        200,
        "listComments with the blocker's token after unblocking",
    )
    everyone = [comment.id, guest_comment.id, reply.id, again.id, other.id]
    check([c.id for c in comments.comments] == everyone, f"listComments after unblocking: {comments.comments}")


def staff_totp(base, client, kim):
    """Staff sign in with TOTP: the server keeps STAFF_REQUIRE_TOTP at
    its default (on), so kim's staff routes answer `403 totp_required` until
    kim enrolls. The app's part is totp_code. Answers kim signed in with a
    code, for the moderation that follows, and the recovery codes."""
    expect_error(
        list_reports.sync_detailed("free", client=kim), 403, "totp_required", "listReports before enrolling in TOTP"
    )
    # An enrollment needs the password, and an admin's first one the enroll token.
    expect_error(
        start_totp.sync_detailed(client=kim, body=StartTotpRequest(password="correct horse")),
        403,
        "forbidden",
        "startTotp of an admin without Admin-Enroll-Token",
    )
    enrollment = expect(
        start_totp.sync_detailed(
            client=kim, body=StartTotpRequest(password="correct horse"), admin_enroll_token=ADMIN_ENROLL_TOKEN
        ),
        200,
        "startTotp",
    )
    uri = urlsplit(enrollment.otpauth_uri)
    check(uri.scheme == "otpauth" and uri.netloc == "totp", f"startTotp: otpauth_uri {enrollment.otpauth_uri}")
    check(parse_qs(uri.query).get("secret") == [enrollment.secret], f"startTotp: the URI's secret {uri.query}")
    # The code of the current step: it is spent by confirming.
    codes = expect(
        confirm_totp.sync_detailed(client=kim, body=ConfirmTotpRequest(code=totp_code(enrollment.secret, time.time()))),
        200,
        "confirmTotp",
    )
    recovery_codes = codes.recovery_codes
    check(len(set(recovery_codes)) == 10 and all(recovery_codes), f"confirmTotp: {recovery_codes}")

    def log_in(totp):
        return create_session.sync_detailed(
            client=client, body=LogInRequest(username="kim", password="correct horse", totp=totp)
        )

    refused = log_in(UNSET)
    expect_error(refused, 401, "totp_required", "createSession without a TOTP code")
    # A step is accepted once and the current one is spent: the next step's
    # code, within the one step of drift the server allows.
    session = expect(log_in(totp_code(enrollment.secret, time.time() + 30)), 200, "createSession with a TOTP code")
    check(session.member.username == "kim" and session.token, f"createSession with a TOTP code: {session}")
    with_totp = AuthenticatedClient(base_url=base, token=session.token, raise_on_unexpected_status=True)
    recovered = expect(log_in(recovery_codes[0]), 200, "createSession with a recovery code")
    check(recovered.member.username == "kim" and recovered.token, f"createSession with a recovery code: {recovered}")
    expect_error(log_in(recovery_codes[0]), 401, "invalid_credentials", "createSession with a spent recovery code")
    return with_totp, recovery_codes


def boards_v4(base, client, kim, park):
    """Boards, categories, votes and best posts: kim (an admin) opens a
    board with categories and a best-post threshold of 2; park writes on it;
    kim votes both ways; a guest elsewhere casts the vote that makes the
    post best; kim recategorizes it and takes it out of the best posts."""
    slug = "walkthrough"
    categories = ["정보", "질문"]
    opening = BoardRequest(name="Walkthrough", categories=categories, best_likes=2)
    opened_answer = put_board.sync_detailed(slug, client=kim, body=opening)
    opened = expect(opened_answer, 201, "putBoard opening a board")
    check(opened.slug == slug and opened.name == "Walkthrough" and opened.description == "", f"putBoard: {opened}")
    check(opened.categories == categories and opened.best_likes == 2, f"putBoard: {opened}")
    check(opened.dislikes == DislikePolicy.SHOWN and opened.guest_writes and not opened.lock_after_comments, f"{opened}")
    check(opened.post_count == 0, f"putBoard: post_count {opened.post_count}")
    location = header(opened_answer, "location", "putBoard")
    check(location == f"/boards/{slug}", f"putBoard: Location {location}")
    boards = expect(list_boards.sync_detailed(client=client), 200, "listBoards").boards
    check([b.slug for b in boards] == ["free", "notice", "qna", slug], f"listBoards: slug order: {boards}")
    seeded = [b for b in boards if b.slug != slug]
    check(all(b.name == b.slug and b.best_likes == 10 and b.categories == [] for b in seeded), f"seeded: {seeded}")
    check(boards[-1] == opened, f"listBoards: the board as opened: {boards[-1]}")
    expect_error(
        put_board.sync_detailed(slug, client=park, body=BoardRequest(name="Mine")),
        403,
        "forbidden",
        "putBoard by a member who is not staff",
    )
    described = "Boards through generated clients"
    change = BoardRequest(name="Walkthrough", description=described, categories=categories, best_likes=2)
    changed = expect(put_board.sync_detailed(slug, client=kim, body=change), 200, "putBoard changing it")
    check(changed.description == described and changed.created_at == opened.created_at, f"putBoard: {changed}")
    refused = expect_error(
        put_board.sync_detailed(
            slug, client=kim, body=BoardRequest(name="Walkthrough", categories=["정보", "Tip", "TIP"])
        ),
        400,
        "validation_failed",
        "putBoard with a duplicate category",
    )
    check(refused.error.field == "categories", f"putBoard: the error's field {refused.error.field!r}")

    # park writes on it, once with a category; a category it lacks is refused.
    first = expect(
        create_member_post.sync_detailed(
            slug, client=park, body=PostRequest(title="A tip", body="with a category", category="정보")
        ),
        201,
        "createMemberPost with a category",
    )
    check(first.category == "정보" and first.number == 1 and first.best is False, f"createMemberPost: {first}")
    refused = expect_error(
        create_member_post.sync_detailed(
            slug, client=park, body=PostRequest(title="No", body="such category", category="잡담")
        ),
        400,
        "validation_failed",
        "createMemberPost with a category the board lacks",
    )
    check(refused.error.field == "category", f"createMemberPost: the error's field {refused.error.field!r}")
    second = expect(
        create_member_post.sync_detailed(slug, client=park, body=PostRequest(title="Plain", body="no category")),
        201,
        "createMemberPost without a category",
    )
    # The refused create took no number.
    check(second.category is None and second.number == 2, f"createMemberPost: {second}")
    board = expect(get_board.sync_detailed(slug, client=client), 200, "getBoard")
    check(board.post_count == 2 and board.description == described, f"getBoard: {board}")
    check(board.categories == categories and board.best_likes == 2, f"getBoard: {board}")
    numbered = expect(
        get_post_by_number.sync_detailed(slug, str(first.number), client=client), 200, "getPostByNumber"
    )
    check(numbered.id == first.id and numbered.view_count == 1, f"getPostByNumber: {numbered}")
    listed = expect(list_posts.sync_detailed(slug, client=client, category="정보"), 200, "listPosts with a category")
    check([p.id for p in listed.posts] == [first.id], f"listPosts ?category=정보: {listed.posts}")

    # kim votes: a like, a dislike that withdraws it, the dislike withdrawn,
    # the like again.
    post_id = first.id

    def voted(answer, what, liked, disliked, likes, dislikes):
        state = expect(answer, 200, what)
        check(
            (state.liked, state.disliked, state.like_count, state.dislike_count) == (liked, disliked, likes, dislikes),
            f"{what}: {state}",
        )

    voted(like_post.sync_detailed(slug, post_id, client=kim), "likePost on the new board", True, False, 1, 0)
    voted(dislike_post.sync_detailed(slug, post_id, client=kim), "dislikePost", False, True, 0, 1)
    mine = expect(get_post.sync_detailed(slug, post_id, client=kim), 200, "getPost with a token")
    check(mine.my_vote == Vote.DISLIKE, f"getPost with a token: my_vote {mine.my_vote!r}")
    check(mine.like_count == 0 and mine.dislike_count == 1, f"getPost with a token: {mine}")
    voted(undislike_post.sync_detailed(slug, post_id, client=kim), "undislikePost", False, False, 0, 0)
    voted(like_post.sync_detailed(slug, post_id, client=kim), "likePost after undisliking", True, False, 1, 0)

    # A guest elsewhere likes it: the score reaches best_likes (2), and the
    # post is best. A second vote from there, either way, is refused.
    guest = elsewhere(base)
    voted(
        vote_as_guest.sync_detailed(slug, post_id, client=guest, body=GuestVoteRequest(vote=Vote.LIKE)),
        "voteAsGuest",
        True,
        False,
        2,
        0,
    )
    expect_error(
        vote_as_guest.sync_detailed(slug, post_id, client=guest, body=GuestVoteRequest(vote=Vote.DISLIKE)),
        409,
        "already_voted",
        "voteAsGuest again",
    )
    best = expect(list_posts.sync_detailed(slug, client=client, best=True), 200, "listPosts with best")
    check([(p.id, p.best) for p in best.posts] == [(post_id, True)], f"listPosts ?best=true: {best.posts}")

    # Staff recategorize it and take it out of the best posts for good.
    moved = expect(
        recategorize_post.sync_detailed(slug, post_id, client=kim, body=CategoryRequest(category="질문")),
        200,
        "recategorizePost",
    )
    check(moved.id == post_id and moved.category == "질문" and moved.best is True, f"recategorizePost: {moved}")
    listed = expect(
        list_posts.sync_detailed(slug, client=client, category="질문"), 200, "listPosts with the new category"
    )
    check([p.id for p in listed.posts] == [post_id], f"listPosts ?category=질문: {listed.posts}")
    expect_status(unbest_post.sync_detailed(slug, post_id, client=kim), 204, "unbestPost")
    best = expect(list_posts.sync_detailed(slug, client=client, best=True), 200, "listPosts with best after unbestPost")
    check(best.posts == [], f"listPosts ?best=true after unbestPost: {best.posts}")
    log = expect(list_moderation_log.sync_detailed(slug, client=client), 200, "listModerationLog of the new board")
    actions = [e.action for e in log.entries]
    check(actions == ["unbest", "recategorize", "board_settings", "board_settings"], f"the board's log: {actions}")


def main(base, steps_file):
    with open(steps_file) as lines:
        steps.extend(line.strip() for line in lines if line.strip() and not line.startswith("#"))
    total = len(steps)
    # The walkthrough's authenticator app against RFC 6238's own vectors
    # (appendix B, SHA-1, the 6 low digits), before any step relies on it.
    rfc_secret = base64.b32encode(b"12345678901234567890").decode()
    for at, code in ((59, "287082"), (1111111109, "081804"), (20000000000, "353130")):
        if totp_code(rfc_secret, at) != code:
            print(f"openapi-client (python): totp_code at {at} is {totp_code(rfc_secret, at)}, RFC 6238 says {code}")
            sys.exit(1)

    def failed(step, failure):
        name = steps[step - 1] if step <= total else "(beyond the steps file)"
        print(f"openapi-client (python): {step - 1}/{total} steps passed; step {step} ({name}) failed: {failure!r}")
        sys.exit(1)

    try:
        walk(base)
    except AssertionError as failure:
        failed(begun, failure)  # a check of the step begun last
    except Exception as failure:  # the request of the next step: a client or network error
        failed(begun + 1, failure)
    if begun != total:
        print(f"openapi-client (python): {begun}/{total} steps passed; not run: {steps[begun:]}")
        sys.exit(1)
    print(f"openapi-client (python): {begun}/{total} steps passed ({checks} checks)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
