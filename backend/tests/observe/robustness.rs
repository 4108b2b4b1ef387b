//! The observing proxy under what real traffic does to it, at integration level (a real
//! redis-server, the library's `Observer`, raw TCP clients): several commands in one read, a
//! 1 MB value in many pieces, reads that end mid-length-prefix, every byte forwarded unchanged
//! both ways, garbage, a client leaving mid-pipeline and Redis dying mid-observation.
//! resp/framer.rs's unit tests frame the same shapes from byte slices; here they cross sockets.

use std::io::Write;
use std::net::TcpStream;

use shared::observe::VerdictKind;

use crate::proxy::{cmd, replies, setup, until_closed};

#[test]
fn several_commands_in_one_read() {
    let setup = setup();
    let mut s = setup.through_proxy();
    let mut batch = cmd(&[b"SET", b"a", b"1"]);
    batch.extend(cmd(&[b"INCR", b"a"]));
    batch.extend(cmd(&[b"GET", b"a"]));
    batch.extend(b"PING\r\n"); // inline, as telnet or redis-cli send it
    // One small write with nothing before it: one segment, so one read at the proxy.
    s.write_all(&batch).unwrap();
    assert_eq!(replies(&mut s, 4), b"+OK\r\n:2\r\n$1\r\n2\r\n+PONG\r\n");
    let c = setup.until(1, "four replies handed back", |c| c.counts.replies == 4);
    assert_eq!(
        (
            c.counts.commands,
            c.counts.writes,
            c.counts.round_trips,
            c.counts.max_depth
        ),
        (4, 1, 1, 4),
        "{:?}",
        c.counts
    );
}

#[test]
fn a_megabyte_value_in_many_small_pieces() {
    let setup = setup();
    let mut s = setup.through_proxy();
    let value: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    let set = cmd(&[b"SET", b"big", &value]);
    for piece in set.chunks(1000) {
        s.write_all(piece).unwrap();
    }
    assert_eq!(replies(&mut s, 1), b"+OK\r\n");
    let c = setup.until(1, "the SET answered", |c| c.counts.replies == 1);
    assert_eq!(c.counts.commands, 1, "{:?}", c.counts);
    assert_eq!(c.counts.round_trips, 1, "{:?}", c.counts);
    assert_eq!(c.counts.bytes_from_client, set.len() as u64);
    // The proxy read it in 16 reads at least (64 KiB at most at once), but only the first
    // starts a command: one write, as a client's one SET is.
    assert_eq!(c.counts.writes, 1, "{:?}", c.counts);
    // And Redis got the value whole.
    s.write_all(&cmd(&[b"GET", b"big"])).unwrap();
    let mut expected = format!("${}\r\n", value.len()).into_bytes();
    expected.extend_from_slice(&value);
    expected.extend_from_slice(b"\r\n");
    assert!(
        replies(&mut s, 1) == expected,
        "GET big returned other bytes"
    );
}

#[test]
fn reads_that_end_mid_length_prefix_or_mid_crlf() {
    let setup = setup();
    let mut s = setup.through_proxy();
    let set = cmd(&[b"SET", b"key", b"value"]);
    // Cut mid-length-prefix (after "*", after a "$") and between "\r" and "\n" (twice).
    let cuts = [
        set.iter().position(|&b| b == b'$').unwrap() + 1,
        set.len() - 8,
        3,
        1,
    ];
    let mut sent = 0u64;
    for (k, &cut) in cuts.iter().enumerate() {
        let (head, tail) = set.split_at(cut);
        s.write_all(head).unwrap();
        sent += head.len() as u64;
        // The first piece has been read at the proxy before the rest is sent: two reads, of
        // which the first starts the command: one write.
        setup.until(1, "the first piece read", |c| {
            c.counts.bytes_from_client == sent
        });
        s.write_all(tail).unwrap();
        sent += tail.len() as u64;
        assert_eq!(replies(&mut s, 1), b"+OK\r\n", "cut at {cut}");
        let c = setup.until(1, "the SET answered", |c| c.counts.replies == k as u64 + 1);
        assert_eq!(
            c.counts.commands,
            k as u64 + 1,
            "cut at {cut}: {:?}",
            c.counts
        );
        assert_eq!(c.counts.writes, k as u64 + 1, "{:?}", c.counts);
        assert_eq!(c.counts.round_trips, k as u64 + 1, "{:?}", c.counts);
    }
}

/// A random stream of commands: strings, counters, lists, hashes, binary values of any size
/// (empty to 100 KB), inline commands, and commands that fail.
fn random_stream(rng: &mut fastrand::Rng, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..n {
        let key = format!("r:{}", rng.u8(..20)).into_bytes();
        let len = match rng.u8(..10) {
            0 => 0,
            1 => rng.usize(..100_000),
            _ => rng.usize(..200),
        };
        let value: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
        let field = format!("f{}", rng.u8(..5)).into_bytes();
        out.extend(match rng.u8(..12) {
            0 => cmd(&[b"SET", &key, &value]),
            1 => cmd(&[b"GET", &key]),
            2 => cmd(&[b"APPEND", &key, &value]),
            3 => cmd(&[b"INCR", &key]), // fails on a non-number: Redis's error, forwarded
            4 => cmd(&[b"DEL", &key]),
            5 => cmd(&[b"RPUSH", &key, &value]),
            6 => cmd(&[b"LRANGE", &key, b"0", b"-1"]),
            7 => cmd(&[b"HSET", &key, &field, &value]),
            8 => cmd(&[b"HGETALL", &key]),
            9 => cmd(&[b"ECHO", &value]),
            10 => format!("EXISTS {}\r\n", String::from_utf8(key).unwrap()).into_bytes(),
            _ => cmd(&[b"NOSUCHCOMMAND", &value]),
        });
    }
    out
}

