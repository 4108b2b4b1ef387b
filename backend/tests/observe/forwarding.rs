//! Where `pipescope observe` forwards: the Redis `--redis-url` names, said at start with its
//! version and key count; a throwaway redis-server only with `--own-redis`, said loudly; a
//! named Redis that cannot be reached, with both ways out.

use std::io::BufRead;
use std::process::{Child, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::support;

/// `pipescope observe ARGS` on a free port, and its stderr lines, read on a thread.
fn observe(args: &[&str]) -> (Child, Receiver<String>) {
    let mut child = support::pipescope("pipescope=warn")
        .args(["observe", "--listen", "127.0.0.1:0", "--no-equivalent"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pipescope runs");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            eprintln!("{line}");
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// Stderr's lines up to "listening ADDR" (within 30 s).
fn until_listening(rx: &Receiver<String>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                let done = line.starts_with("listening ");
                seen.push(line);
                if done {
                    return seen;
                }
            }
            Err(e) => panic!("pipescope observe did not say where it listens ({e}): {seen:?}"),
        }
    }
}

fn stop(mut child: Child) {
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "observe did not end within 30 s of Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn observe_says_in_one_line_which_redis_it_forwards_to_and_how_many_keys_it_holds() {
    let (redis, _) = support::redis();
    let mut con = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    for k in ["a", "b", "c"] {
        let _: () = redis::cmd("SET").arg(k).arg(1).query(&mut con).unwrap();
    }
    let version: String = redis::cmd("INFO")
        .arg("server")
        .query::<String>(&mut con)
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("redis_version:")
                .map(|v| v.trim().to_string())
        })
        .unwrap();
    let (child, rx) = observe(&["--redis-url", &redis.url()]);
    let said = until_listening(&rx);
    stop(child);
    let expected = format!(
        "forwarding to redis://127.0.0.1:{}/0 (Redis {version}, 3 keys)",
        redis.port()
    );
    assert_eq!(
        said.iter()
            .filter(|l| l.starts_with("forwarding to"))
            .collect::<Vec<_>>(),
        [&expected],
        "{said:?}"
    );
    assert!(!said.iter().any(|l| l.contains("THROWAWAY")), "{said:?}");
}

#[test]
fn observe_own_redis_says_loudly_that_it_is_a_throwaway_one() {
    let (child, rx) = observe(&["--own-redis"]);
    let said = until_listening(&rx);
    stop(child);
    let line = said
        .iter()
        .find(|l| l.contains("forwarding to"))
        .unwrap_or_else(|| panic!("no forwarding line: {said:?}"));
    assert!(
        line.starts_with("pipescope: forwarding to a THROWAWAY redis-server of pipescope's own at redis://127.0.0.1:")
            && line.contains(", empty), as --own-redis asks: your application's data is NOT there"),
        "{line}"
    );
}

#[test]
fn observe_of_a_redis_that_does_not_answer_names_both_ways_out() {
    let closed = pipescope::local_redis::free_port().unwrap();
    let out = support::pipescope("pipescope=warn")
        .args(["observe", "--listen", "127.0.0.1:0", "--redis-url"])
        .arg(format!("redis://127.0.0.1:{closed}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "pipescope: cannot reach Redis at 127.0.0.1:{closed}: Connection refused (os error 111). Is redis-server running there? Check the address, or give --own-redis to forward to a throwaway redis-server of pipescope's own"
        )
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn own_redis_is_for_the_proxy_alone() {
    let out = support::pipescope("pipescope=warn")
        .args(["observe", "--own-redis", "--pcap", "x.pcap"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'--own-redis' cannot be used with '--pcap <FILE>'"),
        "{stderr}"
    );
}
