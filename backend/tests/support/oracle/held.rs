//! The causal oracle: a relay of the tests' own, between a client and Redis, that holds
//! every reply for `hold` (well above a client's own work per command: milliseconds) and
//! records, for each command that arrives, whether an earlier command's reply was still
//! unreleased. A client that waits for its replies sends nothing while one is held; one that
//! does not keeps sending. This judges by cause, not by timing under a tracer: it does not
//! slow the client (a tracer would), it only makes the replies late, as a network does.
//!
//! Commands and replies are counted by a RESP reader of its own (`Values`), not pipescope's.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What one client connection did, by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Causal {
    pub commands: u64,
    /// Commands that arrived with every earlier reply released (the first one included):
    /// the rounds it made, each begun after it had all it asked for.
    pub after_release: u64,
    /// Commands that arrived while an earlier command's reply was unreleased.
    pub while_held: u64,
}

impl Causal {
    /// It waited for each reply before its next command (nine in ten at least: a library's
    /// own commands at connect may ride along).
    pub fn waits_each(&self) -> bool {
        self.after_release * 10 >= self.commands * 9
    }
}

/// A relay on a free loopback port to Redis's `redis_port`, holding replies for `hold`.
pub struct HeldRelay {
    pub port: u16,
    stop: Arc<AtomicBool>,
    accepting: Option<JoinHandle<()>>,
    connections: Arc<Mutex<Vec<JoinHandle<Causal>>>>,
}

impl HeldRelay {
    pub fn start(redis_port: u16, hold: Duration) -> HeldRelay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding the oracle's relay");
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let connections: Arc<Mutex<Vec<JoinHandle<Causal>>>> = Arc::default();
        let (flag, conns) = (stop.clone(), connections.clone());
        let accepting = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let redis = TcpStream::connect(("127.0.0.1", redis_port))
                            .expect("the oracle's relay connecting to Redis");
                        let h = std::thread::spawn(move || relay(client, redis, hold));
                        conns.lock().unwrap().push(h);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2))
                    }
                    Err(e) => panic!("the oracle's relay accepting: {e}"),
                }
            }
        });
        HeldRelay {
            port,
            stop,
            accepting: Some(accepting),
            connections,
        }
    }

    /// Once the client has gone: each connection's record, in the order they were accepted.
    pub fn finish(mut self) -> Vec<Causal> {
        self.stop.store(true, Ordering::SeqCst);
        self.accepting.take().unwrap().join().unwrap();
        let conns = std::mem::take(&mut *self.connections.lock().unwrap());
        conns
            .into_iter()
            .map(|h| h.join().expect("a relay connection panicked"))
            .collect()
    }

    /// The connection that sent the most commands (a library may open others for itself).
    pub fn busiest(self) -> Causal {
        self.finish()
            .into_iter()
            .max_by_key(|c| c.commands)
            .expect("the client never connected to the oracle's relay")
    }
}

/// One connection relayed until the client closes it: commands pass at once, replies after
/// `hold`.
fn relay(mut client: TcpStream, mut redis: TcpStream, hold: Duration) -> Causal {
    client.set_nodelay(true).unwrap();
    redis.set_nodelay(true).unwrap();
    // Replies released to the client: counted before their bytes are written, so a command
    // the client sends on reading them always finds them counted.
    let released = Arc::new(AtomicU64::new(0));
    let (to_client, due) = mpsc::channel::<(Instant, Vec<u8>, u64)>();
    let mut from_redis = redis.try_clone().unwrap();
    let reading = std::thread::spawn(move || {
        let mut values = Values::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from_redis.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let replies = values.feed(&buf[..n]);
                    let at = Instant::now() + hold;
                    if to_client.send((at, buf[..n].to_vec(), replies)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let mut writer = client.try_clone().unwrap();
    let counted = released.clone();
    let releasing = std::thread::spawn(move || {
        for (at, bytes, replies) in due {
            let now = Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
            counted.fetch_add(replies, Ordering::SeqCst);
            if writer.write_all(&bytes).is_err() {
                return;
            }
        }
    });
    let mut seen = Causal::default();
    let mut values = Values::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match client.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let commands = values.feed(&buf[..n]);
                for _ in 0..commands {
                    if released.load(Ordering::SeqCst) >= seen.commands {
                        seen.after_release += 1;
                    } else {
                        seen.while_held += 1;
                    }
                    seen.commands += 1;
                }
                if redis.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = redis.shutdown(Shutdown::Both);
    let _ = reading.join();
    let _ = releasing.join();
    seen
}

/// Counts complete RESP values (RESP2 and 3, and inline commands) in a byte stream.
#[derive(Default)]
pub struct Values {
    pending: Vec<u8>,
}

impl Values {
    /// Values completed by `bytes`.
    pub fn feed(&mut self, bytes: &[u8]) -> u64 {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        let mut n = 0;
        while let Some(len) = value(&self.pending[at..]) {
            at += len;
            n += 1;
        }
        self.pending.drain(..at);
        n
    }
}

/// The length of the one complete value at the start of `b`, if it is all there.
fn value(b: &[u8]) -> Option<usize> {
    let line = |b: &[u8]| b.windows(2).position(|w| w == b"\r\n").map(|p| p + 2);
    let number = |b: &[u8], end: usize| -> Option<i64> {
        std::str::from_utf8(&b[1..end - 2]).ok()?.parse().ok()
    };
    let first = *b.first()?;
    match first {
        b'+' | b'-' | b':' | b',' | b'_' | b'#' | b'(' => line(b),
        b'$' | b'=' | b'!' => {
            let end = line(b)?;
            let len = number(b, end)?;
            if len < 0 {
                return Some(end);
            }
            let total = end + len as usize + 2;
            (b.len() >= total).then_some(total)
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let end = line(b)?;
            let count = number(b, end)?;
            if count < 0 {
                return Some(end);
            }
            let items = if matches!(first, b'%' | b'|') {
                count * 2
            } else {
                count
            };
            let mut at = end;
            for _ in 0..items {
                at += value(&b[at..])?;
            }
            Some(at)
        }
        // An inline command: a line of words.
        _ => b.iter().position(|&c| c == b'\n').map(|p| p + 1),
    }
}
