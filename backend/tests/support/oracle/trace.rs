//! Reading a `strace -f` trace for what a client did on its socket to one port: its writes,
//! and its waits.
//!
//! A wait is a thread that wrote on the socket and then blocked until a reply was there to
//! read, before its next write: a blocking receive (on a blocking socket, without
//! `MSG_DONTWAIT`) that returned data; or, for an event loop on a non-blocking socket, a
//! `poll`/`ppoll`/`select`/`pselect6`/`epoll_wait`/`epoll_pwait` with a timeout other than 0
//! that returned events, followed by a read of the socket that returned data. Several reads
//! before the next write are one wait. What is not a wait:
//!
//! - a receive with `MSG_DONTWAIT`, or on a non-blocking socket with no blocking wait before
//!   it, or one that returned `EAGAIN`: the client looked and went on;
//! - a blocking wait after a write that did not send everything asked (a partial write, or
//!   `EAGAIN`): the thread still had more to send, it was waiting for room, not for replies;
//! - a blocking receive by a thread that does not write (a reader thread): the writing thread
//!   kept sending meanwhile. Once the last write is made, though, such a receive is the
//!   client waiting for replies with nothing more to send, as a round trip is defined, and
//!   counts as one wait (unless the writing thread itself waited after its last write).
//!
//! Per thread: `strace -f` prints each line's thread id first, and a call another thread's
//! call interrupted as `<unfinished ...>`, then `<... NAME resumed>`; the two are joined.
//!
//! What it cannot see: a wait through another thread's wake-up (the writing thread blocked on
//! a condition variable, a futex or an eventfd until a reader thread has read the reply);
//! such a client's waits are undercounted, to zero before its last write. Nor whether a
//! blocking receive that returned data at once blocked at all: it is counted as a wait.

use std::collections::HashMap;

/// What a client's syscalls show of its connection to one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syscalls {
    /// send/sendto/sendmsg/write/writev calls that sent bytes.
    pub writes: u64,
    /// Times a writing thread blocked until a reply was there to read, before its next write
    /// (see the module's doc).
    pub waits: u64,
    /// The most pieces those writes can reach the other end in: each write's bytes cut into
    /// TCP segments of at least `SMALLEST_SEGMENT`. A reader (the proxy) may read a write in
    /// pieces, and where a piece ends on a command's end, the next reads as a write of its
    /// own: no reader can tell it from two writes.
    pub pieces_at_most: u64,
    /// Bytes its receives on the socket returned (blocking or not) before its last write:
    /// 0 where it read nothing until it had sent everything.
    pub read_before_last_write: u64,
}

/// TCP's default MSS (RFC 9293), below any path's here: loopback's is ~65,000 bytes, a veth's
/// 1,448.
const SMALLEST_SEGMENT: u64 = 536;

/// The calls to trace (`strace -e trace=…`) for `read`.
pub const TRACED: &str = "socket,connect,close,fcntl,ioctl,sendto,sendmsg,write,writev,recvfrom,recvmsg,read,readv,poll,ppoll,select,pselect6,epoll_wait,epoll_pwait,epoll_pwait2";

/// One thread's state on the socket.
#[derive(Debug, Default)]
struct Thread {
    /// It has written on the socket.
    writer: bool,
    /// Its last write did not send all it asked: it has more to send.
    pending: bool,
    /// It blocked in a readiness wait since its last write.
    blocked: bool,
    /// A wait was counted since its last write.
    waited: bool,
}

/// One call: "NAME(ARGS) = RESULT …", its thread's id before it.
struct Call<'a> {
    name: &'a str,
    args: Vec<&'a str>,
    result: i64,
    text: &'a str,
}

