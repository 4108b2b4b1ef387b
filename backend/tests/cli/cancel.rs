//! Ctrl-C and SIGTERM against the real binary: a child whose SIGINT is at its default (the
//! test harness may run with it ignored), a real redis-server (or three-master cluster) the
//! test started, real signals sent mid-run. Each case says how many keys were in Redis when
//! the signal went and how many after (eprintln, for the record).

use crate::support;

use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use pipescope::cluster::LocalCluster;
use pipescope::local_redis::LocalRedis;
use shared::{ClientMsg, Mode, RunSpec, ServerMsg};
use tokio_tungstenite::tungstenite::Message;

/// Long enough that no run finishes before the signal: the signal always lands mid-run.
const COUNT: &str = "5000000";
/// Keys in Redis before a fast mode is signalled.
const MILLION: u64 = 1_000_000;
/// How long reaching a key count, or exiting after a signal, may take on a busy machine.
const LIMIT: Duration = Duration::from_secs(120);

/// `pipescope` with SIGINT and SIGTERM at their defaults and unblocked, as in a terminal,
/// whatever the test harness inherited.
fn pipescope() -> Command {
    let mut cmd = support::pipescope("warn");
    // SAFETY: signal and sigprocmask are async-signal-safe and touch only the child.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            Ok(())
        });
    }
    cmd
}

/// A running pipescope whose stderr is read line by line as it comes.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    stderr: Vec<String>,
}

impl Running {
    fn spawn(cmd: &mut Command) -> Running {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        Running {
            child,
            lines,
            stderr: Vec::new(),
        }
    }

    fn signal(&self, signal: i32) {
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// Waits for a stderr line containing `what`.
    fn stderr_line(&mut self, what: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stderr.push(line.clone());
                    if line.contains(what) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no stderr line with {what:?} within {LIMIT:?}: {:#?}",
                    self.stderr
                ),
            }
        }
    }

    /// Fails unless the child is still running (it would have nothing to cancel).
    fn alive(&mut self, what: &str) {
        if let Some(status) = self.child.try_wait().unwrap() {
            self.stderr.extend(self.lines.try_iter());
            panic!(
                "{what}: pipescope ended first ({status}): {:#?}",
                self.stderr
            );
        }
    }

    /// Waits for the exit, and returns it with all of stderr.
    fn exit(mut self) -> (ExitStatus, String) {
        let deadline = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "pipescope still running {LIMIT:?} after the signal: {:#?}",
                self.stderr
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends with the pipe.
        self.stderr.extend(self.lines.iter());
        (status, self.stderr.join("\n"))
    }
}

fn dbsize(url: &str) -> u64 {
    let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
    redis::cmd("DBSIZE").query(&mut con).unwrap()
}

/// DBSIZE summed over `urls` (a server, or every master of a cluster).
fn keys_in(urls: &[String]) -> u64 {
    urls.iter().map(|u| dbsize(u)).sum()
}

