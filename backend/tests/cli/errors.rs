//! Bad inputs and the exact words a user gets back: the real binary with bad flags and URLs
//! against real redis-servers (one with a password, one with an ACL user), each message once
//! with its exit code; the same validation through the websocket; `observe --json`'s stdout
//! JSON alone; a failed pipeline said in one line; and a cluster node without --cluster.

use crate::support;

use std::process::Command;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use pipescope::cluster::LocalCluster;
use pipescope::local_redis::LocalRedis;
use pipescope::target::RedisTarget;
use shared::{ClientMsg, Command as Cmd, Flush, Mode, RunSpec, ServerMsg};
use tokio_tungstenite::tungstenite::Message;

/// `pipescope JOB --redis-url URL ARGS…` (`args`: the job, then its flags), its stderr and
/// exit code.
fn pipescope(url: &str, args: &[&str]) -> (String, i32) {
    let (job, flags) = args.split_first().expect("a job");
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .env_remove("REDIS_URL")
        .env("RUST_LOG", "pipescope=warn")
        .args([job, "--redis-url", url])
        .args(flags)
        .output()
        .expect("pipescope runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.trim().is_empty() || out.status.success(),
        "a failure printed on stdout: {stdout}"
    );
    (
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().expect("exited, not killed"),
    )
}

/// `expected` is a line of `stderr`, said once (no other line repeats its words), and the
/// only line of the error.
fn assert_said_once(what: &str, stderr: &str, expected: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.iter().filter(|l| **l == expected).count(),
        1,
        "{what}: expected the line\n  {expected}\nonce in stderr:\n{stderr}"
    );
    let words = expected.split_once(": ").map_or(expected, |(_, rest)| rest);
    let words = &words[..words.len().min(40)];
    assert_eq!(
        stderr.matches(words).count(),
        1,
        "{what}: said more than once:\n{stderr}"
    );
}