/// The calls in `trace` on the socket connected to `port`.
pub fn read(trace: &str, port: u16) -> Syscalls {
    let to_port = format!("sin_port=htons({port})");
    let mut unfinished: HashMap<&str, String> = HashMap::new();
    let mut nonblocking: HashMap<String, bool> = HashMap::new();
    let mut threads: HashMap<String, Thread> = HashMap::new();
    let mut fd: Option<String> = None;
    let (mut writes, mut waits, mut pieces_at_most) = (0, 0, 0);
    // The thread that made the last write, and whether another blocked for replies since.
    let mut last_writer: Option<String> = None;
    let mut read_after_last_write = false;
    let (mut received, mut read_before_last_write) = (0, 0);
    for line in trace.lines() {
        let Some((tid, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        // A call interrupted by another thread's: kept until it resumes.
        let joined;
        let call_text = if let Some(start) = rest.strip_suffix("<unfinished ...>") {
            unfinished.insert(tid, start.trim_end().to_string());
            continue;
        } else if let Some(resumed) = rest.strip_prefix("<... ") {
            let Some((_, after)) = resumed.split_once(" resumed>") else {
                continue;
            };
            let Some(start) = unfinished.remove(tid) else {
                continue;
            };
            joined = format!("{start} {}", after.trim_start());
            joined.as_str()
        } else {
            rest
        };
        let Some(call) = parse(call_text) else {
            continue;
        };
        let this_fd = call.args.first().copied().unwrap_or("");
        match call.name {
            "socket" if call.result >= 0 => {
                nonblocking.insert(
                    call.result.to_string(),
                    call.args
                        .get(1)
                        .is_some_and(|a| a.contains("SOCK_NONBLOCK")),
                );
                continue;
            }
            "fcntl" if call.args.get(1).is_some_and(|a| *a == "F_SETFL") => {
                let on = call.args.get(2).is_some_and(|a| a.contains("O_NONBLOCK"));
                nonblocking.insert(this_fd.to_string(), on);
                continue;
            }
            "ioctl" if call.args.get(1).is_some_and(|a| *a == "FIONBIO") => {
                let on = call.args.get(2).is_some_and(|a| a.trim() != "[0]");
                nonblocking.insert(this_fd.to_string(), on);
                continue;
            }
            "connect" if call.text.contains(&to_port) => {
                fd = Some(this_fd.to_string());
                continue;
            }
            "poll" | "ppoll" | "select" | "pselect6" | "epoll_wait" | "epoll_pwait"
            | "epoll_pwait2" => {
                if call.result > 0 && blocks(&call) {
                    threads.entry(tid.to_string()).or_default().blocked = true;
                }
                continue;
            }
            _ => {}
        }
        if fd.as_deref() != Some(this_fd) {
            continue;
        }
        let thread = threads.entry(tid.to_string()).or_default();
        match call.name {
            "close" => fd = None,
            "sendto" | "sendmsg" | "write" | "writev" => {
                if call.result > 0 {
                    writes += 1;
                    pieces_at_most += (call.result as u64).div_ceil(SMALLEST_SEGMENT);
                    *thread = Thread {
                        writer: true,
                        pending: asked(&call).is_some_and(|n| (call.result as u64) < n),
                        ..Thread::default()
                    };
                    last_writer = Some(tid.to_string());
                    read_after_last_write = false;
                    read_before_last_write = received;
                } else {
                    // EAGAIN: the socket's buffer is full, the rest is still to send.
                    thread.pending = true;
                }
            }
            "recvfrom" | "recvmsg" | "read" | "readv" if call.result > 0 => {
                received += call.result as u64;
                let nonblocking_fd = nonblocking.get(this_fd).copied().unwrap_or(false);
                let dontwait = call.text.contains("MSG_DONTWAIT");
                if !(thread.blocked || (!nonblocking_fd && !dontwait)) {
                    continue;
                }
                if thread.writer && !thread.pending && !thread.waited {
                    waits += 1;
                    thread.waited = true;
                } else if !thread.writer && last_writer.is_some() {
                    read_after_last_write = true;
                }
            }
            _ => {}
        }
    }
    // A reader thread blocked for replies after the last write, the writer not waiting itself.
    if let Some(writer) = last_writer
        && read_after_last_write
        && !threads.get(&writer).is_some_and(|t| t.waited)
    {
        waits += 1;
    }
    Syscalls {
        writes,
        waits,
        pieces_at_most,
        read_before_last_write,
    }
}

/// "NAME(A, B, …) = RESULT": its name, its arguments split at the top level (not inside a
/// string, brackets or braces), its result (-1 on an error).
fn parse(text: &str) -> Option<Call<'_>> {
    let (name, rest) = text.split_once('(')?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    // strace pads the result to a column: "close(3)           = 0".
    let (inside, result) = rest.rsplit_once(" = ")?;
    let inside = inside.trim_end().strip_suffix(')')?;
    let result = result.split_whitespace().next()?.parse().unwrap_or(-1);
    let mut args = Vec::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0);
    for (i, b) in inside.bytes().enumerate() {
        if quoted {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => quoted = true,
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                args.push(inside[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(inside[start..].trim());
    Some(Call {
        name,
        args,
        result,
        text,
    })
}

/// A readiness wait that may block: its timeout is not 0 (-1 or NULL: none).
fn blocks(call: &Call) -> bool {
    let arg = |i: usize| call.args.get(i).copied().unwrap_or("");
    let zero_time = |a: &str| {
        a.contains("tv_sec=0")
            && (a.contains("tv_nsec=0}") || a.contains("tv_usec=0}") || a.contains("tv_nsec=0,"))
    };
    match call.name {
        "epoll_wait" | "epoll_pwait" => arg(3) != "0",
        "epoll_pwait2" => !zero_time(arg(3)),
        "poll" => arg(2) != "0",
        "ppoll" => !zero_time(arg(2)),
        "select" | "pselect6" => !zero_time(arg(4)),
        _ => false,
    }
}

/// The bytes a send asked to send: its length argument, or its iovecs' lengths summed.
fn asked(call: &Call) -> Option<u64> {
    match call.name {
        "write" | "sendto" => call.args.get(2)?.parse().ok(),
        _ => {
            let lens: Vec<u64> = call
                .text
                .match_indices("iov_len=")
                .filter_map(|(i, _)| {
                    let digits: String = call.text[i + 8..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    digits.parse().ok()
                })
                .collect();
            (!lens.is_empty()).then(|| lens.iter().sum())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONNECT: &str = r#"7 socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP) = 3
7 connect(3, {sa_family=AF_INET, sin_port=htons(7000), sin_addr=inet_addr("127.0.0.1")}, 16) = 0"#;

    fn seen(calls: &str) -> Syscalls {
        read(&format!("{CONNECT}\n{calls}"), 7000)
    }

    fn counts(writes: u64, waits: u64) -> (u64, u64) {
        (writes, waits)
    }

    fn got(s: Syscalls) -> (u64, u64) {
        (s.writes, s.waits)
    }

    #[test]
    fn writes_and_runs_of_reads_on_the_one_socket() {
        let s = seen(
            r#"7 sendto(3, "*1\r\n$4\r\nPING\r\n", 14, 0, NULL, 0) = 14
7 recvfrom(3, "+PONG\r\n", 65536, 0, NULL, NULL) = 7
7 sendto(3, "*3..."..., 30, 0, NULL, 0) = 30
7 sendto(3, "*3..."..., 30, 0, NULL, 0) = 30
7 write(1, "x", 1)                 = 1
7 recvfrom(3, "+OK\r\n", 65536, 0, NULL, NULL) = 5
7 recvfrom(3, "+OK\r\n", 65536, 0, NULL, NULL) = 5
7 close(3)                          = 0"#,
        );
        assert_eq!(
            s,
            Syscalls {
                writes: 3,
                waits: 2,
                pieces_at_most: 3,
                read_before_last_write: 7,
            }
        );
    }

    /// patterns.py nonblocking: a look after each send, then one blocking read at the end.
    #[test]
    fn a_receive_with_msg_dontwait_or_one_that_found_nothing_is_no_wait() {
        let s = seen(
            r#"7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40
7 recvfrom(3, 0x7f0000000000, 65536, MSG_DONTWAIT, NULL, NULL) = -1 EAGAIN (Resource temporarily unavailable)
7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40
7 recvfrom(3, "+OK\r\n", 65536, MSG_DONTWAIT, NULL, NULL) = 5
7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40
7 recvfrom(3, "+OK\r\n+OK\r\n", 65536, 0, NULL, NULL) = 10
7 close(3) = 0"#,
        );
        assert_eq!(got(s), counts(3, 1));
        // On a non-blocking socket, a read that returned EAGAIN is a look, not a wait.
        let s = seen(
            r#"7 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40
7 recvfrom(3, 0x7f0000000000, 65536, 0, NULL, NULL) = -1 EAGAIN (Resource temporarily unavailable)
7 read(3, "+OK\r\n", 65536) = 5
7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40"#,
        );
        assert_eq!(got(s), counts(2, 0));
    }

    /// patterns.py threads: the reader thread's blocking reads while the main thread sends
    /// are not its waits; after the last send they are the one wait at the end. Lines of
    /// two threads interleave, interrupted calls resumed.
    #[test]
    fn a_reader_thread_s_blocking_receives_are_not_the_sending_thread_s_waits() {
        let s = seen(
            r#"8 recvfrom(3,  <unfinished ...>
7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40
8 <... recvfrom resumed>"+OK\r\n", 65536, 0, NULL, NULL) = 5
7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40
8 recvfrom(3, "+OK\r\n", 65536, 0, NULL, NULL) = 5
7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40
7 futex(0x7f0000000000, FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, 0, NULL, FUTEX_BITSET_MATCH_ANY <unfinished ...>
8 recvfrom(3, "+OK\r\n", 65536, 0, NULL, NULL) = 5
8 +++ exited with 0 +++
7 <... futex resumed>) = 0"#,
        );
        assert_eq!(got(s), counts(3, 1));
        // Its reads all done before the last send: no wait at all.
        let s = seen(
            r#"7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40
8 recvfrom(3, "+OK\r\n", 65536, 0, NULL, NULL) = 5
7 sendto(3, "*3\r\n$3\r\nSET\r\n"..., 40, 0, NULL, 0) = 40"#,
        );
        assert_eq!(got(s), counts(2, 0));
    }

    /// node: a non-blocking socket, epoll. Blocking in epoll_wait after a write, then reading
    /// the reply, is a wait; epoll_wait with a timeout of 0 is a look; waiting for room after
    /// a partial write is waiting to send, not for replies.
    #[test]
    fn an_event_loop_waits_in_epoll_and_reads_after() {
        let trace = r#"7 socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, IPPROTO_TCP) = 19
7 connect(19, {sa_family=AF_INET, sin_port=htons(7000), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS (Operation now in progress)
7 epoll_pwait(13, [{events=EPOLLOUT, data={u32=19, u64=19}}], 1024, -1, NULL, 8) = 1
7 writev(19, [{iov_base="*1\r\n$4\r\nPING\r\n", iov_len=14}], 1) = 14
7 epoll_pwait(13, [{events=EPOLLIN, data={u32=19, u64=19}}], 1024, -1, NULL, 8) = 1
7 read(19, "+PONG\r\n", 65536) = 7
7 read(19, 0x7f0000000000, 65536) = -1 EAGAIN (Resource temporarily unavailable)
7 writev(19, [{iov_base="*3\r\n$3\r\nSET\r\n"..., iov_len=40000}, {iov_base="*3\r\n", iov_len=4}], 2) = 32768
7 epoll_pwait(13, [{events=EPOLLIN|EPOLLOUT, data={u32=19, u64=19}}], 1024, -1, NULL, 8) = 1
7 read(19, "+OK\r\n+OK\r\n", 65536) = 10
7 write(19, "*3\r\n$3\r\nSET\r\n"..., 7236) = 7236
7 epoll_wait(13, [{events=EPOLLIN, data={u32=19, u64=19}}], 1024, 0) = 1
7 read(19, "+OK\r\n", 65536) = 5
7 epoll_wait(13, [{events=EPOLLIN, data={u32=19, u64=19}}], 1024, 12) = 1
7 read(19, "+OK\r\n+OK\r\n", 65536) = 10
7 read(19, "+OK\r\n", 65536) = 5
7 close(19) = 0"#;
        // The PING's wait; the batch's first part partial (its reads are no wait); after the
        // rest, a look (timeout 0), then a wait (timeout 12 ms).
        assert_eq!(got(read(trace, 7000)), counts(3, 2));
    }

    #[test]
    fn a_write_s_length_asked_and_timeouts_are_read_from_its_arguments() {
        let call = parse(r#"sendto(3, "a, \"b\", c", 40, 0, NULL, 0) = 40"#).unwrap();
        assert_eq!((call.args.len(), asked(&call)), (6, Some(40)));
        let call =
            parse(r#"ppoll([{fd=3, events=POLLIN}], 1, {tv_sec=0, tv_nsec=0}, NULL, 8) = 1 ([{fd=3, revents=POLLIN}], left {tv_sec=0, tv_nsec=0})"#)
                .unwrap();
        assert!(!blocks(&call));
        let call =
            parse(r#"poll([{fd=3, events=POLLIN}], 1, 5000) = 1 ([{fd=3, revents=POLLIN}])"#)
                .unwrap();
        assert!(blocks(&call));
        let call = parse(r#"pselect6(4, [3], NULL, NULL, NULL, NULL) = 1 (in [3])"#).unwrap();
        assert!(blocks(&call));
    }
}
