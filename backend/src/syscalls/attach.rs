//! Attaching: what tracing needs (root, tracefs), and the perf events opened on the
//! tracepoints — per thread and per CPU, inherited by the threads and processes they create,
//! every CPU's records into one ring buffer.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};

use perf_event_open_sys as sys;
use sys::bindings::{
    PERF_FLAG_FD_CLOEXEC, PERF_SAMPLE_RAW, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_TYPE_TRACEPOINT,
    perf_event_attr,
};

use super::TraceError;
use super::accounting::traced_syscalls;
use super::records::{Layout, TRACEFS};
use super::ring::Ring;

/// Whether this process may trace: root (or the kernel lets anyone read tracepoints), and
/// tracefs mounted (mounted here if it is not and we may).
pub fn ready() -> Result<(), TraceError> {
    let root = unsafe { libc::geteuid() } == 0;
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|p| p.trim().parse::<i32>().ok());
    if !root && paranoid != Some(-1) {
        return Err(TraceError::NotRoot);
    }
    let probe = format!("{TRACEFS}/events/raw_syscalls/sys_enter/id");
    if std::path::Path::new(&probe).exists() {
        return Ok(());
    }
    if root {
        let c = |s: &str| CString::new(s).unwrap();
        let rc = unsafe {
            libc::mount(
                c("nodev").as_ptr(),
                c(TRACEFS).as_ptr(),
                c("tracefs").as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc == 0 && std::path::Path::new(&probe).exists() {
            return Ok(());
        }
    }
    Err(TraceError::NoTracefs)
}

/// The CPUs online ("0-3,6").
fn cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
            out.extend(a..=b);
        }
    }
    if out.is_empty() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        out.extend(0..n as i32);
    }
    out
}

/// Every CPU's ring buffer, fed by the events opened so far.
pub struct Attached {
    pub rings: Vec<Ring>,
    /// The events writing into another event's ring: kept open.
    _events: Vec<OwnedFd>,
    cpus: Vec<i32>,
    /// Per tracepoint (in `TRACEPOINTS`' order), the kernel's filter on its records.
    filters: [Option<CString>; 5],
}

/// Whom an event watches.
#[derive(Clone, Copy)]
pub enum Task {
    /// A thread that exists now.
    Thread(u32),
    /// The calling thread, disabled until it (or a child it creates) execs.
    OnExec,
}

impl Attached {
    pub fn new() -> Attached {
        // An event per tracepoint, CPU and thread: a process of many threads needs more
        // descriptors than the usual soft limit of 1,024.
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0
                && limit.rlim_cur < limit.rlim_max
            {
                limit.rlim_cur = limit.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
        let ids: Vec<String> = traced_syscalls()
            .iter()
            .map(|nr| format!("id == {nr}"))
            .collect();
        Attached {
            rings: Vec::new(),
            _events: Vec::new(),
            cpus: cpus(),
            filters: [
                // The raw syscall tracepoints fire for every syscall: only those read pass.
                Some(CString::new(ids.join(" || ")).unwrap()),
                Some(CString::new(ids.join(" || ")).unwrap()),
                // Switches away to sleep (S or D), not preemptions.
                Some(CString::new("prev_state & 3").unwrap()),
                // Wake-ups by the thread, not from an interrupt on its CPU (a packet delivered
                // by the network's softirq): TRACE_FLAG_HARDIRQ | _SOFTIRQ | _NMI.
                Some(CString::new("!(common_flags & 88)").unwrap()),
                None,
            ],
        }
    }

    /// Opens every tracepoint's event on `task`, one per CPU.
    pub fn watch(&mut self, layout: &Layout, task: Task) -> Result<(), TraceError> {
        let first = self.rings.is_empty();
        for (k, &cpu) in self.cpus.clone().iter().enumerate() {
            for (t, &id) in layout.ids.iter().enumerate() {
                let fd = open(id, task, cpu)?;
                if let Some(filter) = &self.filters[t] {
                    let rc = unsafe {
                        sys::ioctls::SET_FILTER(
                            raw(&fd),
                            filter.as_ptr() as *mut std::os::raw::c_char,
                        )
                    };
                    // Without the scheduler's filters the records are only more: the
                    // decoding drops the same ones.
                    if rc != 0 && t < 2 {
                        return Err(TraceError::Os {
                            what: "setting the syscall filter",
                            err: std::io::Error::last_os_error(),
                        });
                    }
                }
                if first && t == 0 {
                    self.rings.push(Ring::map(fd)?);
                } else {
                    let rc = unsafe { sys::ioctls::SET_OUTPUT(raw(&fd), self.rings[k].raw_fd()) };
                    if rc != 0 {
                        return Err(TraceError::Os {
                            what: "joining a CPU's ring buffer",
                            err: std::io::Error::last_os_error(),
                        });
                    }
                    self._events.push(fd);
                }
            }
        }
        Ok(())
    }
}

fn raw(fd: &OwnedFd) -> i32 {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd()
}

fn open(id: u64, task: Task, cpu: i32) -> Result<OwnedFd, TraceError> {
    let mut attr = perf_event_attr {
        type_: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<perf_event_attr>() as u32,
        config: id,
        sample_type: u64::from(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW),
        ..Default::default()
    };
    attr.__bindgen_anon_1.sample_period = 1;
    attr.set_inherit(1);
    attr.set_use_clockid(1);
    attr.clockid = libc::CLOCK_MONOTONIC;
    let pid = match task {
        Task::Thread(tid) => tid as i32,
        Task::OnExec => {
            attr.set_disabled(1);
            attr.set_enable_on_exec(1);
            0
        }
    };
    let fd = unsafe {
        sys::perf_event_open(
            &mut attr,
            pid,
            cpu,
            -1,
            u64::from(PERF_FLAG_FD_CLOEXEC) as _,
        )
    };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return Err(match err.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => TraceError::NotRoot,
            Some(libc::ESRCH) => TraceError::Gone(pid as u32),
            _ => TraceError::Os {
                what: "opening a perf event on a tracepoint",
                err,
            },
        });
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The threads of process `pid` now.
pub fn threads(pid: u32) -> Result<Vec<u32>, TraceError> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).map_err(|_| TraceError::Gone(pid))?;
    Ok(dir
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
        .collect())
}
