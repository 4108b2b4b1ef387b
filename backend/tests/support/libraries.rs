//! Client libraries of other languages, from Debian's packages (installed by `scripts/setup
//! test`): redis-rb, phpredis, Perl's Redis.pm, redigo and hiredis, each driven by its script
//! in tests/clients/ as `PROGRAM PORT PATTERN N [HOST]`. redigo and hiredis are compiled once per test
//! binary into its temporary directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::clients::script;

/// A client library the tests drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    Ruby,
    Php,
    Perl,
    Go,
    C,
}

/// How a library's script sends N SETs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Each SET sent when the last one's reply is read.
    Loop,
    /// The library's pipeline: every SET sent before the replies are read.
    Pipeline,
    /// MULTI, the SETs, EXEC, as the library sends a transaction.
    Multi,
}

impl Pattern {
    fn arg(self) -> &'static str {
        match self {
            Pattern::Loop => "loop",
            Pattern::Pipeline => "pipeline",
            Pattern::Multi => "multi",
        }
    }
}

pub const LIBRARIES: [Library; 5] = [
    Library::Ruby,
    Library::Php,
    Library::Perl,
    Library::Go,
    Library::C,
];

impl Library {
    /// Debian's package that brings it.
    pub fn package(self) -> &'static str {
        match self {
            Library::Ruby => "ruby-redis",
            Library::Php => "php-redis",
            Library::Perl => "libredis-perl",
            Library::Go => "golang-github-gomodule-redigo-dev",
            Library::C => "libhiredis-dev",
        }
    }

    /// The client sending `n` SETs by `pattern` to `port` on loopback, or a visible skip (a
    /// failure under CI=true) when the library is missing.
    pub fn command(self, port: u16, pattern: Pattern, n: u64) -> Option<Command> {
        self.command_to("127.0.0.1", port, pattern, n)
    }

    /// The same to `host`:`port` (across a test's own network).
    pub fn command_to(self, host: &str, port: u16, pattern: Pattern, n: u64) -> Option<Command> {
        let mut c = match self {
            Library::Ruby => interpreted("ruby", &["-e", "require 'redis'"], "redis_rb.rb")?,
            Library::Php => interpreted(
                "php",
                &["-r", "exit(class_exists('Redis') ? 0 : 1);"],
                "phpredis.php",
            )?,
            Library::Perl => interpreted("perl", &["-MRedis", "-e", "1"], "redis_pm.pl")?,
            Library::Go => Command::new(built(self)?),
            Library::C => Command::new(built(self)?),
        };
        c.args([port.to_string(), pattern.arg().into(), n.to_string()])
            .arg(host);
        Some(c)
    }
}

fn missing(library: &str, package: &str) {
    super::cannot_check(&format!(
        "{library} is missing (Debian's {package}): run scripts/setup test"
    ));
}

/// `program SCRIPT` when `program CHECK…` succeeds (the library loads).
fn interpreted(program: &str, check: &[&str], file: &str) -> Option<Command> {
    let ok = Command::new(program)
        .args(check)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let lib = match program {
            "ruby" => Library::Ruby,
            "php" => Library::Php,
            _ => Library::Perl,
        };
        missing(&format!("{program} with its Redis client"), lib.package());
        return None;
    }
    let mut c = Command::new(program);
    c.arg(script(file));
    Some(c)
}

/// The compiled client of `library` (Go or C), built on first use.
fn built(library: Library) -> Option<PathBuf> {
    static GO: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static C: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("libraries");
    let made = match library {
        Library::Go => GO.get_or_init(|| {
            let out = dir.join(format!("redigo-{}", std::process::id()));
            compile(
                Command::new("go")
                    .args(["build", "-o"])
                    .arg(&out)
                    .arg(script("redigo.go"))
                    .env("GO111MODULE", "off")
                    .env("GOPATH", "/usr/share/gocode")
                    .env("GOCACHE", dir.join("gocache")),
                &out,
            )
        }),
        _ => C.get_or_init(|| {
            let out = dir.join(format!("hiredis-{}", std::process::id()));
            compile(
                Command::new("cc")
                    .arg("-O2")
                    .arg("-o")
                    .arg(&out)
                    .arg(script("hiredis.c"))
                    .arg("-lhiredis"),
                &out,
            )
        }),
    };
    match made {
        Ok(p) => Some(p.clone()),
        Err(why) => {
            missing(why, library.package());
            None
        }
    }
}

fn compile(cmd: &mut Command, out: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(out.to_path_buf()),
        Ok(o) => Err(format!(
            "building {} failed ({})",
            out.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("{:?} could not run ({e})", cmd.get_program())),
    }
}
