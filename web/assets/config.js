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

// Images. MEDIA_ORIGIN: where the API's image URLs point when not at
// the API's own origin (CloudFront on AWS, e.g. "https://d1234.cloudfront.net");
// the CSP's `img-src` names it. UPLOAD_ORIGIN: where files are uploaded when
// not to the API's origin (the bucket of S3's presigned POST, e.g.
// "https://media-bucket.s3.eu-west-1.amazonaws.com"); `connect-src` names
// it. Empty: the API's origin (the server serves and takes files itself).
// An image or upload URL at any other origin is refused by the client.
export const MEDIA_ORIGIN = "";
export const UPLOAD_ORIGIN = "";


// The boards, their names and their rules come from the API (`GET /boards`,
// v4): an admin opens boards in the client's 게시판 관리 page.
