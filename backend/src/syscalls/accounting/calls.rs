//! The syscalls `observe --pid` reads, by what they do to a socket: send, receive, poll (a wait
//! for readiness), and the flags and timeouts that say whether a call could block.

use super::Call;

pub const MSG_PEEK: u64 = 0x2;
pub const MSG_DONTWAIT: u64 = 0x40;

pub fn is_poll(nr: i64) -> bool {
    matches!(
        nr,
        libc::SYS_poll
            | libc::SYS_ppoll
            | libc::SYS_select
            | libc::SYS_pselect6
            | libc::SYS_epoll_wait
            | libc::SYS_epoll_pwait
            | libc::SYS_epoll_pwait2
    )
}

pub fn is_send(nr: i64) -> bool {
    matches!(
        nr,
        libc::SYS_write
            | libc::SYS_writev
            | libc::SYS_sendto
            | libc::SYS_sendmsg
            | libc::SYS_sendmmsg
    )
}

pub fn is_receive(nr: i64) -> bool {
    matches!(
        nr,
        libc::SYS_read
            | libc::SYS_readv
            | libc::SYS_recvfrom
            | libc::SYS_recvmsg
            | libc::SYS_recvmmsg
    )
}

pub fn receive_flags(nr: i64, args: &[u64; 6]) -> u64 {
    match nr {
        libc::SYS_recvfrom | libc::SYS_recvmmsg => args[3],
        libc::SYS_recvmsg => args[2],
        _ => 0,
    }
}

/// Whether a poll, select or epoll wait could block: a timeout other than zero (one behind a
/// pointer is seen only as none, or as whether it slept).
pub fn could_block(c: &Call) -> bool {
    match c.nr {
        libc::SYS_poll => c.args[2] as i32 != 0,
        libc::SYS_epoll_wait | libc::SYS_epoll_pwait => c.args[3] as i32 != 0,
        libc::SYS_ppoll => c.args[2] == 0 || c.slept,
        libc::SYS_epoll_pwait2 => c.args[3] == 0 || c.slept,
        libc::SYS_select | libc::SYS_pselect6 => c.args[4] == 0 || c.slept,
        _ => false,
    }
}

/// The syscalls traced (the filter on the raw syscall tracepoints).
pub fn traced_syscalls() -> Vec<i64> {
    vec![
        libc::SYS_read,
        libc::SYS_readv,
        libc::SYS_recvfrom,
        libc::SYS_recvmsg,
        libc::SYS_recvmmsg,
        libc::SYS_write,
        libc::SYS_writev,
        libc::SYS_sendto,
        libc::SYS_sendmsg,
        libc::SYS_sendmmsg,
        libc::SYS_poll,
        libc::SYS_ppoll,
        libc::SYS_select,
        libc::SYS_pselect6,
        libc::SYS_epoll_wait,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
        libc::SYS_futex,
        libc::SYS_futex_waitv,
        libc::SYS_socket,
        libc::SYS_connect,
        libc::SYS_close,
        libc::SYS_dup,
        libc::SYS_dup2,
        libc::SYS_dup3,
        libc::SYS_fcntl,
        libc::SYS_ioctl,
        libc::SYS_nanosleep,
        libc::SYS_clock_nanosleep,
    ]
}