/// Waits until `urls` hold at least `n` keys while `run` is still running.
fn until_keys(urls: &[String], n: u64, run: &mut Running) -> u64 {
    let deadline = Instant::now() + LIMIT;
    loop {
        let now = keys_in(urls);
        if now >= n {
            return now;
        }
        run.alive(&format!("waiting for {n} keys (at {now})"));
        assert!(
            Instant::now() < deadline,
            "{now} of {n} keys within {LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One `bench` case: its arguments, the keys to wait for, the signal.
struct Case {
    args: &'static [&'static str],
    at: u64,
    signal: i32,
}

/// Runs `case` against `url` (`masters`: where its keys land), signals it once `at` keys are
/// in, and checks the exit code, the message and that no key is left. Returns the keys
/// before and after.
fn stop_bench(url: &str, cluster: bool, masters: &[String], case: &Case) -> (u64, u64) {
    let mut cmd = pipescope();
    cmd.args(["bench", "--redis-url", url, "--count", COUNT]);
    if cluster {
        cmd.arg("--cluster");
    }
    let mut run = Running::spawn(cmd.args(case.args));
    let before = until_keys(masters, case.at, &mut run);
    let signalled = Instant::now();
    run.signal(case.signal);
    let (status, stderr) = run.exit();
    let stopped = signalled.elapsed();
    let after = keys_in(masters);
    let (code, name) = match case.signal {
        libc::SIGINT => (130, "Ctrl-C"),
        _ => (143, "SIGTERM"),
    };
    eprintln!(
        "{}{:?} ({name}): {before} keys before, {after} after; exited {stopped:.1?} after the signal",
        if cluster { "cluster " } else { "" },
        case.args
    );
    assert_eq!(status.code(), Some(code), "{:?}: {stderr}", case.args);
    let said = stderr
        .lines()
        .find_map(|l| l.strip_prefix(&format!("pipescope: stopped by {name}: removed ")))
        .unwrap_or_else(|| panic!("{:?}: no removal message: {stderr}", case.args));
    // "1,054,930 keys of run 1733…; no key of that run is left in Redis"
    let removed: u64 = said
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    // `before` counted the run's lease too (`pipescope:lease:…`), one key not the run's.
    assert!(
        removed + 1 >= before && said.contains("no key of that run is left in Redis"),
        "{:?}: {before} keys were in before the signal: {said}",
        case.args
    );
    assert_eq!(after, 0, "{:?}: keys left: {stderr}", case.args);
    (before, after)
}

#[test]
fn a_signal_stops_bench_in_every_mode_and_removes_every_key_it_wrote() {
    let cases = [
        Case {
            args: &["--mode", "pipelined"],
            at: MILLION,
            signal: libc::SIGINT,
        },
        Case {
            args: &["--mode", "pipelined"],
            at: MILLION,
            signal: libc::SIGTERM,
        },
        Case {
            args: &["--mode", "transaction"],
            at: MILLION,
            signal: libc::SIGINT,
        },
        Case {
            args: &["--mode", "mset"],
            at: MILLION,
            signal: libc::SIGINT,
        },
        Case {
            args: &["--mode", "multiplexed"],
            at: MILLION,
            signal: libc::SIGTERM,
        },
        // GET: the keys are seeded first; the signal lands in the seeding.
        Case {
            args: &["--mode", "pipelined", "--command", "get"],
            at: MILLION,
            signal: libc::SIGINT,
        },
        // One round trip per command (a pool: per command per connection): 1M keys would take
        // about a minute each here, so these are signalled sooner; the cancel is checked
        // before every command all the same.
        Case {
            args: &["--mode", "sequential"],
            at: 5_000,
            signal: libc::SIGINT,
        },
        Case {
            args: &["--mode", "connections", "--connections", "8"],
            at: 20_000,
            signal: libc::SIGINT,
        },
    ];
    for case in &cases {
        let redis = LocalRedis::start().unwrap();
        stop_bench(&redis.url(), false, &[redis.url()], case);
    }
}

#[test]
fn a_signal_stops_bench_on_a_cluster_and_every_master_is_left_empty() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let masters: Vec<String> = (0..3).map(|i| cluster.node_url(i)).collect();
    let cases = [
        Case {
            args: &["--mode", "pipelined"],
            at: MILLION,
            signal: libc::SIGINT,
        },
        Case {
            args: &["--mode", "multiplexed"],
            at: MILLION,
            signal: libc::SIGTERM,
        },
        // Every key in one slot: MULTI/EXEC on that slot's master.
        Case {
            args: &["--mode", "transaction", "--keys", "one-tag"],
            at: MILLION,
            signal: libc::SIGINT,
        },
        // Each master seeded in turn.
        Case {
            args: &["--mode", "pipelined", "--command", "get"],
            at: MILLION,
            signal: libc::SIGINT,
        },
        // As on one server: a round trip per command, so signalled sooner.
        Case {
            args: &["--mode", "sequential"],
            at: 5_000,
            signal: libc::SIGINT,
        },
        Case {
            args: &["--mode", "connections", "--connections", "8"],
            at: 20_000,
            signal: libc::SIGTERM,
        },
    ];
    for case in &cases {
        stop_bench(&cluster.url(), true, &masters, case);
    }
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_prints_the_command_that_removes_what_is_left() {
    let (redis, _) = support::redis_with_password();
    let url = format!(
        "redis://:{}@127.0.0.1:{}/3",
        support::PASSWORD,
        redis.port()
    );
    let urls = [url.clone()];
    let mut run = Running::spawn(pipescope().args([
        "bench",
        "--redis-url",
        &url,
        "--count",
        COUNT,
        "--mode",
        "pipelined",
    ]));
    let before = until_keys(&urls, MILLION, &mut run);
    // Redis holds every write from now on, so the first Ctrl-C's stop cannot finish (neither
    // the batch in flight nor the cleanup): the second one always lands while it is stopping.
    let mut admin = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(60_000)
        .arg("WRITE")
        .query(&mut admin)
        .unwrap();
    run.signal(libc::SIGINT);
    run.stderr_line("Ctrl-C: stopping run");
    run.alive("the first Ctrl-C waits for the cleanup");
    run.signal(libc::SIGINT);
    let (status, stderr) = run.exit();
    let _: () = redis::cmd("CLIENT")
        .arg("UNPAUSE")
        .query(&mut admin)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains(support::PASSWORD), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("Ctrl-C again: exiting now;"))
        .unwrap_or_else(|| panic!("no second Ctrl-C message: {stderr}"));
    // The URL holds a password: the command leaves REDIS_URL to the user, and says so.
    assert!(
        line.contains("with REDIS_URL set to your Redis URL"),
        "{line}"
    );
    assert!(line.contains(":***@127.0.0.1:"), "{line}");
    let command = &line[line.rfind("pipescope clean").expect(line)..];
    let left = keys_in(&urls);
    eprintln!(
        "second Ctrl-C: {before} keys before the first, {left} left after the second; `{command}`"
    );
    assert!(
        left > 0,
        "the second Ctrl-C left nothing to remove: {stderr}"
    );

    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[..3], ["pipescope", "clean", "--run"], "{command}");
    let out = pipescope()
        .args(&words[1..])
        .env("REDIS_URL", &url)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{command}: {said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = words[3];
    // `left` counts the run's lease too (`pipescope:lease:…`, its holder gone), which clean
    // deletes but does not count among the run's keys.
    assert!(
        said.contains(&format!("removed {} keys of run {run}", group(left - 1))),
        "{said}"
    );
    assert_eq!(keys_in(&urls), 0, "{command} left keys");
}

/// `n` with thousands separated by commas, as pipescope prints counts.
fn group(n: u64) -> String {
    shared::digits::group(n)
}

#[test]
fn clean_without_a_run_removes_every_pipescope_key_and_nothing_else() {
    let redis = LocalRedis::start().unwrap();
    let mut con = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let keys = [
        "pipescope:17:k0",
        "pipescope:17:k1",
        "pipescope:{18}:k0",
        "pipescope:{18}:counter",
        "pipescope:notarun",
        "mine",
    ];
    for k in keys {
        let _: () = redis::cmd("SET").arg(k).arg(1).query(&mut con).unwrap();
    }
    let out = pipescope()
        .args(["clean", "--redis-url", &redis.url()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("removed 4 keys of pipescope's runs"),
        "{said}"
    );
    let mut left: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    left.sort();
    assert_eq!(left, ["mine", "pipescope:notarun"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_pages_run_removes_its_keys_and_serve_exits_130() {
    let redis = LocalRedis::start().unwrap();
    let urls = [redis.url()];
    let mut run =
        Running::spawn(pipescope().args(["serve", "--redis-url", &redis.url(), "--port", "0"]));
    let open = support::stdout_line(
        run.child.stdout.take().unwrap(),
        LIMIT,
        "serve prints the URL to open",
        |l| l.strip_prefix("open http://").map(str::to_string),
    );
    let ws_url = format!("ws://{}ws", open);
    let (mut ws, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();
    let count = 5_000_000;
    let start = ClientMsg::Start {
        runs: vec![RunSpec::set(count, Mode::pipelined(1000))],
    };
    ws.send(Message::text(start.to_json())).await.unwrap();
    // Read the page's frames as a page would, so the server never waits on this one.
    let reader = tokio::spawn(async move {
        let mut run = None;
        while let Some(Ok(frame)) = ws.next().await {
            if let Message::Text(t) = frame
                && let Ok(ServerMsg::RunStarted { run: id, .. }) = ServerMsg::from_json(t.as_str())
            {
                run = Some(id);
            }
        }
        run
    });
    let before = tokio::task::block_in_place(|| until_keys(&urls, MILLION, &mut run));
    run.signal(libc::SIGINT);
    let (status, stderr) = tokio::task::block_in_place(|| run.exit());
    let after = keys_in(&urls);
    eprintln!("serve, a page's pipelined run (Ctrl-C): {before} keys before, {after} after");
    let id = support::within(LIMIT, "the websocket closes", reader)
        .await
        .unwrap()
        .expect("the page saw its run start");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("pipescope: stopped by Ctrl-C: removed ")
            && stderr.contains(&format!(
                "keys of run {id}; no key of that run is left in Redis"
            )),
        "{stderr}"
    );
    assert_eq!(after, 0, "{stderr}");
}