#[test]
fn bad_flags_and_urls_are_refused_once_in_words_that_name_the_fix() {
    let plain = LocalRedis::start().expect("redis-server");
    let locked = LocalRedis::start_with_args(&["--requirepass", "hunter2"]).expect("redis-server");
    let acl = LocalRedis::start().expect("redis-server");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut con = support::admin(&RedisTarget::parse(&acl.url()).unwrap()).await;
        let () = redis::cmd("ACL")
            .arg(&["SETUSER", "alice", "on", ">wonder", "~*", "&*", "+@all"][..])
            .query_async(&mut con)
            .await
            .unwrap();
    });
    let (p, l, a) = (plain.port(), locked.port(), acl.port());
    let free = pipescope::local_redis::free_port().unwrap();
    let plain_url = format!("redis://127.0.0.1:{p}");
    let locked_at = format!("127.0.0.1:{l}");
    let bench = |extra: &[&'static str]| {
        let mut args = vec!["bench", "--count", "100"];
        args.extend_from_slice(extra);
        args
    };
    let clap = |flag: &str, value: &str, lo: &str, hi: &str| {
        (
            format!(
                "error: invalid value '{value}' for '{flag} <{}>': must be a whole number from {lo} to {hi}",
                flag.trim_start_matches('-')
                    .replace('-', "_")
                    .to_uppercase()
            ),
            2,
        )
    };
    let ours = |message: String| (format!("pipescope: {message}"), 1);
    let rows: Vec<(String, Vec<&str>, (String, i32))> = vec![
        (
            format!("redis://{locked_at}"),
            bench(&[]),
            ours(format!("Redis at {locked_at} asks for a password: put it in the URL, redis://:PASSWORD@{locked_at} (or redis://USER:PASSWORD@{locked_at} for an ACL user)")),
        ),
        (
            format!("redis://:wrong@{locked_at}"),
            bench(&[]),
            ours(format!("Redis at {locked_at} refused the password: check it in the URL, redis://:PASSWORD@{locked_at} (an ACL user's as redis://USER:PASSWORD@{locked_at})")),
        ),
        (
            format!("redis://alice:bad@127.0.0.1:{a}"),
            bench(&[]),
            ours(format!("Redis at 127.0.0.1:{a} refused user \"alice\" with that password: check both in the URL, redis://USER:PASSWORD@127.0.0.1:{a}")),
        ),
        (
            format!("redis://bob:wonder@127.0.0.1:{a}"),
            bench(&[]),
            ours(format!("Redis at 127.0.0.1:{a} refused user \"bob\" with that password: check both in the URL, redis://USER:PASSWORD@127.0.0.1:{a}")),
        ),
        (
            format!("redis://:hunter2@127.0.0.1:{p}"),
            bench(&[]),
            ours(format!("Redis at 127.0.0.1:{p} has no password set, but the URL gives one: drop it, redis://127.0.0.1:{p}")),
        ),
        (
            format!("redis://127.0.0.1:{p}/99"),
            bench(&[]),
            ours(format!("Redis at 127.0.0.1:{p} has no database 99: it has 16 (0–15); choose one of those after the last / of the URL, e.g. redis://127.0.0.1:{p}/0")),
        ),
        (
            format!("redis://alice:wonder@127.0.0.1:{a}/16"),
            bench(&[]),
            ours(format!("Redis at 127.0.0.1:{a} has no database 16: it has 16 (0–15); choose one of those after the last / of the URL, e.g. redis://127.0.0.1:{a}/0")),
        ),
        (
            "redis://:hunter2@127.0.0.1:99999".into(),
            bench(&[]),
            ours("port 99999 is out of range (1–65535)".into()),
        ),
        (
            "redis://127.0.0.1:0".into(),
            bench(&[]),
            ours("port 0 is out of range (1–65535)".into()),
        ),
        (
            "redis://127.0.0.1:63x9".into(),
            bench(&[]),
            ours("the port must be a number: 63x9".into()),
        ),
        (
            format!("redis://:hunter2@127.0.0.1:{p}/abc"),
            bench(&[]),
            ours("the database must be a number (0, 1, …) after the last /: abc".into()),
        ),
        (
            format!("http://:hunter2@127.0.0.1:{p}"),
            bench(&[]),
            ours("the URL must start with redis:// or rediss://, not http://".into()),
        ),
        (
            format!("127.0.0.1:{p}"),
            bench(&[]),
            ours("not a Redis URL: it must start with redis:// or rediss://, e.g. redis://127.0.0.1:6379".into()),
        ),
        (
            format!("redis://:hunter2@:{p}"),
            bench(&[]),
            ours("the URL names no host: say redis://HOST:PORT, e.g. redis://127.0.0.1:6379".into()),
        ),
        (
            format!("redis://[::1:{p}"),
            bench(&[]),
            ours("the IPv6 address in the URL has no closing ]: say redis://[ADDRESS]:PORT".into()),
        ),
        (
            format!("redis://[::1]:{free}"),
            bench(&[]),
            ours(format!("cannot reach Redis at [::1]:{free}: Connection refused (os error 111). Is redis-server running there? Check the address, or omit --redis-url to use pipescope's own local redis-server")),
        ),
        (
            plain_url.clone(),
            bench(&["--tls-insecure"]),
            ours("--tls-ca and --tls-insecure only apply to rediss:// URLs".into()),
        ),
        (plain_url.clone(), bench(&["--mode", "sweep", "--max-batch", "0"]), clap("--max-batch", "0", "2", "100000")),
        (plain_url.clone(), bench(&["--mode", "sweep", "--max-batch", "1000000"]), clap("--max-batch", "1000000", "2", "100000")),
        (plain_url.clone(), bench(&["--batch", "100000000000"]), clap("--batch", "100000000000", "1", "100000")),
        (plain_url.clone(), bench(&["--batch", "0"]), clap("--batch", "0", "1", "100000")),
        (plain_url.clone(), vec!["bench", "--count", "0"], clap("--count", "0", "1", "10000000")),
        (plain_url.clone(), vec!["bench", "--count", "1e6"], clap("--count", "1e6", "1", "10000000")),
        (plain_url.clone(), bench(&["--value-bytes", "0"]), clap("--value-bytes", "0", "1", "1048576")),
        (plain_url.clone(), bench(&["--busy-poll-us", "60000000"]), (
                "error: invalid value '60000000' for '--busy-poll-us <US>': must be a whole number from 1 to 10000".into(),
                2,
            )),
        (plain_url.clone(), bench(&["--delay-us", "2000000"]), clap("--delay-us", "2000000", "0", "1000000")),
        (plain_url.clone(), bench(&["--bandwidth", "5"]), clap("--bandwidth", "5", "1000", "100000000000")),
        (plain_url.clone(), bench(&["--mode", "connections", "--connections", "0"]), clap("--connections", "0", "1", "256")),
        (
            plain_url.clone(),
            bench(&["--mode", "sweep", "--max-batch", "100000"]),
            ours("--mode sweep --max-batch 100000 --count 100: a sweep up to batch 100000 needs at least 100000 commands per run (one whole batch), got 100: raise the count or lower the largest batch".into()),
        ),
        (
            plain_url.clone(),
            bench(&["--mode", "sweep", "--max-batch", "999"]),
            ours("--mode sweep --max-batch 999 --count 100: a sweep up to batch 500 needs at least 500 commands per run (one whole batch), got 100: raise the count or lower the largest batch".into()),
        ),
        (
            plain_url.clone(),
            bench(&["--mode", "pipelined", "--batch", "1000"]),
            ours("a batch of 1,000 needs at least 1,000 commands (one whole batch), got 100: raise the count or lower the batch".into()),
        ),
        (
            plain_url.clone(),
            bench(&["--mode", "mset", "--other-client", "--command", "get"]),
            ours("--other-client INCRs one shared counter, so the runs INCR it too, not GET: drop --command get".into()),
        ),
        (
            plain_url.clone(),
            bench(&["--mode", "sequential", "--other-client"]),
            ours("--other-client shares its counter with a pipelined or MULTI/EXEC run, and --mode sequential has none: use --mode pipelined, transaction or compare".into()),
        ),
        (
            plain_url.clone(),
            bench(&["--mode", "multiplexed", "--other-client"]),
            ours("--other-client shares its counter with a pipelined or MULTI/EXEC run, and --mode multiplexed has none: use --mode pipelined, transaction or compare".into()),
        ),
        (
            plain_url.clone(),
            bench(&["--mode", "mset", "--command", "incr"]),
            ours("INCR has no one-command-many-keys form; use SET or GET with MSET mode".into()),
        ),
        (
            plain_url.clone(),
            bench(&["--mode", "pipelined", "--flush", "every", "--flush-every", "2000"]),
            // The default batch: the count (100), below 1,000.
            ours("flush every 2000 commands must be between 1 and the batch (100)".into()),
        ),
        (
            plain_url.clone(),
            vec!["bench", "--count", "10000000", "--value-bytes", "1000"],
            ours("count × value size is 10000000000 bytes, more than the 536870912 bytes one run may store; lower the count or the value size".into()),
        ),
    ];
    assert!(rows.len() >= 25, "{} rows", rows.len());
    let mut table = String::new();
    for (url, args, (expected, code)) in &rows {
        let what = format!("{url} {}", args.join(" "));
        let (stderr, got) = pipescope(url, args);
        assert_said_once(&what, &stderr, expected);
        assert_eq!(got, *code, "{what}: exit code\n{stderr}");
        for secret in ["hunter2", "wonder", "wrong"] {
            assert!(
                !stderr.contains(secret) || !url.contains(secret),
                "{what}: the password is echoed:\n{stderr}"
            );
        }
        table += &format!("| `{what}` | {expected} | {code} |\n");
    }
    eprintln!("{table}");
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn next(ws: &mut Ws) -> ServerMsg {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(60), ws.next())
            .await
            .expect("a message within 60 s")
            .expect("the socket stays open")
            .expect("a frame");
        match frame {
            Message::Text(t) => return ServerMsg::from_json(t.as_str()).unwrap(),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

/// The page's validation (shared's, which the page runs before sending) and the server's
/// Rejected reason say the same words; the CLI's cross-field refusals are these words too.
#[tokio::test]
async fn the_websocket_rejects_bad_runs_with_the_shared_words() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(server.ws_url())
        .await
        .unwrap();
    assert!(matches!(next(&mut ws).await, ServerMsg::Welcome { .. }));
    let limits = shared::Limits::DEFAULT;
    let spec = |count, mode| RunSpec::set(count, mode);
    let rows: Vec<(RunSpec, &str)> = vec![
        (
            spec(0, Mode::Sequential),
            "count must be between 1 and 10000000, got 0",
        ),
        (
            spec(10, Mode::pipelined(0)),
            "batch must be between 1 and 100000, got 0",
        ),
        (
            spec(10, Mode::Multiplexed { in_flight: 100_001 }),
            "in-flight requests must be between 1 and 100000, got 100001",
        ),
        (
            spec(
                10,
                Mode::Pipelined {
                    batch: 10,
                    flush: Flush::Buffered { commands: 11 },
                },
            ),
            "flush every 11 commands must be between 1 and the batch (10)",
        ),
        (
            RunSpec {
                command: Cmd::Incr,
                ..spec(10, Mode::Mset { batch: 5 })
            },
            "INCR has no one-command-many-keys form; use SET or GET with MSET mode",
        ),
        (
            RunSpec {
                command: Cmd::Get,
                ..RunSpec::with_other_client(10, Mode::pipelined(5))
            },
            "the other client INCRs one counter shared with a pipelined or MULTI/EXEC run of INCRs; got GET in pipelined mode: choose INCR and pipelined or MULTI/EXEC",
        ),
        (
            RunSpec::with_other_client(10, Mode::Sequential),
            "the other client INCRs one counter shared with a pipelined or MULTI/EXEC run of INCRs; got INCR in sequential mode: choose INCR and pipelined or MULTI/EXEC",
        ),
        (
            RunSpec {
                value_bytes: Some(0),
                ..spec(10, Mode::Sequential)
            },
            "value size must be between 1 and 1048576 bytes, got 0",
        ),
        (
            spec(10, Mode::Transaction { batch: 100 }),
            "a batch of 100 needs at least 100 commands (one whole batch), got 10: raise the count or lower the batch",
        ),
    ];
    for (run, words) in rows {
        // The page's own check, before sending.
        let page = shared::validate_runs(&[run], &limits)
            .unwrap_err()
            .to_string();
        let start = ClientMsg::Start { runs: vec![run] };
        ws.send(Message::text(start.to_json())).await.unwrap();
        let ServerMsg::Rejected { reason } = next(&mut ws).await else {
            panic!("expected Rejected for {run:?}")
        };
        assert_eq!(reason, format!("invalid request: {words}"), "{run:?}");
        assert_eq!(page, words, "{run:?}");
    }
    // A sweep the page plans: the same refusal as `bench --mode sweep`.
    let sweep = shared::sweep::plan(100_000, 100, 3, &limits).unwrap_err();
    assert_eq!(
        sweep.to_string(),
        "a sweep up to batch 100000 needs at least 100000 commands per run (one whole batch), got 100: raise the count or lower the largest batch"
    );
    assert_eq!(
        support::command_calls(&target).await.get("set"),
        None,
        "nothing ran"
    );
}

