// What a deployment sets: the boards it serves (the server's BOARDS) and
// their names. The API's base URL is in api.js (same origin by default).
export const BOARDS = [
  { slug: "free", name: "자유게시판" },
  { slug: "qna", name: "질문과 답변" },
  { slug: "notice", name: "공지사항" },
];
