// The page (../dist, built by Trunk) is embedded by rust-embed; rebuild when it changes, or
// appears, so a binary never serves a stale or missing page.
//
// `observe --pid`'s eBPF programs (src/syscalls/trace.bpf.c) are compiled here with clang and
// embedded; they need Debian's clang and libbpf-dev (its BPF headers), from scripts/setup.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=../dist");
    println!("cargo:rerun-if-changed=src/syscalls/trace.bpf.c");
    println!("cargo:rerun-if-env-changed=CLANG");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("trace.bpf.o");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    if arch != "x86_64" {
        // The programs read x86_64's registers: elsewhere pipescope is built without them,
        // and `observe --pid` says so when asked (an empty object).
        println!(
            "cargo:warning=observe --pid's eBPF programs read x86_64 registers: not built for {arch}"
        );
        std::fs::write(&out, b"").unwrap();
        return;
    }
    let clang = std::env::var("CLANG").ok().or_else(|| {
        ["clang", "clang-14"]
            .into_iter()
            .find(|c| Command::new(c).arg("--version").output().is_ok())
            .map(String::from)
    });
    let Some(clang) = clang else {
        panic!(
            "building observe --pid's eBPF programs needs clang: apt-get install clang libbpf-dev (scripts/setup)"
        );
    };
    let status = Command::new(&clang)
        // -mcpu=v3: the atomic compare-and-swap on the traced processes' filter.
        .args([
            "-O2",
            "-g",
            "-target",
            "bpf",
            "-mcpu=v3",
            "-D__TARGET_ARCH_x86",
        ])
        .arg("-I/usr/include/x86_64-linux-gnu")
        .args(["-c", "src/syscalls/trace.bpf.c", "-o"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("running {clang}: {e}"));
    if !status.success() {
        panic!(
            "{clang} could not compile src/syscalls/trace.bpf.c (its BPF headers come with libbpf-dev: scripts/setup)"
        );
    }
}
