//! docs/cli.md against the binary's own flags: every long flag a job's `--help` prints (its
//! subcommands' too) appears in that job's section of cli.md or in the flags shared above the
//! first section, and every flag cli.md names exists on the job it names it for.
//!
//! Whose flag a mention is: a code span or command line that opens with a job (`cost tls
//! --count`, `scripts/run observe --pcap F`) names that job's; one that opens with a flag, and
//! any flag in prose, the section's job; one that opens with another tool (`redis-benchmark
//! --tls`, `tcpdump -s 0`) names none of ours.

use std::collections::{BTreeMap, BTreeSet};

use crate::support;

/// A command's `--help`.
fn help(args: &[&str]) -> String {
    let out = support::pipescope("pipescope=warn")
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The long flags of `--help`'s option lines (`  -p, --port <PORT>`, `      --json`), not
/// those its descriptions mention; `--help` and `--version` aside.
fn printed_flags(help: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in help.lines() {
        let indent = line.len() - line.trim_start().len();
        if !(1..=6).contains(&indent) || !line.trim_start().starts_with('-') {
            continue;
        }
        let spec = line.trim_start().split("  ").next().unwrap_or("");
        out.extend(flags_in(spec));
    }
    out
}

/// The subcommands `--help` lists, `help` aside.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// `--name` tokens in a text, `--help` and `--version` aside (every job has them).
fn flags_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + 2..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .collect();
        if name.starts_with(|c: char| c.is_ascii_lowercase())
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '-')
            && name != "help"
            && name != "version"
        {
            out.push(format!("--{name}"));
        }
    }
    out
}

/// Every job's flags, keyed `job` (its own and its subcommands') and `job sub`.
fn jobs() -> BTreeMap<String, BTreeSet<String>> {
    let top = help(&[]);
    let mut out = BTreeMap::new();
    for job in subcommands(&top) {
        let text = help(&[&job]);
        let mut all = printed_flags(&text);
        for sub in subcommands(&text) {
            let flags = printed_flags(&help(&[&job, &sub]));
            all.extend(flags.iter().cloned());
            out.insert(format!("{job} {sub}"), flags);
        }
        out.insert(job, all);
    }
    // `pipescope` alone serves: its flags are serve's.
    out.get_mut("serve")
        .expect("a serve job")
        .extend(printed_flags(&top));
    out
}

/// One mention of flags in cli.md: whose (`None`: the section's job) and which.
struct Mention {
    whose: Option<String>,
    flags: Vec<String>,
}

/// The flags a piece of code names, and whose they are; `None` for another tool's.
fn code_mention(code: &str, jobs: &BTreeMap<String, BTreeSet<String>>) -> Option<Mention> {
    let mut words: Vec<&str> = code.split_whitespace().collect();
    if words.first() == Some(&"sudo") {
        words.remove(0);
    }
    let ours = matches!(words.first(), Some(&"scripts/run" | &"pipescope"));
    if ours {
        words.remove(0);
    }
    let flags = flags_in(code);
    let whose = match words.first() {
        None => None,
        Some(w) if w.starts_with('-') && ours => Some("serve".to_string()),
        Some(w) if w.starts_with('-') => None,
        Some(job) if jobs.contains_key(*job) => match words.get(1) {
            Some(sub) if jobs.contains_key(&format!("{job} {sub}")) => Some(format!("{job} {sub}")),
            _ => Some(job.to_string()),
        },
        Some(_) => return None,
    };
    Some(Mention { whose, flags })
}

/// A section's mentions: its command lines (comments aside), code spans and prose.
fn mentions(section: &str, jobs: &BTreeMap<String, BTreeSet<String>>) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut prose = String::new();
    for line in section.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            let command = line.split(" #").next().unwrap_or("");
            out.extend(code_mention(command, jobs));
        } else {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    for (i, part) in prose.split('`').enumerate() {
        if i % 2 == 1 {
            out.extend(code_mention(part, jobs));
        } else {
            out.push(Mention {
                whose: None,
                flags: flags_in(part),
            });
        }
    }
    out
}

