//! Spellings of the previous release, rewritten to today's before parsing, each with a
//! one-line note on stderr. They keep working for one release.
//!
//! - Where Redis is (`--redis-url`, `--tls-ca`, `--tls-insecure`, `--cluster`) written before
//!   the subcommand moves after it; `replay`, which uses no Redis, drops it.
//! - `bench --against-redis-benchmark` is `versus redis-benchmark`; `bench --observe-overhead`,
//!   `--observe-rss`, `--tls-cost`, `--cluster-cost` and `--mode accuracy` are `cost observer`,
//!   `cost observer-memory`, `cost tls`, `cost cluster` and `cost accuracy`.

/// Flags of the top level (serve's) that take a value, so their value is not taken for a
/// subcommand's name.
const TOP_LEVEL_VALUED: [&str; 9] = [
    "--redis-url",
    "--tls-ca",
    "--listen",
    "--port",
    "--delay-us",
    "--jitter-us",
    "--bandwidth",
    "--token",
    "--observe-listen",
];

const SUBCOMMANDS: [&str; 8] = [
    "serve", "bench", "versus", "cost", "observe", "replay", "clean", "help",
];

/// Where Redis is: (flag, takes a value).
const TARGET_FLAGS: [(&str, bool); 4] = [
    ("--redis-url", true),
    ("--tls-ca", true),
    ("--tls-insecure", false),
    ("--cluster", false),
];

/// Today's spelling of `args` (the program's name first), and a note for each old spelling
/// rewritten.
pub fn rewrite(args: Vec<String>) -> (Vec<String>, Vec<String>) {
    let mut notes = Vec::new();
    let Some(sub) = subcommand_at(&args) else {
        return (args, notes);
    };
    let (before, after) = args.split_at(sub);
    let (mut target, mut head) = (Vec::new(), Vec::new());
    take_target_flags(before, &mut target, &mut head);
    let name = after[0].clone();
    let mut rest: Vec<String> = after[1..].to_vec();
    let mut job = vec![name.clone()];
    // Whether the job reached uses a Redis named on the command line.
    let mut uses_target = name != "replay";
    if name == "bench"
        && let Some(new) = bench_job(&mut rest)
    {
        notes.push(format!(
            "`bench {}` is now `pipescope {}`",
            new.old,
            new.job.join(" ")
        ));
        let cluster = target.iter().chain(&rest).any(|a| a == "--cluster");
        uses_target = new.takes_target || (new.job[0] == "versus" && cluster);
        job = new.job;
    }
    let written_before = !target.is_empty();
    if !uses_target {
        let mut kept = Vec::new();
        take_target_flags(&rest, &mut target, &mut kept);
        rest = kept;
    }
    if uses_target && written_before {
        notes.push(format!(
            "`{}` before `{name}` is the previous release's spelling: write it after `{name}`",
            shown(&target)
        ));
    } else if !uses_target && !target.is_empty() {
        notes.push(format!(
            "`pipescope {}` uses no Redis of yours: {} ignored (refused from the next release)",
            job.join(" "),
            shown(&target)
        ));
        target.clear();
    }
    let mut out = head;
    out.extend(job);
    out.extend(target);
    out.extend(rest);
    (out, notes)
}

/// Flags as a note shows them: a URL, which may hold a password, as `URL`.
fn shown(flags: &[String]) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut url_next = false;
    for f in flags {
        out.push(match (url_next, f.starts_with("--redis-url=")) {
            (true, _) => "URL",
            (false, true) => "--redis-url=URL",
            (false, false) => f,
        });
        url_next = f == "--redis-url";
    }
    out.join(" ")
}

/// The index of the subcommand's name, if there is one.
fn subcommand_at(args: &[String]) -> Option<usize> {
    let mut i = 1;
    while i < args.len() {
        let a = args[i].as_str();
        if SUBCOMMANDS.contains(&a) {
            return Some(i);
        }
        if !a.starts_with('-') || a == "--" {
            return None;
        }
        i += if TOP_LEVEL_VALUED.contains(&a) { 2 } else { 1 };
    }
    None
}

/// Splits `args` into the flags that say where Redis is (with their values) and the rest.
fn take_target_flags(args: &[String], target: &mut Vec<String>, rest: &mut Vec<String>) {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let flag = TARGET_FLAGS
            .iter()
            .find(|(f, _)| a == f || (a.starts_with(f) && a[f.len()..].starts_with('=')));
        match flag {
            Some((f, true)) if a == f && i + 1 < args.len() => {
                target.extend([a.clone(), args[i + 1].clone()]);
                i += 2;
                continue;
            }
            Some(_) => target.push(a.clone()),
            None => rest.push(a.clone()),
        }
        i += 1;
    }
}

