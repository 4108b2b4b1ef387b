//! One direction's copy: a reader stamps arrivals, a writer releases each chunk on time, and
//! what is between them is bounded in bytes (`budget`).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::budget::{self, Budget};
use super::ending::Ending;
use super::hooks::Ended;
use crate::net::schedule::{Link, Schedule};

/// The writer spins (instead of sleeping) for at most this long before a release: Linux
/// sleeps overshoot by tens of µs, which would swamp sub-millisecond delays.
const SPIN: Duration = Duration::from_micros(120);
const CHUNK: usize = 64 * 1024;

/// One direction's sockets: where bytes come from and go, a socket whose reading stops when
/// the source closes, and what the source closing means.
pub(super) struct Ends {
    pub from: TcpStream,
    pub to: TcpStream,
    pub on_source_end: Option<TcpStream>,
    pub closed: Ended,
    /// Who is at each end, for error messages: "the client", "Redis".
    pub names: (&'static str, &'static str),
    /// Held by the client → Redis direction from before it hands a chunk over until its
    /// hooks have seen it, and by the other direction while its reader's hook sees a chunk:
    /// so a command's hooks always run before its reply's, whichever thread is quicker.
    pub order: Arc<Mutex<()>>,
    /// With no delay dialled: hand each chunk over first (what the socket takes at once) and
    /// tell the hooks after, holding `order` until they are done, so the far side (Redis)
    /// works on it while the hooks (framing a pipeline of commands, say) run. Only for
    /// commands: the hooks still see replies before the client gets them, so whoever asked (a run reading the wire tap) finds them counted.
    pub write_first: bool,
}

/// Writes what `to` takes of `bytes` without waiting: how many bytes (0 if none fit now).
fn send_now(to: &TcpStream, bytes: &[u8]) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: send(2) reads `bytes.len()` bytes from a live slice on an open socket.
    let n = unsafe {
        libc::send(
            to.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    if n >= 0 {
        return Ok(n as usize);
    }
    match std::io::Error::last_os_error() {
        e if matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
        ) =>
        {
            Ok(0)
        }
        e => Err(e),
    }
}

/// `order`'s guard (nothing it guards can be left half-done by a panic).
fn in_order(order: &Mutex<()>) -> std::sync::MutexGuard<'_, ()> {
    order.lock().unwrap_or_else(|e| e.into_inner())
}

/// Copies `from` → `to` through the delay line: a reader thread stamps and schedules, a
/// writer thread releases on time. `on_read` sees each chunk as it arrives, `on_written` as
/// it leaves (when it was due, and when it left: just before the write), e.g. for the wire
/// tap. A link with no delay, jitter or cap copies on the reader thread alone (client →
/// Redis handing each chunk over before its hooks run: see `Ends::write_first`).
pub(super) fn pipe(
    name: &str,
    ends: Ends,
    link: Link,
    ending: Arc<Ending>,
    on_read: impl FnMut(Instant, &[u8]) + Send + 'static,
    on_written: impl FnMut(Instant, Instant, &[u8]) + Send + 'static,
) -> std::io::Result<()> {
    let Ends {
        from,
        to,
        on_source_end,
        closed,
        names: (from_name, to_name),
        order,
        write_first,
    } = ends;
    let source = Source {
        from,
        name: from_name,
        closed,
        on_source_end,
        ending: ending.clone(),
    };
    let sink = Sink {
        to,
        name: to_name,
        ending,
    };
    let spawn = |part: &str, body: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(format!("{name}-{part}"))
            .spawn(body)
            .map(drop)
    };
    if link.is_instant() {
        let hooks = (on_read, on_written);
        return spawn(
            "copy",
            Box::new(move || copy_at_once(source, sink, &order, write_first, hooks)),
        );
    }
    // The channel is unbounded; what it holds is bounded in bytes by `budget`.
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let budget = Arc::new(Budget::new(budget::for_link(&link)));
    let reader = Queue {
        tx,
        budget: budget.clone(),
    };
    spawn(
        "read",
        Box::new(move || read_and_schedule(source, link, &order, on_read, reader)),
    )?;
    spawn(
        "write",
        Box::new(move || release_on_time(sink, rx, Releases(budget), on_written)),
    )
}

/// The reader's end of a delayed direction: where chunks go, and the bytes it may hold.
struct Queue {
    tx: mpsc::Sender<(Instant, Vec<u8>)>,
    budget: Arc<Budget>,
}

/// The writer's hold on the budget: gives back what it wrote, and on the way out (however it
/// ends) lets a waiting reader go.
struct Releases(Arc<Budget>);

