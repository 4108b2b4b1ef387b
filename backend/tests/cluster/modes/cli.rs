//! `bench --keys` on a cluster: one tag runs MULTI/EXEC on one master; spread says why not.

#[test]
fn bench_keys_one_tag_runs_multi_exec_on_one_master_and_spread_says_why_not() {
    let bench = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"))
            .env_remove("REDIS_URL")
            .env("RUST_LOG", "warn")
            .args([
                "bench",
                "--cluster",
                "--mode",
                "transaction",
                "--count",
                "1000",
            ])
            .args(["--batch", "100"])
            .args(args)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    };
    let (ok, stdout, stderr) = bench(&["--keys", "one-tag"]);
    assert!(ok, "{stderr}");
    let shares = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("per master: "))
        .expect(&stdout);
    let (masters, _) = shares.split_once("; ").expect(shares);
    let mut per: Vec<&str> = masters
        .split(" · ")
        .map(|m| m.split_once(' ').unwrap().1)
        .collect();
    per.sort_unstable();
    assert_eq!(
        per,
        [
            "0 cmds in 0 round trips",
            "0 cmds in 0 round trips",
            "1000 cmds in 10 round trips"
        ],
        "{shares}"
    );
    let (ok, stdout, stderr) = bench(&["--keys", "one-tag", "--format", "json"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains(r#""keys":"one-tag""#), "{stdout}");
    let (ok, _, stderr) = bench(&[]);
    assert!(!ok);
    assert!(stderr.contains("--keys one-tag"), "{stderr}");
    let (ok, _, stderr) = bench(&["--keys", "tagged"]);
    assert!(!ok && stderr.contains("spread or one-tag"), "{stderr}");
}
