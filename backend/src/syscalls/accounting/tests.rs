//! The accounting's rules on records built by hand: what is a wait and what is not.

use super::*;

const FD: u64 = 5;
const MAIN: u32 = 10;
const READER: u32 = 11;

/// A process with one blocking socket on `FD`, and a clock.
struct Run {
    a: Accounting,
    t: u64,
}

impl Run {
    fn new() -> Run {
        let mut a = Accounting::default();
        a.known(Known {
            pid: MAIN,
            fd: FD as i64,
            local: "127.0.0.1:40000".parse().unwrap(),
            peer: "127.0.0.1:7000".parse().unwrap(),
            mode: Mode::Blocking,
        });
        Run { a, t: 0 }
    }

    fn ev(&mut self, tid: u32, event: Event) {
        self.t += 1000;
        self.a.record(&Record {
            time: self.t,
            pid: MAIN,
            tid,
            event,
        });
    }

    fn call(&mut self, tid: u32, nr: i64, args: [u64; 6], ret: i64, slept: bool) {
        self.ev(tid, Event::Enter { nr, args });
        if slept {
            self.ev(
                tid,
                Event::Switch {
                    prev: tid,
                    slept: true,
                },
            );
        }
        self.ev(tid, Event::Exit { nr, ret });
    }

    fn send(&mut self, tid: u32) {
        self.call(tid, libc::SYS_sendto, [FD, 0, 30, 0, 0, 0], 30, false);
    }

    fn recv(&mut self, tid: u32, flags: u64, ret: i64, slept: bool) {
        self.call(
            tid,
            libc::SYS_recvfrom,
            [FD, 0, 65536, flags, 0, 0],
            ret,
            slept,
        );
    }

    fn evidence(self) -> SyscallEvidence {
        self.a.finish().remove(0).evidence
    }
}

#[test]
fn a_blocking_receive_after_each_send_is_a_wait_a_dontwait_one_is_not() {
    let mut r = Run::new();
    for _ in 0..3 {
        r.send(MAIN);
        r.recv(MAIN, 0, 5, true);
    }
    for _ in 0..3 {
        r.send(MAIN);
        r.recv(MAIN, MSG_DONTWAIT, -EAGAIN, false);
        r.recv(MAIN, MSG_DONTWAIT, 5, false);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.receives, e.waits), (6, 6, 3));
    assert_eq!((e.nonblocking_receives, e.empty_receives), (3, 3));
}

#[test]
fn a_reader_thread_that_blocks_is_not_a_wait_of_the_sender() {
    let mut r = Run::new();
    for _ in 0..3 {
        r.send(MAIN);
        r.recv(READER, 0, 5, true);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.receives, e.waits, e.threads), (3, 3, 0, 2));
}

#[test]
fn woken_by_the_reader_after_it_read_the_reply_is_a_wait_before_it_is_not() {
    let mut r = Run::new();
    // Woken (a lock) by a reader whose last read came before the send: not a wait.
    r.recv(READER, 0, 5, true);
    r.send(MAIN);
    r.ev(
        MAIN,
        Event::Enter {
            nr: libc::SYS_futex,
            args: [0; 6],
        },
    );
    r.ev(READER, Event::Waking { wakee: MAIN });
    r.ev(
        MAIN,
        Event::Exit {
            nr: libc::SYS_futex,
            ret: 0,
        },
    );
    // The reader reads the reply, then wakes the sender blocked on a futex: a wait.
    r.send(MAIN);
    r.ev(
        MAIN,
        Event::Enter {
            nr: libc::SYS_futex,
            args: [0; 6],
        },
    );
    r.recv(READER, 0, 5, true);
    r.ev(READER, Event::Waking { wakee: MAIN });
    r.ev(
        MAIN,
        Event::Exit {
            nr: libc::SYS_futex,
            ret: 0,
        },
    );
    r.send(MAIN);
    let e = r.evidence();
    assert_eq!((e.sends, e.waits, e.woken_waits), (3, 1, 1));
}

#[test]
fn an_event_loop_woken_with_work_after_reading_a_reply_did_not_wait_for_it() {
    let mut r = Run::new();
    r.call(
        MAIN,
        libc::SYS_fcntl,
        [FD, F_SETFL, O_NONBLOCK, 0, 0, 0],
        0,
        false,
    );
    for _ in 0..3 {
        // The event loop sends what it was handed, sleeps in epoll until the reply is
        // back (the network wakes it), reads it, and sleeps again until the application
        // hands it the next command (an eventfd the application thread writes).
        r.send(MAIN);
        r.call(
            MAIN,
            libc::SYS_epoll_wait,
            [7, 0, 64, u64::MAX, 0, 0],
            1,
            true,
        );
        r.call(MAIN, libc::SYS_read, [FD, 0, 16384, 0, 0, 0], 5, false);
        r.ev(
            MAIN,
            Event::Enter {
                nr: libc::SYS_epoll_wait,
                args: [7, 0, 64, u64::MAX, 0, 0],
            },
        );
        r.ev(
            MAIN,
            Event::Switch {
                prev: MAIN,
                slept: true,
            },
        );
        r.ev(
            READER,
            Event::Enter {
                nr: libc::SYS_write,
                args: [9, 0, 8, 0, 0, 0],
            },
        );
        r.ev(READER, Event::Waking { wakee: MAIN });
        r.ev(
            READER,
            Event::Exit {
                nr: libc::SYS_write,
                ret: 8,
            },
        );
        r.ev(
            MAIN,
            Event::Exit {
                nr: libc::SYS_epoll_wait,
                ret: 1,
            },
        );
        r.call(MAIN, libc::SYS_read, [9, 0, 8, 0, 0, 0], 8, false);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.receives, e.waits), (3, 3, 0));
}