impl Drop for Releases {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Where a direction's bytes come from, and what its closing or failing means.
struct Source {
    from: TcpStream,
    /// Who it is, for error messages: "the client", "Redis".
    name: &'static str,
    closed: Ended,
    /// A socket whose reading stops when the source closes.
    on_source_end: Option<TcpStream>,
    ending: Arc<Ending>,
}

impl Source {
    /// Reads the next chunk into `buf`: how many bytes, or `None` once the source closed or
    /// failed (noted as why the connection ends, and `on_source_end` told).
    fn next(&mut self, buf: &mut [u8]) -> Option<usize> {
        let why = match self.from.read(buf) {
            Ok(0) => self.closed.clone(),
            Ok(n) => return Some(n),
            Err(e) => failed(self.name, e),
        };
        self.ending.note(why);
        if let Some(s) = &self.on_source_end {
            let _ = s.shutdown(Shutdown::Read);
        }
        None
    }
}

/// Where a direction's bytes go.
struct Sink {
    to: TcpStream,
    /// Who it is, for error messages.
    name: &'static str,
    ending: Arc<Ending>,
}

impl Sink {
    /// Writing failed: noted as why the connection ends (if nothing was before).
    fn failed(&self, e: std::io::Error) {
        self.ending.note(failed(self.name, e));
    }

    /// The direction is done: the far side is told, and the connection if this was its last.
    fn finish(self) {
        let _ = self.to.shutdown(Shutdown::Write);
        self.ending.end();
    }
}

fn failed(side: &str, e: std::io::Error) -> Ended {
    Ended::Error(format!("{side}: {e}"))
}

/// A link with nothing dialled in: each chunk is copied on the reader thread as it arrives.
fn copy_at_once(
    mut source: Source,
    mut sink: Sink,
    order: &Mutex<()>,
    write_first: bool,
    (mut on_read, mut on_written): (
        impl FnMut(Instant, &[u8]),
        impl FnMut(Instant, Instant, &[u8]),
    ),
) {
    let mut buf = vec![0u8; CHUNK];
    while let Some(n) = source.next(&mut buf) {
        let now = Instant::now();
        let chunk = &buf[..n];
        let to = &mut sink.to;
        let wrote = if write_first {
            let order = in_order(order);
            let handed = Instant::now();
            // What the socket takes now; the rest (if any) after the hooks and without
            // `order`, so a Redis slow to read never holds up the replies' direction.
            let sent = send_now(to, chunk);
            on_read(now, chunk);
            on_written(now, handed, chunk);
            drop(order);
            sent.and_then(|k| to.write_all(&chunk[k..]))
        } else {
            {
                let _order = in_order(order);
                on_read(now, chunk);
            }
            // Told before the write: the far side may answer at once.
            on_written(now, Instant::now(), chunk);
            to.write_all(chunk)
        };
        if let Err(e) = wrote {
            sink.failed(e);
            break;
        }
    }
    sink.finish();
}

/// A delayed link's reader: waits for room in the budget, then stamps each chunk's arrival,
/// tells `on_read`, and hands it to the writer with its release time. Dropping the queue at
/// the end tells the writer to finish what is in flight, then close.
fn read_and_schedule(
    mut source: Source,
    link: Link,
    order: &Mutex<()>,
    mut on_read: impl FnMut(Instant, &[u8]),
    queue: Queue,
) {
    let mut schedule = Schedule::new(link);
    let mut buf = vec![0u8; CHUNK];
    // Not reading while the budget is full leaves the bytes in the kernel's buffers, and the
    // sender waits on TCP's window: the stamp below is still when a chunk was read.
    while queue.budget.wait_for_room(CHUNK) {
        let Some(n) = source.next(&mut buf) else {
            break;
        };
        let now = Instant::now();
        {
            let _order = in_order(order);
            on_read(now, &buf[..n]);
        }
        queue.budget.take(n);
        if queue
            .tx
            .send((schedule.release(now, n), buf[..n].to_vec()))
            .is_err()
        {
            break; // the writer failed, and noted why
        }
    }
}

/// A delayed link's writer: releases each chunk at its time.
fn release_on_time(
    mut sink: Sink,
    rx: mpsc::Receiver<(Instant, Vec<u8>)>,
    budget: Releases,
    mut on_written: impl FnMut(Instant, Instant, &[u8]),
) {
    precise_sleeps();
    for (release, bytes) in rx {
        wait_until(release);
        // Stamped and told as the bytes are handed over, before the write: on loopback they
        // reach the far side at once, and a stamp or count taken after the write could come
        // later than the answer the other direction already read.
        on_written(release, Instant::now(), &bytes);
        if let Err(e) = sink.to.write_all(&bytes) {
            sink.failed(e);
            break;
        }
        let n = bytes.len();
        drop(bytes);
        budget.0.give_back(n);
    }
    drop(budget);
    sink.finish();
}

/// Asks Linux to wake this thread's sleeps on time: by default a thread's timers may fire up
/// to 50 µs late (timer slack, to batch wake-ups), a fifth of a 250 µs delay.
fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and only affects the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Sleeps until shortly before `t`, then spins: sub-millisecond precision without burning a
/// core for long delays.
fn wait_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}
