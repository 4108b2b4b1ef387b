//! A connection to Redis, plain or TLS, and its two halves. Plain TCP splits into borrowed
//! halves with no lock between them (the engine's timing depends on it); TLS shares one
//! session between reading and writing, so its halves share it through tokio's split.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::net::tcp;
use tokio_rustls::client::TlsStream;

pub enum RedisStream {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

pub enum ReadHalf<'a> {
    Tcp(tcp::ReadHalf<'a>),
    Tls(tokio::io::ReadHalf<&'a mut TlsStream<TcpStream>>),
}

pub enum WriteHalf<'a> {
    Tcp(tcp::WriteHalf<'a>),
    Tls(tokio::io::WriteHalf<&'a mut TlsStream<TcpStream>>),
}

impl RedisStream {
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        match self {
            RedisStream::Tcp(s) => {
                let (r, w) = s.split();
                (ReadHalf::Tcp(r), WriteHalf::Tcp(w))
            }
            RedisStream::Tls(s) => {
                let (r, w) = tokio::io::split(&mut **s);
                (ReadHalf::Tls(r), WriteHalf::Tls(w))
            }
        }
    }
}

impl ReadHalf<'_> {
    /// The socket's descriptor when reading it directly reads Redis's bytes (plain TCP only:
    /// under TLS they are records to decrypt).
    pub fn plain_fd(&self) -> Option<RawFd> {
        match self {
            ReadHalf::Tcp(r) => Some(r.as_ref().as_raw_fd()),
            ReadHalf::Tls(_) => None,
        }
    }
}

macro_rules! delegate_read {
    ($t:ty, $($v:ident),+) => {
        impl AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $(Self::$v(s) => Pin::new(s).poll_read(cx, buf),)+
                }
            }
        }
    };
}

macro_rules! delegate_write {
    ($t:ty, $($v:ident),+) => {
        impl AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                match self.get_mut() {
                    $(Self::$v(s) => Pin::new(s).poll_write(cx, buf),)+
                }
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $(Self::$v(s) => Pin::new(s).poll_flush(cx),)+
                }
            }

            fn poll_shutdown(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $(Self::$v(s) => Pin::new(s).poll_shutdown(cx),)+
                }
            }
        }
    };
}

delegate_read!(RedisStream, Tcp, Tls);
delegate_write!(RedisStream, Tcp, Tls);
delegate_read!(ReadHalf<'_>, Tcp, Tls);
delegate_write!(WriteHalf<'_>, Tcp, Tls);