#[test]
fn an_event_loop_handed_each_command_after_the_application_got_the_reply_waited() {
    const APP: u32 = 12;
    let mut r = Run::new();
    r.call(
        MAIN,
        libc::SYS_fcntl,
        [FD, F_SETFL, O_NONBLOCK, 0, 0, 0],
        0,
        false,
    );
    for _ in 0..3 {
        // The loop sends, sleeps in epoll until the reply is back, reads it and wakes the
        // application thread blocked on its future (a futex); that one hands the loop its
        // next command (an eventfd), waking it from epoll.
        r.send(MAIN);
        r.call(
            MAIN,
            libc::SYS_epoll_wait,
            [7, 0, 64, u64::MAX, 0, 0],
            1,
            true,
        );
        r.call(MAIN, libc::SYS_read, [FD, 0, 16384, 0, 0, 0], 5, false);
        r.ev(
            APP,
            Event::Enter {
                nr: libc::SYS_futex,
                args: [0; 6],
            },
        );
        r.ev(
            APP,
            Event::Switch {
                prev: APP,
                slept: true,
            },
        );
        r.ev(MAIN, Event::Waking { wakee: APP });
        r.ev(
            APP,
            Event::Exit {
                nr: libc::SYS_futex,
                ret: 0,
            },
        );
        r.ev(
            MAIN,
            Event::Enter {
                nr: libc::SYS_epoll_wait,
                args: [7, 0, 64, u64::MAX, 0, 0],
            },
        );
        r.ev(
            MAIN,
            Event::Switch {
                prev: MAIN,
                slept: true,
            },
        );
        r.ev(APP, Event::Waking { wakee: MAIN });
        r.ev(
            MAIN,
            Event::Exit {
                nr: libc::SYS_epoll_wait,
                ret: 1,
            },
        );
        r.call(MAIN, libc::SYS_read, [9, 0, 8, 0, 0, 0], 8, false);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.receives, e.waits), (3, 3, 3));
}

#[test]
fn a_reply_read_then_a_lock_taken_is_still_a_wait() {
    let mut r = Run::new();
    for _ in 0..3 {
        r.send(MAIN);
        r.recv(MAIN, 0, 5, true);
        // The interpreter's lock, held by another thread, which hands it over.
        r.ev(
            MAIN,
            Event::Enter {
                nr: libc::SYS_futex,
                args: [0; 6],
            },
        );
        r.ev(READER, Event::Waking { wakee: MAIN });
        r.ev(
            MAIN,
            Event::Exit {
                nr: libc::SYS_futex,
                ret: 0,
            },
        );
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.waits, e.woken_waits), (3, 3, 0));
}

#[test]
fn on_a_nonblocking_socket_a_poll_that_could_block_makes_the_read_a_wait() {
    let mut r = Run::new();
    // Switched to non-blocking (fcntl F_SETFL O_NONBLOCK).
    r.call(
        MAIN,
        libc::SYS_fcntl,
        [FD, F_SETFL, O_NONBLOCK, 0, 0, 0],
        0,
        false,
    );
    r.send(MAIN);
    r.call(
        MAIN,
        libc::SYS_epoll_wait,
        [7, 0, 64, u64::MAX, 0, 0],
        1,
        true,
    );
    r.call(MAIN, libc::SYS_read, [FD, 0, 16384, 0, 0, 0], 5, false);
    r.send(MAIN);
    // A poll with a zero timeout only looks.
    r.call(MAIN, libc::SYS_epoll_wait, [7, 0, 64, 0, 0, 0], 1, false);
    r.call(MAIN, libc::SYS_read, [FD, 0, 16384, 0, 0, 0], 5, false);
    let e = r.evidence();
    assert_eq!(
        (e.sends, e.receives, e.waits, e.nonblocking_receives),
        (2, 2, 1, 1)
    );
}

