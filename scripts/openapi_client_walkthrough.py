"""README's curl walkthrough, through the client openapi-python-client
generates from docs/openapi.json (scripts/openapi-client runs it against a
local server). Every answer is asserted: status, parsed body, headers. Its
steps are scripts/openapi_client_walkthrough.steps, in order, as the
TypeScript walkthrough's are.

    python3 scripts/openapi_client_walkthrough.py http://127.0.0.1:3000 scripts/openapi_client_walkthrough.steps
"""

import sys
import uuid

from community_boards_client import AuthenticatedClient, Client
from community_boards_client.api.account import (
    change_password,
    delete_me,
    delete_sessions,
    get_me,
    list_my_comments,
    list_my_posts,
)
from community_boards_client.api.comments import (
    create_guest_comment,
    create_member_comment,
    delete_member_comment,
    get_comment,
    list_comments,
)
from community_boards_client.api.health import get_health
from community_boards_client.api.likes import like_post, unlike_post
from community_boards_client.api.members import create_member
from community_boards_client.api.posts import (
    create_guest_post,
    create_member_post,
    delete_guest_post,
    delete_member_post,
    get_post,
    list_posts,
    update_guest_post,
)
from community_boards_client.api.moderation import (
    create_ban,
    delete_ban,
    list_bans,
    list_moderation_log,
    list_reports,
    report_post,
    resolve_report,
)
from community_boards_client.api.sessions import create_session
from community_boards_client.models import (
    BanRequest,
    ChangePasswordRequest,
    DeleteAccountRequest,
    ReasonRequest,
    CommentRequest,
    Error,
    GuestCommentRequest,
    GuestEditRequest,
    GuestPostRequest,
    GuestProofRequest,
    LogInRequest,
    PostRequest,
    SignUpRequest,
)

checks = 0
# The walkthrough's steps (the .steps file) and how many have begun.
steps: list[str] = []
begun = 0

# scripts/openapi-client starts the server with it (v4: an unclaimed admin
# name is reserved for a signup that carries it).
ADMIN_ENROLL_TOKEN = "walkthrough-admin-token"


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

    # A member post, a comment, a like.
    created = create_member_post.sync_detailed(
        "free", client=kim, body=PostRequest(title="Hello", body="First post"), idempotency_key=str(uuid.uuid4())
    )
    post = expect(created, 201, "createMemberPost")
    check(post.title == "Hello" and post.body == "First post" and post.view_count == 0, f"createMemberPost: {post}")
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
        liked = expect(like_post.sync_detailed("free", post.id, client=kim), 200, attempt)
        check(liked.liked and liked.like_count == 1, f"{attempt}: {liked}")
    anonymous = create_member_post.sync_detailed("free", client=client, body=PostRequest(title="No", body="token"))
    expect_error(anonymous, 401, "unauthorized", "createMemberPost without a token")
    header(anonymous, "www-authenticate", "createMemberPost 401")

    # Read it (counts the view; a HEAD does not) and list the board.
    read = get_post.sync_detailed("free", post.id, client=client)
    detail = expect(read, 200, "getPost")
    check(detail.view_count == 1 and detail.like_count == 1, f"getPost counts: {detail}")
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
    # (v4) A write under a quota says what is left of it.
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
    guest_comment = expect(
        create_guest_comment.sync_detailed(
            "free", post.id, client=client, body=GuestCommentRequest(nickname="Lee", password="1234", body="a guest comment")
        ),
        201,
        "createGuestComment",
    )
    comments = expect(list_comments.sync_detailed("free", post.id, client=client), 200, "listComments")
    check([c.id for c in comments.comments] == [comment.id, guest_comment.id], f"listComments: {comments.comments}")
    # (v3) Moderation: kim is the admin (ADMIN_USERNAMES). Anyone reports the
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
    # (v4) ... and say it as a typed field, to place the error by.
    check(error.error.field == "username", f"the error's field: {error.error.field}")

    # Unlike, then the member's own deletes.
    unliked = expect(unlike_post.sync_detailed("free", post.id, client=kim), 200, "unlikePost")
    check(not unliked.liked and unliked.like_count == 0, f"unlikePost: {unliked}")
    expect_status(delete_member_comment.sync_detailed("free", post.id, comment.id, client=kim), 204, "deleteMemberComment")
    expect_status(delete_member_post.sync_detailed("free", post.id, client=kim), 204, "deleteMemberPost")
    expect_error(
        get_post.sync_detailed("free", post.id, client=client), 404, "not_found", "getPost of the deleted member post"
    )

    # (v3) The member's own account: who and what roles, their posts and
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

    def log_in(password, what):
        session = expect(
            create_session.sync_detailed(client=client, body=LogInRequest(username="kim", password=password)),
            200,
            what,
        )
        return AuthenticatedClient(base_url=base, token=session.token, raise_on_unexpected_status=True)

    kim = log_in("battery staple", "createSession with the new password")
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
            body=SignUpRequest(username="kim", password="x" * 12, nickname="K"),
            admin_enroll_token=ADMIN_ENROLL_TOKEN,
        ),
        409,
        "username_taken",
        "createMember with a deleted member's username",
    )


def main(base, steps_file):
    with open(steps_file) as lines:
        steps.extend(line.strip() for line in lines if line.strip() and not line.startswith("#"))
    total = len(steps)

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
