//! One kept-alive HTTP/1.1 connection that sends pre-built GET requests and
//! reads each answer to its end: the `reads` scenario's client, as cheap as
//! wrk's (no request building, no header map, no body decoding; the
//! answer's status is all it keeps).

use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// `GET {path}` for `host`, with `Accept-Encoding` when given, ready to
/// write as it is.
pub(crate) fn get_request(host: &str, path: &str, accept_encoding: Option<&str>) -> Box<[u8]> {
    let accept_encoding = accept_encoding.map_or(String::new(), |codings| format!("Accept-Encoding: {codings}\r\n"));
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{accept_encoding}\r\n")
        .into_bytes()
        .into_boxed_slice()
}

/// `host:port` of an `http://` base URL.
pub(crate) fn authority(base_url: &str) -> anyhow::Result<&str> {
    let rest = base_url
        .strip_prefix("http://")
        .ok_or_else(|| anyhow::anyhow!("reads speaks plain HTTP/1.1: {base_url} is not http://"))?;
    Ok(rest.split('/').next().unwrap_or(rest))
}

pub(crate) struct Connection {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

impl Connection {
    pub(crate) async fn open(addr: SocketAddr) -> io::Result<Self> {
        let mut connection = Connection {
            addr,
            stream: None,
            buf: Vec::with_capacity(16 * 1024),
        };
        connection.stream = Some(connect(addr).await?);
        Ok(connection)
    }

    /// Sends `request` and reads its answer; returns the status. A broken
    /// connection is an error and is opened again on the next call, as
    /// wrk does; one the server closes after its answer, too.
    pub(crate) async fn get(&mut self, request: &[u8]) -> io::Result<u16> {
        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => self.stream.insert(connect(self.addr).await?),
        };
        match exchange(stream, &mut self.buf, request).await {
            Ok(Answer { status, keep_alive }) => {
                if !keep_alive {
                    self.stream = None;
                }
                Ok(status)
            }
            Err(e) => {
                self.stream = None;
                Err(e)
            }
        }
    }
}

async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

#[derive(Debug, PartialEq, Eq)]
struct Answer {
    status: u16,
    keep_alive: bool,
}

