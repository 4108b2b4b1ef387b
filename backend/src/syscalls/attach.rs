//! Attaching: what tracing needs (root, tracefs), and the eBPF programs of `trace.bpf.c`
//! loaded on the syscall and scheduler tracepoints. They run for every process on the host and
//! write records only for the processes traced (and those they fork), into one ring buffer:
//! the traced threads carry no perf events of their own, so their context switches cost
//! nothing more, and a syscall not read costs a map lookup.

use std::cell::RefCell;
use std::ffi::CString;
use std::rc::Rc;

use libbpf_rs::{
    Link, Map, MapCore, MapFlags, Object, ObjectBuilder, RingBuffer, RingBufferBuilder,
};

use super::TraceError;
use super::accounting::traced_syscalls;
use super::records::{Layout, Record, TRACEFS};
use super::ring;

/// The programs, compiled by build.rs.
static PROGRAMS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/trace.bpf.o"));

/// Whether this process may trace: the programs built in (x86_64), root, and tracefs mounted
/// (mounted here if it is not).
pub fn ready() -> Result<(), TraceError> {
    if PROGRAMS.is_empty() {
        return Err(TraceError::NotBuilt);
    }
    if unsafe { libc::geteuid() } != 0 {
        return Err(TraceError::NotRoot);
    }
    let probe = format!("{TRACEFS}/events/sched/sched_waking/id");
    if std::path::Path::new(&probe).exists() {
        return Ok(());
    }
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
    Err(TraceError::NoTracefs)
}

/// The programs loaded and attached, tracing whom `trace` and `spawning` name, and their ring
/// buffer.
pub struct Attached {
    ring: RingBuffer<'static>,
    /// What the ring buffer's callback decoded, until `read` takes it.
    decoded: Rc<RefCell<Vec<Record>>>,
    _links: Vec<Link>,
    object: Object,
}

fn bpf(what: &'static str) -> impl FnOnce(libbpf_rs::Error) -> TraceError {
    move |err| TraceError::Bpf {
        what,
        err: err.to_string(),
    }
}

impl Attached {
    pub fn new(layout: Layout) -> Result<Attached, TraceError> {
        let open = ObjectBuilder::default()
            .open_memory(PROGRAMS)
            .map_err(bpf("reading the eBPF programs"))?;
        let object = open.load().map_err(|err| match err.kind() {
            libbpf_rs::ErrorKind::PermissionDenied => TraceError::NotRoot,
            _ => bpf("loading the eBPF programs into the kernel")(err),
        })?;
        let map = |name: &str| {
            object
                .maps()
                .find(|m| m.name() == name)
                .unwrap_or_else(|| panic!("trace.bpf.c defines the map {name}"))
        };
        let syscalls = map("syscalls");
        for nr in traced_syscalls() {
            syscalls
                .update(&(nr as u32).to_ne_bytes(), &[1], MapFlags::ANY)
                .map_err(bpf("choosing the syscalls read"))?;
        }
        let decoded = Rc::new(RefCell::new(Vec::new()));
        let into = decoded.clone();
        let records = map("records");
        let mut builder = RingBufferBuilder::new();
        builder
            .add(&records, move |rec: &[u8]| {
                if let Some(r) = ring::decode(&layout, rec) {
                    into.borrow_mut().push(r);
                }
                0
            })
            .map_err(bpf("reading the trace's ring buffer"))?;
        let ring = builder
            .build()
            .map_err(bpf("reading the trace's ring buffer"))?;
        let mut links = Vec::new();
        for prog in object.progs_mut() {
            links.push(prog.attach().map_err(bpf("attaching an eBPF program"))?);
        }
        Ok(Attached {
            ring,
            decoded,
            _links: links,
            object,
        })
    }

    /// Appends the records written since the last read.
    pub fn read(&self, out: &mut Vec<Record>) {
        let _ = self.ring.consume();
        out.append(&mut self.decoded.borrow_mut());
    }

    fn map(&self, name: &str) -> Map<'_> {
        self.object
            .maps()
            .find(|m| m.name() == name)
            .unwrap_or_else(|| panic!("trace.bpf.c defines the map {name}"))
    }

    /// Traces process `pid` (all its threads, now and later, and the processes it forks).
    pub fn trace(&self, pid: u32) -> Result<(), TraceError> {
        let tgid = thread_group(pid)?;
        self.map("tgids")
            .update(&tgid.to_ne_bytes(), &[1], MapFlags::ANY)
            .map_err(bpf("naming the process to trace"))
    }

    /// Traces the processes the calling thread forks until `spawned`.
    pub fn spawning(&self) -> Result<(), TraceError> {
        let tid = unsafe { libc::gettid() } as u32;
        self.set_spawner(tid)
    }

    pub fn spawned(&self) -> Result<(), TraceError> {
        self.set_spawner(0)
    }

    fn set_spawner(&self, tid: u32) -> Result<(), TraceError> {
        self.map("spawner")
            .update(&0u32.to_ne_bytes(), &tid.to_ne_bytes(), MapFlags::ANY)
            .map_err(bpf("naming the thread that starts the command"))
    }

    /// Records the programs could not write: the ring buffer was full.
    pub fn lost(&self) -> u64 {
        let per_cpu = self
            .map("lost")
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
            .ok()
            .flatten()
            .unwrap_or_default();
        per_cpu
            .iter()
            .filter_map(|v| Some(u64::from_ne_bytes(v.get(..8)?.try_into().ok()?)))
            .sum()
    }
}

/// The process (thread group) that thread or process `pid` belongs to.
fn thread_group(pid: u32) -> Result<u32, TraceError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|_| TraceError::Gone(pid))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|t| t.trim().parse().ok())
        .ok_or(TraceError::Gone(pid))
}
