//! What the kernel counted on the proxy's socket from the client (`TCP_INFO`): segments and
//! bytes that arrived, beside the proxy's reads of them, so the verdict can tell when the
//! proxy's reads merged the client's sends (`shared::observe::verdict::ClientSocket`).

use std::net::TcpStream;

use shared::observe::verdict::ClientSocket;

/// The client's socket while the connection is open (asked at each look, so a live verdict
/// sees the counts so far), and its last counts once it ended (the socket let go then: a
/// proxy keeps many ended connections, and no file descriptor for any of them).
#[derive(Debug, Default)]
pub struct Kernel {
    socket: Option<TcpStream>,
    last: Option<ClientSocket>,
}

impl Kernel {
    pub fn watch(&mut self, socket: TcpStream) {
        self.socket = Some(socket);
    }

    /// The connection is over: its counts are kept, its socket let go.
    pub fn end(&mut self) {
        if let Some(socket) = self.socket.take() {
            self.last = counted(&socket).or(self.last);
        }
    }

    /// The counts now, with the proxy's `reads` of the socket; `None` when there is no socket
    /// (a capture) or the kernel would not say.
    pub fn now(&self, reads: u64) -> Option<ClientSocket> {
        let counts = match &self.socket {
            Some(socket) => counted(socket),
            None => self.last,
        };
        counts.map(|c| ClientSocket { reads, ..c })
    }
}

/// The socket's `TCP_INFO`: data segments and bytes received, and the receive MSS.
fn counted(socket: &TcpStream) -> Option<ClientSocket> {
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero tcp_info is valid (integers only).
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `info`, which is that large.
    let ok = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut info).cast(),
            &mut len,
        )
    } == 0;
    // A kernel older than the fields (Linux 4.6) fills fewer bytes: no counts then.
    let filled = std::mem::offset_of!(libc::tcp_info, tcpi_data_segs_in) + 4;
    (ok && len as usize >= filled).then_some(ClientSocket {
        reads: 0,
        segments: u64::from(info.tcpi_data_segs_in),
        bytes: info.tcpi_bytes_received,
        mss: u64::from(info.tcpi_rcv_mss),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn the_kernel_counts_what_arrived_and_keeps_it_once_ended() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        client.set_nodelay(true).unwrap();
        let (mut proxy_side, _) = listener.accept().unwrap();
        let mut kernel = Kernel::default();
        kernel.watch(proxy_side.try_clone().unwrap());
        for _ in 0..3 {
            client.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
            let mut got = [0u8; 14];
            proxy_side.read_exact(&mut got).unwrap();
        }
        let now = kernel.now(3).expect("TCP_INFO on Linux");
        assert_eq!((now.reads, now.bytes), (3, 42), "{now:?}");
        assert!(now.segments >= 1 && now.mss > 0, "{now:?}");
        kernel.end();
        assert!(kernel.socket.is_none());
        assert_eq!(kernel.now(3), Some(now));
    }
}
