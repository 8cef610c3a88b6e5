// What a deployment sets, at deploy time, in this file only.
//
// API_ORIGIN: the one origin the client sends requests to. Empty: the
// page's own origin (the server serves the client and the API together).
// A static host (S3 + CloudFront, docs/deploy.md) sets its API Gateway
// origin here, e.g. "https://abc123.execute-api.eu-west-1.amazonaws.com",
// and names the same origin, and no other, in its CSP `connect-src`.
// Nothing in a link or in the browser's storage can change it: a page that
// takes its API from its URL hands the reader's token to whoever wrote the
// link (docs/security.md, the web client).
export const API_ORIGIN = "";

// The boards it serves (the server's BOARDS) and their names.
export const BOARDS = [
  { slug: "free", name: "자유게시판" },
  { slug: "qna", name: "질문과 답변" },
  { slug: "notice", name: "공지사항" },
];
