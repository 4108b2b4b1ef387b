//! Holding a reply back on purpose: before each chunk from Redis is handed to the client, the
//! connection's `Holding` (observe mode's probe) may ask for it to wait. The direction's copy
//! then waits, and every chunk behind it waits too: nothing is reordered, dropped or altered,
//! only later. A hold ends at its deadline, or as soon as whoever asked for it opens its gate
//! (the client sent meanwhile: the question is answered).

use std::net::TcpStream;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// A chunk to hold: until when at most, and the gate that may let it go sooner.
pub struct Hold {
    pub until: Instant,
    pub gate: Arc<Gate>,
}

/// Lets a held chunk go before its deadline. Closed when a hold begins (`Gate::close`), opened
/// by whoever learns the hold has served its purpose.
#[derive(Debug, Default)]
pub struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    pub fn close(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = false;
    }

    pub fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }

    /// Until the gate opens or `until` passes, whichever is first.
    fn wait(&self, until: Instant) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            let now = Instant::now();
            if now >= until {
                return;
            }
            open = self
                .opened
                .wait_timeout(open, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// Asked, chunk by chunk, whether to hold the replies' direction (`decide`, given when the
/// chunk arrived), and told when a held chunk goes (`released`: when, and how many bytes the
/// client had sent that the proxy had not yet read: sent while the chunk was held, whatever
/// the proxy's other thread had seen of them).
pub struct Holding {
    pub decide: Box<dyn FnMut(Instant) -> Option<Hold> + Send>,
    pub released: Box<dyn FnMut(Instant, usize) + Send>,
}

impl Holding {
    /// Holds the chunk arrived `arrived` if `decide` says so, then reports its release;
    /// `client` is the client's socket (asked how much it has sent that is unread).
    pub(super) fn apply(&mut self, arrived: Instant, client: &TcpStream) {
        let Some(hold) = (self.decide)(arrived) else {
            return;
        };
        hold.gate.wait(hold.until);
        let unread = unread(client);
        (self.released)(Instant::now(), unread);
    }
}

/// Bytes waiting unread on `socket` (`FIONREAD`); 0 if the kernel will not say.
fn unread(socket: &TcpStream) -> usize {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which lives across the call.
    let r = unsafe { libc::ioctl(socket.as_raw_fd(), libc::FIONREAD, &mut n) };
    if r == 0 { n.max(0) as usize } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn an_opened_gate_ends_the_wait_and_a_closed_one_waits_to_its_deadline() {
        let gate = Arc::new(Gate::default());
        gate.close();
        let opener = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.open())
        };
        // The deadline is far: only the gate can end this wait within the test's time.
        gate.wait(Instant::now() + Duration::from_secs(3600));
        opener.join().unwrap();
        gate.close();
        let until = Instant::now() + Duration::from_millis(2);
        gate.wait(until);
        assert!(
            Instant::now() >= until,
            "a closed gate waits to its deadline"
        );
    }
}