/// `observe --json`: stdout is the JSON report and nothing else; the address is on stderr.
#[test]
fn observe_json_prints_json_alone_on_stdout() {
    let (redis, _target) = support::redis();
    let mut observe =
        support::observe::Observe::start(&redis.url(), &["--json", "--no-equivalent"]);
    let mut app = redis::Client::open(format!("redis://{}", observe.addr))
        .unwrap()
        .get_connection()
        .unwrap();
    let () = redis::cmd("SET").arg("k").arg("v").query(&mut app).unwrap();
    drop(app);
    let out = observe.interrupt(Duration::from_secs(60));
    let report: serde_json::Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("stdout is not JSON alone ({e}):\n{out}"));
    assert!(report.as_array().is_some_and(|a| !a.is_empty()), "{report}");
}

/// A pipeline in which many commands failed is one line: the first failure and how many.
#[tokio::test]
async fn many_failures_are_one_line_with_the_first_and_a_count() {
    let (_redis, target) = support::redis();
    let mut con = support::admin(&target).await;
    let () = redis::cmd("SET")
        .arg("s")
        .arg("text")
        .query_async(&mut con)
        .await
        .unwrap();
    let mut pipe = redis::pipe();
    for _ in 0..335 {
        pipe.cmd("INCR").arg("s");
    }
    let error = pipe.query_async::<Vec<i64>>(&mut con).await.unwrap_err();
    assert!(
        error.to_string().len() > 10_000,
        "redis-rs lists every failure"
    );
    let said = pipescope::target::TargetError::Redis {
        addr: target.addr(),
        error,
    }
    .to_string();
    assert_eq!(
        said,
        format!(
            "Redis at {}: 335 commands failed; the first (command 1): ERR value is not an integer or out of range",
            target.addr()
        )
    );
}

