//! One connection's socket, watched for an answer that makes no progress
//! (docs/API.md, Hardening v4). hyper's HTTP/1 has no write timeout: a
//! client that sends requests and reads nothing held its connection, and
//! its answer's memory, for as long as it liked.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use crate::connections::OpenConnection;

#[derive(Debug)]
pub(crate) struct WatchedStream {
    stream: TcpStream,
    connection: Arc<OpenConnection>,
    write_timeout: Duration,
    /// Set when a write goes pending; a write that makes progress disarms it.
    deadline: Pin<Box<Sleep>>,
    write_pending: bool,
    timed_out: bool,
}

impl WatchedStream {
    pub(crate) fn new(stream: TcpStream, connection: Arc<OpenConnection>, write_timeout: Duration) -> Self {
        limit_unsent(&stream);
        WatchedStream {
            stream,
            connection,
            write_timeout,
            // Not in the timer until first polled.
            deadline: Box::pin(tokio::time::sleep(write_timeout)),
            write_pending: false,
            timed_out: false,
        }
    }

    fn watch(&mut self, cx: &mut Context<'_>, written: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match written {
            Poll::Pending => {
                if !self.write_pending {
                    self.write_pending = true;
                    self.deadline.as_mut().reset(Instant::now() + self.write_timeout);
                    self.connection.write_pending();
                }
                // Polled with the connection task's waker: when the time is
                // up hyper is woken, and its flush of the bytes it still
                // holds comes back here.
                if self.deadline.as_mut().poll(cx).is_ready() {
                    tracing::debug!("closing a connection: its answer made no progress for the write timeout");
                    self.timed_out = true;
                    return Poll::Ready(Err(timed_out()));
                }
                Poll::Pending
            }
            Poll::Ready(Ok(n)) if n > 0 => {
                if self.write_pending {
                    self.write_pending = false;
                    self.connection.write_progressed();
                }
                Poll::Ready(Ok(n))
            }
            other => other,
        }
    }
}

/// Caps the bytes the kernel holds unsent for this connection
/// (`TCP_NOTSENT_LOWAT`), so a write goes ahead each time the client's
/// window takes some of them. Without it the socket says it is writable only
/// once a third of a send buffer that grows to 4 MiB has drained: a client
/// reading a large answer slowly but steadily could go a write timeout
/// without a write going ahead, and be cut off as if it read nothing. It
/// also bounds what a connection that reads nothing holds in the kernel.
fn limit_unsent(stream: &TcpStream) {
    /// How much of an answer the kernel holds unsent for a connection.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const UNSENT_LIMIT: u32 = 128 * 1024;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = socket2::SockRef::from(stream).set_tcp_notsent_lowat(UNSENT_LIMIT) {
        tracing::debug!(error = %e, "TCP_NOTSENT_LOWAT not set");
    }
}

fn timed_out() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the answer made no progress for the write timeout",
    )
}

impl AsyncRead for WatchedStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for WatchedStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.timed_out {
            return Poll::Ready(Err(timed_out()));
        }
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.watch(cx, written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.timed_out {
            return Poll::Ready(Err(timed_out()));
        }
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.watch(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl Drop for WatchedStream {
    fn drop(&mut self) {
        if self.timed_out || self.connection.is_aborting() {
            // An abandoned answer is reset, not closed: a close would leave
            // the kernel holding its unsent bytes, probing a window the
            // client never opens, long after the descriptor is gone.
            #[expect(
                deprecated,
                reason = "tokio deprecates SO_LINGER because a non-zero linger blocks on close; zero never blocks, it resets"
            )]
            let _ = self.stream.set_linger(Some(Duration::ZERO));
        }
    }
}
