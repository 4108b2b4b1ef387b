//! Attaching: what tracing needs (root), and the eBPF programs of `trace.bpf.c`
//! loaded on the syscall, scheduler and TCP tracepoints. They run for every process on the host and
//! write records only for the processes traced (and those they fork), into one ring buffer:
//! the traced threads carry no perf events of their own, so their context switches cost
//! nothing more, and a syscall not read costs a map lookup.

use std::cell::RefCell;
use std::rc::Rc;

use libbpf_rs::{
    Link, Map, MapCore, MapFlags, Object, ObjectBuilder, RingBuffer, RingBufferBuilder,
};

use super::TraceError;
use super::accounting::traced_syscalls;
use super::events::Record;
use super::ring;

/// The size of the filter in front of the traced processes, and its value for a slot shared
/// by several (trace.bpf.c's SLOTS and MANY).
const SLOTS: u32 = 4096;
const MANY: u32 = u32::MAX;

/// The programs, compiled by build.rs.
static PROGRAMS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/trace.bpf.o"));

/// Whether this process may trace: the programs built in (x86_64), and root.
pub fn ready() -> Result<(), TraceError> {
    if PROGRAMS.is_empty() {
        return Err(TraceError::NotBuilt);
    }
    if unsafe { libc::geteuid() } != 0 {
        return Err(TraceError::NotRoot);
    }
    Ok(())
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

fn bpf(what: &'static str) -> impl Fn(libbpf_rs::Error) -> TraceError {
    move |err| TraceError::Bpf {
        what,
        err: err.to_string(),
    }
}

impl Attached {
    /// `hooks_alone`: only the programs on the syscall tracepoints, returning at once (what
    /// being attached costs every syscall on the host, before any work: `cost pid`).
    pub fn new(hooks_alone: bool) -> Result<Attached, TraceError> {
        let mut open = ObjectBuilder::default()
            .open_memory(PROGRAMS)
            .map_err(bpf("reading the eBPF programs"))?;
        if hooks_alone {
            for mut p in open.progs_mut() {
                let on_syscalls = matches!(p.name().to_str(), Some("sys_enter" | "sys_exit"));
                p.set_autoload(on_syscalls);
            }
            let mut rodata = open
                .maps_mut()
                .find(|m| m.name().to_string_lossy().ends_with(".rodata"))
                .expect("trace.bpf.c defines hooks_alone");
            // hooks_alone is its only read-only datum.
            assert_eq!(rodata.initial_value().map(<[u8]>::len), Some(4));
            rodata
                .set_initial_value(&1u32.to_ne_bytes())
                .map_err(bpf("loading the eBPF programs with nothing to do"))?;
        }
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
                ring::decode(rec, &mut into.borrow_mut());
                0
            })
            .map_err(bpf("reading the trace's ring buffer"))?;
        let ring = builder
            .build()
            .map_err(bpf("reading the trace's ring buffer"))?;
        let mut links = Vec::new();
        for prog in object.progs_mut().filter(|p| p.autoload()) {
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
        let naming = bpf("naming the process to trace");
        let tgids = self.map("tgids");
        tgids
            .update(&tgid.to_ne_bytes(), &[1], MapFlags::ANY)
            .map_err(&naming)?;
        // The filter in front of `tgids` (see trace.bpf.c): this process alone in its slot,
        // or MANY. A process the programs add meanwhile is in `tgids` before it tries the
        // slot, so either it is seen here or it finds the slot taken.
        let slots = self.map("slots");
        let slot = (tgid % SLOTS).to_ne_bytes();
        let was = slots
            .lookup(&slot, MapFlags::ANY)
            .map_err(&naming)?
            .map(|v| u32::from_ne_bytes(v[..4].try_into().unwrap()))
            .unwrap_or(0);
        let others = || {
            tgids.keys().any(|k| {
                let k = u32::from_ne_bytes(k[..4].try_into().unwrap());
                k != tgid && k % SLOTS == tgid % SLOTS
            })
        };
        let alone = (was == 0 || was == tgid) && !others();
        let value = if alone { tgid } else { MANY };
        slots
            .update(&slot, &value.to_ne_bytes(), MapFlags::ANY)
            .map_err(&naming)?;
        if alone && others() {
            slots
                .update(&slot, &MANY.to_ne_bytes(), MapFlags::ANY)
                .map_err(naming)?;
        }
        Ok(())
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
