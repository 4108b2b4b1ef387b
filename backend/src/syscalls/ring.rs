//! The records `trace.bpf.c` writes into its ring buffer, decoded: a 24-byte header (kind,
//! pid, tid, length of a tracepoint's raw record, CLOCK_MONOTONIC time) and the kind's fields.

use super::records::{Event, Layout, Record};

const ENTER: u32 = 1;
const EXIT: u32 = 2;
const SWITCH: u32 = 3;
const WAKING: u32 = 4;
const TCP: u32 = 5;
const HEADER: usize = 24;

/// One record from the ring buffer, as an event of the thread that wrote it.
pub fn decode(layout: &Layout, rec: &[u8]) -> Option<Record> {
    let u32_at = |o: usize| {
        rec.get(o..o + 4)
            .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
    };
    let i64_at = |o: usize| {
        rec.get(o..o + 8)
            .map(|b| i64::from_ne_bytes(b.try_into().unwrap()))
    };
    let (kind, pid, tid, len) = (u32_at(0)?, u32_at(4)?, u32_at(8)?, u32_at(12)?);
    let time = i64_at(16)? as u64;
    let event = match kind {
        ENTER => {
            let mut args = [0u64; 6];
            for (k, a) in args.iter_mut().enumerate() {
                *a = i64_at(HEADER + 8 + 8 * k)? as u64;
            }
            Event::Enter {
                nr: i64_at(HEADER)?,
                args,
            }
        }
        EXIT => Event::Exit {
            nr: i64_at(HEADER)?,
            ret: i64_at(HEADER + 8)?,
        },
        SWITCH => Event::Switch {
            prev: tid,
            slept: true,
        },
        WAKING => Event::Waking {
            wakee: u32_at(HEADER)?,
        },
        TCP => layout.tcp(rec.get(HEADER..HEADER + len as usize)?)?,
        _ => return None,
    };
    Some(Record {
        time,
        pid,
        tid,
        event,
    })
}