/// A cluster node taken as a single server is refused at start-up, naming --cluster.
#[test]
fn a_cluster_node_without_cluster_names_the_flag() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let node = cluster.node_url(0);
    let addr = node.trim_start_matches("redis://").trim_end_matches('/');
    let expected = format!(
        "pipescope: Redis at {addr} is a Redis Cluster node: add --cluster to run against its cluster (as redis-cli -c does)"
    );
    let (stderr, code) = pipescope(&node, &["bench", "--count", "100"]);
    assert_said_once("bench on a cluster node", &stderr, &expected);
    assert_eq!(code, 1);
    // With --cluster the same node runs, and no key is left.
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .env_remove("REDIS_URL")
        .args([
            "bench",
            "--cluster",
            "--redis-url",
            &node,
            "--count",
            "100",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A MOVED reply met mid-run (the node's slots moved under the engine) names it too.
    let refused = pipescope::engine::EngineError::Refused {
        index: 1,
        message: format!("MOVED 6286 {addr}"),
    };
    assert_eq!(
        refused.to_string(),
        format!(
            "Redis refused request 1: MOVED 6286 {addr}. This is a Redis Cluster node: add --cluster to run against its cluster"
        )
    );
}

/// A capture file that is not there is said once, alone: no word of reading it first.
#[test]
fn a_missing_capture_file_is_said_alone() {
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--pcap", "/nonexistent/redis.pcap"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "pipescope: cannot read the capture /nonexistent/redis.pcap: No such file or directory (os error 2)"
    );
    assert!(out.stdout.is_empty());
}
