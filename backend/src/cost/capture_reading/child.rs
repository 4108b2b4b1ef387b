//! A reader run as a child process: its wall time, from spawning it to its exit, and its peak
//! resident memory.
//!
//! The peak is the child's VmHWM (`/proc/<pid>/status`), read every few ms while it runs: its
//! own address space's high-water mark, which only rises, read last a few ms before it exits.
//! `wait4`'s `ru_maxrss` is kept beside it, but Linux folds the parent's peak at the fork into
//! a child's `ru_maxrss` (at exec), and this process held a 256 MiB capture buffer; so the
//! parent's own peak is reset to its current size before each spawn (`clear_refs`), and even
//! then `ru_maxrss` is at least what the parent held then.

use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How a child ran.
#[derive(Debug, Clone, Copy)]
pub struct Ran {
    pub wall: Duration,
    /// The child's VmHWM last read before it exited, kB (`None`: it exited before a reading).
    pub hwm_kb: Option<u64>,
    /// wait4's `ru_maxrss`, kB: at least the parent's RSS at the fork.
    pub max_rss_kb: u64,
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// It outlived `limit` and was killed.
    pub killed: bool,
}

/// Runs `cmd` (its stdio as the caller set it) to its end, killing it after `limit`.
pub fn run(cmd: &mut Command, limit: Duration) -> std::io::Result<Ran> {
    // Best effort (Linux ≥ 4.0): our peak reset to our size now, so less of it is in the
    // child's ru_maxrss.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let began = Instant::now();
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    // Reaped with wait4 below, for its rusage: std's Child is not waited on (dropping it
    // neither waits nor kills).
    drop(child);
    // The watchdog kills only a child not yet reaped (an exited one, not yet reaped, is a
    // zombie that a signal does not harm), so the pid cannot be another process's by then.
    let reaped = Arc::new((Mutex::new(false), Condvar::new()));
    let watched = reaped.clone();
    let watchdog = std::thread::spawn(move || {
        let (lock, exited) = &*watched;
        let mut guard = lock.lock().expect("the watchdog's lock");
        let mut hwm = None;
        // Bounded by `limit`: then the child is killed and reaped by the waiter.
        while !*guard {
            if began.elapsed() >= limit {
                // SAFETY: kill(2) on our own child, which has not been reaped (see above).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return (hwm, true);
            }
            hwm = vm_hwm_kb(pid).or(hwm);
            guard = exited
                .wait_timeout(guard, POLL)
                .expect("the watchdog's lock")
                .0;
        }
        (hwm, false)
    });
    exited(pid)?;
    let wall = began.elapsed();
    {
        let (lock, exited) = &*reaped;
        *lock.lock().expect("the watchdog's lock") = true;
        exited.notify_all();
    }
    let (hwm_kb, killed) = watchdog.join().expect("the watchdog panicked");
    let (status, usage) = reap(pid)?;
    Ok(Ran {
        wall,
        hwm_kb,
        // Linux gives ru_maxrss in kB.
        max_rss_kb: usage.ru_maxrss.max(0) as u64,
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        killed,
    })
}

/// How often the child's VmHWM is read.
const POLL: Duration = Duration::from_millis(5);

/// `pid`'s VmHWM, kB; `None` once it has exited (or before its status can be read).
fn vm_hwm_kb(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Waits until `pid` has exited, leaving it to be reaped.
fn exited(pid: libc::pid_t) -> std::io::Result<()> {
    loop {
        // SAFETY: a zeroed siginfo_t for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child, `info` alive for the call.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reaps `pid`: its wait status and resource usage.
fn reap(pid: libc::pid_t) -> std::io::Result<(i32, libc::rusage)> {
    loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage for wait4 to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own exited child, both out-parameters alive for the call.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