#[test]
fn an_event_loop_busy_when_handed_work_did_not_wait_for_the_reply_it_had_read() {
    const APP: u32 = 12;
    const EVENTFD: u64 = 9;
    let mut r = Run::new();
    r.call(
        MAIN,
        libc::SYS_fcntl,
        [FD, F_SETFL, O_NONBLOCK, 0, 0, 0],
        0,
        false,
    );
    for _ in 0..3 {
        // The loop sends; the reply and the next command are both ready when it polls (no
        // sleep); it reads the reply, then the eventfd the application wrote, then sends.
        r.send(MAIN);
        r.call(APP, libc::SYS_write, [EVENTFD, 0, 8, 0, 0, 0], 8, false);
        r.call(
            MAIN,
            libc::SYS_epoll_wait,
            [7, 0, 64, u64::MAX, 0, 0],
            2,
            false,
        );
        r.call(MAIN, libc::SYS_read, [FD, 0, 16384, 0, 0, 0], 5, false);
        r.call(MAIN, libc::SYS_read, [EVENTFD, 0, 8, 0, 0, 0], 8, false);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.receives, e.waits), (3, 3, 0));
}

#[test]
fn a_poll_that_found_the_reply_ready_is_a_wait_all_the_same() {
    let mut r = Run::new();
    r.call(
        MAIN,
        libc::SYS_fcntl,
        [FD, F_SETFL, O_NONBLOCK, 0, 0, 0],
        0,
        false,
    );
    for _ in 0..3 {
        // Its own work between took longer than the round trip: the reply is there when it
        // polls, but it polls for it, with nothing else to do.
        r.send(MAIN);
        r.call(
            MAIN,
            libc::SYS_epoll_wait,
            [7, 0, 64, u64::MAX, 0, 0],
            1,
            false,
        );
        r.call(MAIN, libc::SYS_read, [FD, 0, 16384, 0, 0, 0], 5, false);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.receives, e.waits), (3, 3, 3));
}

#[test]
fn a_reply_found_by_a_poll_that_only_looked_is_an_undecided_wait() {
    let mut r = Run::new();
    r.call(
        MAIN,
        libc::SYS_fcntl,
        [FD, F_SETFL, O_NONBLOCK, 0, 0, 0],
        0,
        false,
    );
    for _ in 0..3 {
        // An event loop with work queued polls with a zero timeout and finds the reply.
        r.send(MAIN);
        r.call(MAIN, libc::SYS_epoll_pwait, [7, 0, 64, 0, 0, 8], 1, false);
        r.call(MAIN, libc::SYS_read, [FD, 0, 16384, 0, 0, 0], 5, false);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.waits, e.undecided_waits), (3, 0, 3));
    assert_eq!(e.nonblocking_receives, 3);
}

impl Run {
    /// A poll on the socket with a timeout, that slept (or not) and found it readable.
    fn poll(&mut self, tid: u32, slept: bool) {
        self.call(tid, libc::SYS_poll, [0, 1, 60_000, 0, 0, 0], 1, slept);
    }
}

#[test]
fn a_poll_then_a_dontwait_read_after_each_send_is_a_wait() {
    // redis-rb: read_nonblock finds nothing, ppoll sleeps until the reply, read_nonblock.
    let mut r = Run::new();
    for _ in 0..3 {
        r.send(MAIN);
        r.recv(MAIN, MSG_DONTWAIT, -EAGAIN, false);
        r.poll(MAIN, true);
        r.recv(MAIN, MSG_DONTWAIT, 5, false);
    }
    let e = r.evidence();
    assert_eq!(
        (e.sends, e.receives, e.waits, e.undecided_waits),
        (3, 3, 3, 0)
    );
}

#[test]
fn a_peek_is_no_receive_and_a_poll_that_found_the_reply_there_is_still_a_wait() {
    // phpredis: a MSG_PEEK before each command, then poll (60 s) and a MSG_DONTWAIT read.
    let mut r = Run::new();
    for _ in 0..3 {
        r.recv(MAIN, MSG_PEEK | MSG_DONTWAIT, -EAGAIN, false);
        r.send(MAIN);
        r.poll(MAIN, false);
        r.recv(MAIN, MSG_DONTWAIT, 5, false);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.receives, e.empty_receives), (3, 3, 0));
    assert_eq!((e.waits, e.undecided_waits), (3, 0));
}

#[test]
fn a_dontwait_read_that_found_the_reply_there_leaves_the_wait_undecided() {
    // redis-rb on a fast path: the reply is there before it looks, so it never polls; whether
    // it would have waited its syscalls cannot say.
    let mut r = Run::new();
    for _ in 0..3 {
        r.send(MAIN);
        r.recv(MAIN, MSG_DONTWAIT, 5, false);
    }
    let e = r.evidence();
    assert_eq!((e.sends, e.waits, e.undecided_waits), (3, 0, 3));
}

#[test]
fn a_send_after_a_read_that_found_nothing_is_no_wait() {
    // Perl's Redis.pm with callbacks: a MSG_DONTWAIT read between sends, then it sends on.
    let mut r = Run::new();
    for _ in 0..3 {
        r.send(MAIN);
        r.recv(MAIN, MSG_DONTWAIT, -EAGAIN, false);
    }
    r.recv(MAIN, 0, 15, true);
    let e = r.evidence();
    assert_eq!((e.sends, e.waits, e.undecided_waits), (3, 1, 0));
}
