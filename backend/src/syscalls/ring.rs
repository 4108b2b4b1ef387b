//! One CPU's perf ring buffer: the kernel writes records at `data_head`, we read up to it and
//! hand the space back by moving `data_tail`.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{Ordering, fence};

use perf_event_open_sys::bindings::{PERF_RECORD_LOST, PERF_RECORD_SAMPLE, perf_event_mmap_page};

use super::TraceError;

/// Data pages per CPU (a power of two): 4 MB with 4 KB pages, drained every few ms; a
/// client at 30,000 requests/s writes ~20 MB/s of records.
const DATA_PAGES: usize = 1024;

pub struct Ring {
    base: *mut u8,
    len: usize,
    data_offset: usize,
    data_size: usize,
    /// Keeps the event (and with it the mapping's source) open.
    _fd: OwnedFd,
}

// The mapping is only read and its tail written by the one thread that owns the Ring.
unsafe impl Send for Ring {}

/// A sample's `pid`, `tid`, `time` and raw tracepoint bytes (PERF_SAMPLE_TID | TIME | RAW).
pub struct Sample<'a> {
    pub pid: u32,
    pub tid: u32,
    pub time: u64,
    pub raw: &'a [u8],
}

impl Ring {
    pub fn map(fd: OwnedFd) -> Result<Ring, TraceError> {
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = page * (1 + DATA_PAGES);
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(TraceError::Os {
                what: "mapping a perf ring buffer",
                err: std::io::Error::last_os_error(),
            });
        }
        let header = base as *const perf_event_mmap_page;
        let (data_offset, data_size) = unsafe {
            let o = std::ptr::read_volatile(&(*header).data_offset) as usize;
            let s = std::ptr::read_volatile(&(*header).data_size) as usize;
            if o == 0 {
                (page, page * DATA_PAGES)
            } else {
                (o, s)
            }
        };
        Ok(Ring {
            base: base as *mut u8,
            len,
            data_offset,
            data_size,
            _fd: fd,
        })
    }

    pub fn raw_fd(&self) -> i32 {
        self._fd.as_raw_fd()
    }

    /// Every record written since the last drain: samples to `each`; returns the number of
    /// records the kernel reported lost (the buffer was full).
    pub fn drain(&mut self, mut each: impl FnMut(Sample<'_>)) -> u64 {
        let header = self.base as *mut perf_event_mmap_page;
        let head = unsafe { std::ptr::read_volatile(&(*header).data_head) };
        // The records up to `head` are complete once it is read (the kernel's barrier pairs).
        fence(Ordering::Acquire);
        let mut tail = unsafe { std::ptr::read_volatile(&(*header).data_tail) };
        let data =
            unsafe { std::slice::from_raw_parts(self.base.add(self.data_offset), self.data_size) };
        let mut lost = 0;
        let mut copy = Vec::new();
        while tail < head {
            let at = (tail as usize) % self.data_size;
            let byte = |k: usize| data[(at + k) % self.data_size];
            let size = u16::from_ne_bytes([byte(6), byte(7)]) as usize;
            if size < 8 {
                break;
            }
            // A record that wraps around the end is copied out whole.
            let rec: &[u8] = if at + size <= self.data_size {
                &data[at..at + size]
            } else {
                copy.clear();
                copy.extend((0..size).map(byte));
                &copy
            };
            let kind = u32::from_ne_bytes(rec[0..4].try_into().unwrap());
            if kind == PERF_RECORD_SAMPLE && rec.len() >= 28 {
                let u32_at = |o: usize| u32::from_ne_bytes(rec[o..o + 4].try_into().unwrap());
                let raw_len = u32_at(24) as usize;
                if let Some(raw) = rec.get(28..28 + raw_len) {
                    each(Sample {
                        pid: u32_at(8),
                        tid: u32_at(12),
                        time: u64::from_ne_bytes(rec[16..24].try_into().unwrap()),
                        raw,
                    });
                }
            } else if kind == PERF_RECORD_LOST && rec.len() >= 24 {
                lost += u64::from_ne_bytes(rec[16..24].try_into().unwrap());
            }
            tail += size as u64;
        }
        fence(Ordering::Release);
        unsafe { std::ptr::write_volatile(&mut (*header).data_tail, tail) };
        lost
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}
