//! Commands of a run, encoded straight into the write buffer: no per-command allocation, no
//! intermediate key or value buffers. The key of request `i` is `<namespace>k<i>` in the run's
//! key layout (exactly what `keys::write_key` produces, so cleanup finds it); the value is `v<i>` or, with a
//! value size, one fixed deterministic value encoded once and copied. A run with the other
//! client INCRs one shared key instead (`shared::keys::counter`). The RESP is written with
//! `crate::resp`'s encoder; what is here is the workload: which command, key and value.

use shared::{Command, KeyLayout};

use super::keys::namespace_in;
use crate::resp::{CRLF, array_header, bulk, bulk_header, bulk_of};

pub struct Encoder {
    command: Command,
    /// `pipescope:<run>:k`, the key without its index (or the whole shared counter's key).
    key_prefix: Vec<u8>,
    /// Keys carry the request index; false for the shared counter.
    indexed: bool,
    /// `$n\r\n<n bytes>\r\n`, when the run has a value size.
    fixed_value: Option<Vec<u8>>,
}

/// The `n`-byte value written for a value size: printable, deterministic, the same for every
/// key (`abc…xyzabc…`).
pub fn fixed_value(n: u32) -> Vec<u8> {
    (0..n).map(|j| b'a' + (j % 26) as u8).collect()
}

impl Encoder {
    /// Spread keys (`KeyLayout::Spread`).
    pub fn new(command: Command, run_id: u64, value_bytes: Option<u32>) -> Encoder {
        Encoder::laid_out(command, run_id, KeyLayout::Spread, value_bytes)
    }

    /// Keys named as `layout` says.
    pub fn laid_out(
        command: Command,
        run_id: u64,
        layout: KeyLayout,
        value_bytes: Option<u32>,
    ) -> Encoder {
        let mut key_prefix = namespace_in(run_id, layout).into_bytes();
        key_prefix.push(b'k');
        let fixed_value = value_bytes.map(|n| {
            let mut encoded = Vec::with_capacity(n as usize + 16);
            bulk(&mut encoded, &fixed_value(n));
            encoded
        });
        Encoder {
            command,
            key_prefix,
            indexed: true,
            fixed_value,
        }
    }

    /// INCRs of run `run_id`'s shared counter, the key the other client INCRs too.
    pub fn shared_counter(run_id: u64, layout: KeyLayout) -> Encoder {
        Encoder {
            command: Command::Incr,
            key_prefix: shared::keys::counter(run_id, layout).into_bytes(),
            indexed: false,
            fixed_value: None,
        }
    }

    pub fn command(&self) -> Command {
        self.command
    }

    /// Appends the run's command for request `i`.
    #[inline]
    pub fn encode(&self, out: &mut Vec<u8>, i: u64) {
        self.encode_range(out, i, 1);
    }

    /// Appends the run's commands for requests `first..first + n`. Consecutive indices count
    /// up in ASCII instead of being formatted one by one (formatting each would be most of the
    /// user-space cost of encoding a batch).
    #[inline]
    pub fn encode_range(&self, out: &mut Vec<u8>, first: u64, n: u64) {
        let mut index = Counter::new(first);
        for _ in 0..n {
            let digits = index.digits();
            match self.command {
                Command::Set => {
                    out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
                    self.key(out, digits);
                    self.value(out, digits);
                }
                Command::Get => {
                    out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
                    self.key(out, digits);
                }
                Command::Incr => {
                    out.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n");
                    self.key(out, digits);
                }
            }
            index.increment();
        }
    }

    /// Appends `SET k<i> <value>` (how GET runs are seeded).
    pub fn encode_set(&self, out: &mut Vec<u8>, i: u64) {
        let mut num = itoa::Buffer::new();
        let digits = num.format(i).as_bytes();
        out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
        self.key(out, digits);
        self.value(out, digits);
    }

    /// Appends one `MSET k v k v …` (SET) or `MGET k k …` (GET) for requests
    /// `first..first + n`; `None` for a command without a multi-key form.
    pub fn encode_multi_key(&self, out: &mut Vec<u8>, first: u64, n: u64) -> Option<()> {
        let name = self.command.multi_key()?;
        let per_key = if self.command == Command::Set { 2 } else { 1 };
        array_header(out, (1 + per_key * n) as usize);
        bulk(out, name.as_bytes());
        let mut index = Counter::new(first);
        for _ in 0..n {
            let digits = index.digits();
            self.key(out, digits);
            if self.command == Command::Set {
                self.value(out, digits);
            }
            index.increment();
        }
        Some(())
    }

    /// `$len\r\n<prefix><digits>\r\n`, `digits` being the request index.
    #[inline]
    fn key(&self, out: &mut Vec<u8>, digits: &[u8]) {
        let digits = if self.indexed { digits } else { &[] };
        bulk_of(out, [&self.key_prefix, digits]);
    }