/// Sends `stream` in random pieces (on a thread, so replies are read as they come) and returns
/// every reply byte.
fn exchange(mut s: TcpStream, stream: &[u8], n: usize, seed: u64) -> Vec<u8> {
    let mut writer = s.try_clone().unwrap();
    let stream = stream.to_vec();
    let sender = std::thread::spawn(move || {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut at = 0;
        while at < stream.len() {
            let k = rng.usize(1..=20_000).min(stream.len() - at);
            writer.write_all(&stream[at..at + k]).unwrap();
            at += k;
        }
    });
    let got = replies(&mut s, n);
    sender.join().unwrap();
    got
}

#[test]
fn every_byte_is_forwarded_unchanged_both_ways() {
    let setup = setup();
    let seed = fastrand::u64(..);
    eprintln!("seed {seed}");
    let mut rng = fastrand::Rng::with_seed(seed);
    const N: usize = 2_000;
    let stream = random_stream(&mut rng, N);

    let through = exchange(setup.through_proxy(), &stream, N, seed);
    let mut admin = setup.direct();
    admin.write_all(b"FLUSHALL\r\n").unwrap();
    assert_eq!(replies(&mut admin, 1), b"+OK\r\n");
    let direct = exchange(setup.direct(), &stream, N, seed);

    // Redis answered the same stream with the same bytes: it got it unchanged, and the
    // client got Redis's replies unchanged.
    assert!(
        through == direct,
        "seed {seed}: replies through the proxy differ from direct ones ({} vs {} bytes)",
        through.len(),
        direct.len()
    );
    let c = setup.until(1, "every reply handed back", |c| {
        c.counts.replies == N as u64
    });
    assert_eq!(c.counts.commands, N as u64, "seed {seed}");
    assert_eq!(c.counts.bytes_from_client, stream.len() as u64);
    assert_eq!(c.counts.bytes_from_redis, through.len() as u64);
}

#[test]
fn garbage_gets_redis_own_error_and_the_proxy_stays_up() {
    let setup = setup();
    let garbage = b"*x\r\n";
    let mut s = setup.through_proxy();
    s.write_all(garbage).unwrap();
    let through = until_closed(&mut s);
    let mut d = setup.direct();
    d.write_all(garbage).unwrap();
    let direct = until_closed(&mut d);
    assert!(
        direct.starts_with(b"-ERR Protocol error"),
        "{}",
        String::from_utf8_lossy(&direct)
    );
    assert_eq!(
        String::from_utf8_lossy(&through),
        String::from_utf8_lossy(&direct)
    );
    let c = setup.until(1, "ended", |c| !c.open);
    assert!(
        c.ended.as_deref().is_some_and(|e| e.contains("Redis")),
        "{c:#?}"
    );
    assert_eq!(c.counts.commands, 0, "{:?}", c.counts);

    // The next connection works; garbage after a command gets the command's reply, then the
    // error, and the error is no push (a "subscriber" verdict would say so).
    let mut next = setup.through_proxy();
    next.write_all(b"PING\r\n").unwrap();
    assert_eq!(replies(&mut next, 1), b"+PONG\r\n");
    let mut mixed = setup.through_proxy();
    mixed.write_all(b"PING\r\n*x\r\n").unwrap();
    let got = until_closed(&mut mixed);
    assert!(got.starts_with(b"+PONG\r\n-ERR Protocol error"), "{got:?}");
    let c = setup.until(3, "ended", |c| !c.open);
    assert_eq!(
        (c.counts.commands, c.counts.replies, c.counts.pushes),
        (1, 1, 0),
        "{:?}",
        c.counts
    );
    assert_eq!(
        c.verdict.kind,
        VerdictKind::OneAtATime,
        "{}",
        c.verdict.text
    );
}

#[test]
fn a_client_leaving_mid_pipeline_ends_its_record() {
    let setup = setup();
    let mut s = setup.through_proxy();
    let mut pipeline = Vec::new();
    for i in 0..10_000 {
        pipeline.extend(cmd(&[b"SET", format!("p:{i}").as_bytes(), b"x"]));
    }
    s.write_all(&pipeline).unwrap();
    // Gone with its replies unread (RST, as a killed process's socket would be, if any
    // replies had arrived).
    drop(s);
    let c = setup.until(1, "ended", |c| !c.open);
    eprintln!("{:?}: {:?}", c.ended, c.counts);
    let ended = c.ended.unwrap();
    assert!(ended.contains("client"), "{ended}");
    assert!(c.counts.commands <= 10_000, "{:?}", c.counts);
    let mut next = setup.through_proxy();
    next.write_all(b"PING\r\n").unwrap();
    assert_eq!(replies(&mut next, 1), b"+PONG\r\n");
}

#[test]
fn redis_dying_mid_observation_ends_the_record() {
    let mut setup = setup();
    let mut s = setup.through_proxy();
    s.write_all(&cmd(&[b"CLIENT", b"SETNAME", b"doomed"]))
        .unwrap();
    assert_eq!(replies(&mut s, 1), b"+OK\r\n");
    setup.until(1, "named", |c| c.counts.replies == 1);
    setup.redis.stop();
    // The client sees its connection end, and the record says Redis ended it.
    until_closed(&mut s);
    let c = setup.until(1, "ended", |c| !c.open);
    let ended = c.ended.unwrap();
    assert!(ended.contains("Redis"), "{ended}");
    assert_eq!(c.name.as_deref(), Some("doomed"));
}