async fn exchange(stream: &mut TcpStream, buf: &mut Vec<u8>, request: &[u8]) -> io::Result<Answer> {
    stream.write_all(request).await?;
    buf.clear();
    loop {
        if let Some(head) = parse_head(buf)? {
            let complete = match head.body {
                Body::Length(n) => buf.len() >= head.len + n,
                Body::Chunked => chunked_end(&buf[head.len..])?.is_some(),
                Body::UntilClose => false,
            };
            if complete {
                return Ok(Answer {
                    status: head.status,
                    keep_alive: head.keep_alive,
                });
            }
            buf.reserve(16 * 1024);
            if stream.read_buf(buf).await? == 0 {
                return match head.body {
                    Body::UntilClose => Ok(Answer {
                        status: head.status,
                        keep_alive: false,
                    }),
                    _ => Err(io::ErrorKind::UnexpectedEof.into()),
                };
            }
        } else {
            buf.reserve(16 * 1024);
            if stream.read_buf(buf).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Body {
    Length(usize),
    Chunked,
    UntilClose,
}

#[derive(Debug, PartialEq, Eq)]
struct Head {
    status: u16,
    /// Bytes up to and including the blank line.
    len: usize,
    body: Body,
    keep_alive: bool,
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// The answer's head once `buf` holds all of it.
fn parse_head(buf: &[u8]) -> io::Result<Option<Head>> {
    let Some(end) = find(buf, b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = &buf[..end];
    let mut lines = head.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next().unwrap_or_default();
    if !status_line.starts_with(b"HTTP/1.") || status_line.len() < 12 {
        return Err(invalid("not an HTTP/1 status line"));
    }
    let status = std::str::from_utf8(&status_line[9..12])
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid("no status code"))?;
    let no_body = status == 204 || status == 304 || (100..200).contains(&status);
    let mut body = if no_body { Body::Length(0) } else { Body::UntilClose };
    let mut keep_alive = status_line.starts_with(b"HTTP/1.1");
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if !no_body && name.eq_ignore_ascii_case(b"content-length") {
            let n = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| invalid("bad content-length"))?;
            body = Body::Length(n);
        } else if !no_body && name.eq_ignore_ascii_case(b"transfer-encoding") && contains_ignore_case(value, b"chunked")
        {
            body = Body::Chunked;
        }
        if name.eq_ignore_ascii_case(b"connection") {
            keep_alive = !contains_ignore_case(value, b"close");
        }
    }
    Ok(Some(Head {
        status,
        len: end + 4,
        keep_alive: keep_alive && body != Body::UntilClose,
        body,
    }))
}

/// Where a chunked body ends, once `body` holds all of it (no trailers:
/// the server sends none).
fn chunked_end(body: &[u8]) -> io::Result<Option<usize>> {
    let mut at = 0;
    loop {
        let Some(line_end) = find(&body[at..], b"\r\n") else {
            return Ok(None);
        };
        let line = &body[at..at + line_end];
        let digits = line.split(|&b| b == b';').next().unwrap_or_default().trim_ascii();
        let size = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| usize::from_str_radix(d, 16).ok())
            .ok_or_else(|| invalid("bad chunk size"))?;
        at += line_end + 2;
        // The chunk, then its CRLF (after the last, empty one: the body's).
        at += size + 2;
        if at > body.len() {
            return Ok(None);
        }
        if size == 0 {
            return Ok(Some(at));
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn contains_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_with_a_content_length_keeps_the_connection() {
        let answer = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        let head = parse_head(answer).unwrap().unwrap();
        assert_eq!(
            head,
            Head {
                status: 200,
                len: answer.len() - 2,
                body: Body::Length(2),
                keep_alive: true
            }
        );
    }

    #[test]
    fn an_unfinished_head_is_not_parsed_yet() {
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n").unwrap(), None);
    }

    #[test]
    fn connection_close_and_a_body_until_close_end_the_connection() {
        let closed = parse_head(b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((closed.status, closed.keep_alive), (503, false));
        let until_close = parse_head(b"HTTP/1.1 200 OK\r\n\r\n").unwrap().unwrap();
        assert_eq!((until_close.body, until_close.keep_alive), (Body::UntilClose, false));
    }

    #[test]
    fn a_chunked_body_ends_after_its_empty_chunk() {
        assert_eq!(chunked_end(b"4\r\nabcd\r\n0\r\n\r\n").unwrap(), Some(14));
        assert_eq!(chunked_end(b"4\r\nabcd\r\n0\r\n").unwrap(), None);
        assert_eq!(chunked_end(b"4\r\nab").unwrap(), None);
        assert!(chunked_end(b"zz\r\n").is_err());
    }

    #[test]
    fn the_authority_is_taken_from_an_http_base_url() {
        assert_eq!(authority("http://127.0.0.1:3000/").unwrap(), "127.0.0.1:3000");
        assert!(authority("https://example.com").is_err());
    }

    #[tokio::test]
    async fn a_connection_reads_answers_back_to_back_on_one_socket() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            for answer in [
                &b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"[..],
                b"HTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            ] {
                let n = socket.read(&mut buf).await.unwrap();
                seen.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                socket.write_all(answer).await.unwrap();
            }
            seen
        });
        let request = get_request("test", "/health", None);
        let mut connection = Connection::open(addr).await.unwrap();
        assert_eq!(connection.get(&request).await.unwrap(), 200);
        assert_eq!(connection.get(&request).await.unwrap(), 404);
        let seen = server.await.unwrap();
        assert_eq!(seen, vec!["GET /health HTTP/1.1\r\nHost: test\r\n\r\n"; 2]);
    }

    #[test]
    fn an_accept_encoding_goes_in_the_request_head() {
        let request = get_request("test", "/boards/free/posts", Some("gzip, br"));
        assert_eq!(
            std::str::from_utf8(&request).unwrap(),
            "GET /boards/free/posts HTTP/1.1\r\nHost: test\r\nAccept-Encoding: gzip, br\r\n\r\n"
        );
    }
}