struct NewJob {
    old: String,
    job: Vec<String>,
    takes_target: bool,
}

/// An old `bench` flag that chose another job: removed from `rest`, with the job it is now.
fn bench_job(rest: &mut Vec<String>) -> Option<NewJob> {
    let jobs: [(&str, &[&str], bool); 5] = [
        (
            "--against-redis-benchmark",
            &["versus", "redis-benchmark"],
            false,
        ),
        ("--observe-overhead", &["cost", "observer"], false),
        ("--observe-rss", &["cost", "observer-memory"], false),
        ("--tls-cost", &["cost", "tls"], false),
        ("--cluster-cost", &["cost", "cluster"], false),
    ];
    for (flag, job, takes_target) in jobs {
        if let Some(at) = rest.iter().position(|a| a == flag) {
            rest.remove(at);
            if flag == "--observe-rss" {
                for a in rest.iter_mut() {
                    if a == "--rss-sets" {
                        *a = "--sets".into();
                    } else if let Some(v) = a.strip_prefix("--rss-sets=") {
                        *a = format!("--sets={v}");
                    }
                }
            }
            return Some(NewJob {
                old: flag.to_string(),
                job: job.iter().map(|s| s.to_string()).collect(),
                takes_target,
            });
        }
    }
    let at = rest
        .iter()
        .position(|a| a == "--mode=accuracy")
        .map(|at| (at, 1))
        .or_else(|| {
            rest.windows(2)
                .position(|w| w[0] == "--mode" && w[1] == "accuracy")
                .map(|at| (at, 2))
        });
    let (at, n) = at?;
    rest.drain(at..at + n);
    Some(NewJob {
        old: "--mode accuracy".into(),
        job: vec!["cost".into(), "accuracy".into()],
        takes_target: true,
    })
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn rewritten(s: &str) -> (String, usize) {
        let (args, notes) = rewrite(words(s));
        (args.join(" "), notes.len())
    }

    #[test]
    fn todays_spellings_pass_unchanged() {
        for s in [
            "pipescope",
            "pipescope --port 0 --delay-us 100",
            "pipescope bench --count 10 --redis-url redis://h:1",
            "pipescope versus redis-benchmark --tls",
            "pipescope cost tls --count 300",
            "pipescope --redis-url redis://h:1",
            "pipescope replay f.json --port 0",
        ] {
            assert_eq!(rewritten(s), (s.to_string(), 0), "{s}");
        }
    }

    #[test]
    fn old_jobs_become_subcommands_with_a_note() {
        let cases = [
            (
                "pipescope bench --tls-cost --count 300",
                "pipescope cost tls --count 300",
                1,
            ),
            (
                "pipescope bench --against-redis-benchmark --tls --json",
                "pipescope versus redis-benchmark --tls --json",
                1,
            ),
            (
                "pipescope --redis-url redis://h:1 --cluster bench --against-redis-benchmark --count 100",
                "pipescope versus redis-benchmark --redis-url redis://h:1 --cluster --count 100",
                2,
            ),
            (
                "pipescope bench --observe-rss --rss-sets 5",
                "pipescope cost observer-memory --sets 5",
                1,
            ),
            (
                "pipescope bench --mode accuracy --rounds 3 --redis-url redis://h:1",
                "pipescope cost accuracy --rounds 3 --redis-url redis://h:1",
                1,
            ),
            (
                "pipescope --redis-url redis://h:1 bench --count 5",
                "pipescope bench --redis-url redis://h:1 --count 5",
                1,
            ),
            (
                "pipescope --redis-url redis://h:1 observe --listen 127.0.0.1:0",
                "pipescope observe --redis-url redis://h:1 --listen 127.0.0.1:0",
                1,
            ),
            (
                "pipescope replay --port 0 --redis-url redis://h:1 f.json",
                "pipescope replay --port 0 f.json",
                1,
            ),
            (
                "pipescope --redis-url redis://h:1 bench --tls-cost",
                "pipescope cost tls",
                2,
            ),
        ];
        for (old, new, notes) in cases {
            assert_eq!(rewritten(old), (new.to_string(), notes), "{old}");
            let (_, said) = rewrite(words(old));
            assert!(
                said.iter().all(|n| !n.contains("redis://")),
                "a note shows a URL (it may hold a password): {said:?}"
            );
        }
    }
}