/// cli.md's sections: the text above the first `##`, then each `## \`job …\`` by its job.
fn sections() -> (String, Vec<(String, String)>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md");
    let text = std::fs::read_to_string(path).expect("docs/cli.md");
    let mut parts = text.split("\n## ");
    let shared = parts.next().unwrap_or("").to_string();
    let jobs = parts
        .map(|part| {
            let job = part
                .trim_start_matches('`')
                .split(['`', ' '])
                .next()
                .unwrap_or("")
                .to_string();
            (job, part.to_string())
        })
        .collect();
    (shared, jobs)
}

#[test]
fn docs_cli_md_names_each_jobs_flags_and_no_other() {
    let jobs = jobs();
    assert!(
        jobs.contains_key("bench") && jobs.contains_key("cost tls"),
        "jobs read from --help: {:?}",
        jobs.keys()
    );
    let (shared, sections) = sections();
    let mut wrong = Vec::new();
    // The shared flags: each exists on some job.
    let mut shared_flags = BTreeSet::new();
    for m in mentions(&shared, &jobs) {
        for flag in m.flags {
            let exists = match &m.whose {
                Some(whose) => jobs[whose].contains(&flag),
                None => jobs.values().any(|f| f.contains(&flag)),
            };
            if !exists {
                wrong.push(format!(
                    "cli.md (above the jobs) names {flag}, which {} has not",
                    m.whose.as_deref().unwrap_or("no job")
                ));
            }
            shared_flags.insert(flag);
        }
    }
    let mut documented: BTreeSet<&str> = BTreeSet::new();
    for (job, text) in &sections {
        let Some(own) = jobs.get(job) else {
            wrong.push(format!("cli.md has a section for `{job}`, which is no job"));
            continue;
        };
        documented.insert(job);
        let mut named = BTreeSet::new();
        for m in mentions(text, &jobs) {
            let whose = m.whose.unwrap_or_else(|| job.clone());
            for flag in m.flags {
                if !jobs[&whose].contains(&flag) {
                    wrong.push(format!(
                        "cli.md's `{job}` section names {flag}, which `{whose}` has not"
                    ));
                }
                if whose == *job || whose.starts_with(&format!("{job} ")) {
                    named.insert(flag);
                }
            }
        }
        for flag in own {
            if !named.contains(flag) && !shared_flags.contains(flag) {
                wrong.push(format!(
                    "`{job} --help` prints {flag}, which cli.md's `{job}` section leaves out"
                ));
            }
        }
    }
    for job in jobs.keys().filter(|k| !k.contains(' ')) {
        if !documented.contains(job.as_str()) {
            wrong.push(format!("cli.md has no section for the job `{job}`"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/cli.md drifted from --help:\n{}",
        wrong.join("\n")
    );
    println!(
        "cli.md names every flag of {} jobs' --help, and no other",
        sections.len()
    );
}

#[test]
fn docs_flags_are_read_as_meant() {
    let help = "Usage: pipescope bench [OPTIONS]\n\nOptions:\n  -c, --count <N>  SETs; see\n          --not-this one\n      --json\n  -h, --help  Print help\n";
    assert_eq!(
        printed_flags(help),
        BTreeSet::from(["--count".into(), "--json".into()])
    );
    let jobs = BTreeMap::from([
        ("cost".to_string(), BTreeSet::new()),
        ("cost tls".to_string(), BTreeSet::new()),
    ]);
    let m = code_mention("scripts/run cost tls --count 5", &jobs).unwrap();
    assert_eq!(
        (m.whose.as_deref(), m.flags),
        (Some("cost tls"), vec!["--count".to_string()])
    );
    assert!(code_mention("redis-benchmark --tls", &jobs).is_none());
    assert_eq!(code_mention("--batch N", &jobs).unwrap().whose, None);
    assert_eq!(flags_in("a — b, x--y, --flush-every n"), ["--flush-every"]);
}