    /// The fixed value, or `$len\r\nv<digits>\r\n`.
    #[inline]
    fn value(&self, out: &mut Vec<u8>, digits: &[u8]) {
        if let Some(fixed) = &self.fixed_value {
            out.extend_from_slice(fixed);
            return;
        }
        bulk_header(out, 1 + digits.len());
        out.push(b'v');
        out.extend_from_slice(digits);
        out.extend_from_slice(CRLF);
    }
}

/// A request index as ASCII digits, counted up in place (`999` → `1000` carries left).
struct Counter {
    buf: [u8; 20],
    /// The digits are `buf[start..]`.
    start: usize,
}

impl Counter {
    fn new(i: u64) -> Counter {
        let mut buf = [b'0'; 20];
        let mut num = itoa::Buffer::new();
        let digits = num.format(i).as_bytes();
        let start = 20 - digits.len();
        buf[start..].copy_from_slice(digits);
        Counter { buf, start }
    }

    #[inline]
    fn digits(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    #[inline]
    fn increment(&mut self) {
        let mut k = self.buf.len() - 1;
        loop {
            if self.buf[k] < b'9' {
                self.buf[k] += 1;
                return;
            }
            self.buf[k] = b'0';
            if k == self.start {
                // All nines: one more digit (never past u64::MAX; counts are far below).
                self.start -= 1;
                self.buf[self.start] = b'1';
                return;
            }
            k -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::keys::{namespace, write_key};
    use super::*;
    use crate::resp::encode_command;

    /// The reference: the general encoder with the key cleanup removes.
    fn reference(args: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_command(&mut out, args);
        out
    }

    #[test]
    fn commands_match_the_general_encoder_and_the_cleanup_keys() {
        for (i, layout) in [0u64, 7, 42, 1_000_000]
            .into_iter()
            .flat_map(|i| KeyLayout::ALL.map(|l| (i, l)))
        {
            let mut key = Vec::new();
            write_key(&mut key, &namespace_in(9, layout), i);
            assert_eq!(key, shared::keys::key_in(9, i, layout).as_bytes());
            let value = format!("v{i}");
            for (command, want) in [
                (Command::Set, reference(&[b"SET", &key, value.as_bytes()])),
                (Command::Get, reference(&[b"GET", &key])),
                (Command::Incr, reference(&[b"INCR", &key])),
            ] {
                let mut out = Vec::new();
                Encoder::laid_out(command, 9, layout, None).encode(&mut out, i);
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&want)
                );
            }
        }
    }

    #[test]
    fn the_counter_counts_like_the_formatter() {
        for start in [0u64, 8, 98, 999, 123_456_789] {
            let mut c = Counter::new(start);
            for i in start..start + 1_100 {
                assert_eq!(c.digits(), i.to_string().as_bytes());
                c.increment();
            }
        }
        // A range matches command by command.
        for command in Command::ALL {
            let enc = Encoder::new(command, 3, None);
            let (mut range, mut one_by_one) = (Vec::new(), Vec::new());
            enc.encode_range(&mut range, 95, 1_000);
            for i in 95..1_095 {
                let mut key = Vec::new();
                write_key(&mut key, &namespace(3), i);
                let value = format!("v{i}");
                let args: Vec<&[u8]> = match command {
                    Command::Set => vec![b"SET", &key, value.as_bytes()],
                    _ => vec![command.name().as_bytes(), &key],
                };
                encode_command(&mut one_by_one, &args);
            }
            assert_eq!(range, one_by_one, "{command:?}");
        }
    }

    #[test]
    fn a_value_size_is_one_fixed_value() {
        let mut out = Vec::new();
        Encoder::new(Command::Set, 1, Some(30)).encode(&mut out, 3);
        let value = fixed_value(30);
        assert_eq!(value.len(), 30);
        assert_eq!(out, reference(&[b"SET", b"pipescope:1:k3", &value]));
    }

    #[test]
    fn the_shared_counter_is_one_key() {
        let mut out = Vec::new();
        Encoder::shared_counter(5, KeyLayout::Spread).encode_range(&mut out, 7, 2);
        let one = reference(&[b"INCR", b"pipescope:5:counter"]);
        assert_eq!(out, [one.clone(), one].concat());
    }

    #[test]
    fn mset_and_mget_carry_the_batch() {
        let mut out = Vec::new();
        Encoder::new(Command::Set, 1, None).encode_multi_key(&mut out, 4, 2);
        assert_eq!(
            out,
            reference(&[b"MSET", b"pipescope:1:k4", b"v4", b"pipescope:1:k5", b"v5"])
        );
        out.clear();
        Encoder::new(Command::Get, 1, None).encode_multi_key(&mut out, 0, 2);
        assert_eq!(
            out,
            reference(&[b"MGET", b"pipescope:1:k0", b"pipescope:1:k1"])
        );
        assert!(
            Encoder::new(Command::Incr, 1, None)
                .encode_multi_key(&mut out, 0, 2)
                .is_none()
        );
    }
}
