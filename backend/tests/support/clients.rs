//! The real clients the tests drive (installed by `scripts/setup test`): how to start each,
//! or a visible skip (a failure under CI=true) when it is missing, and running one to its end.
//! The scripts they run are in tests/clients/.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a client may take (they take well under a second here).
pub const CLIENT_LIMIT: Duration = Duration::from_secs(120);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .into()
}

pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name)
}

fn runs(program: &Path, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// redis-cli, or a skip (a failure under CI=true).
pub fn redis_cli() -> Option<Command> {
    if !runs(Path::new("redis-cli"), &["--version"]) {
        super::cannot_check("redis-cli is missing (Debian's redis-tools): run scripts/setup test");
        return None;
    }
    Some(Command::new("redis-cli"))
}

/// `python tests/clients/redis_py_work.py` (redis-py with work between commands) in
/// .tools/py, or a skip.
pub fn redis_py_work() -> Option<Command> {
    let python = redis_py()?;
    let mut c = Command::new(python.get_program());
    c.arg(script("redis_py_work.py"));
    Some(c)
}

/// `python tests/clients/redis_py.py` in .tools/py, or a skip.
pub fn redis_py() -> Option<Command> {
    let python = root().join(".tools/py/bin/python");
    if !runs(&python, &["-c", "import redis"]) {
        super::cannot_check("redis-py is missing from .tools/py: run scripts/setup test");
        return None;
    }
    let mut c = Command::new(python);
    c.arg(script("redis_py.py"));
    Some(c)
}

/// `python tests/clients/raw_writer.py`: plain sockets, no library (any python3).
pub fn raw_writer() -> Option<Command> {
    plain_python("raw_writer.py")
}

/// `python tests/clients/patterns.py`: clients whose way of waiting is known by construction
/// (any python3).
pub fn patterns() -> Option<Command> {
    plain_python("patterns.py")
}

/// `python tests/clients/relay.py`: a TCP relay holding each chunk for a dialled delay
/// (any python3).
pub fn relay() -> Option<Command> {
    plain_python("relay.py")
}

/// `python tests/clients/<file>` for a script needing no library, or a skip.
fn plain_python(file: &str) -> Option<Command> {
    let venv = root().join(".tools/py/bin/python");
    let python = if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    };
    if !runs(&python, &["--version"]) {
        super::cannot_check("python3 is missing: run scripts/setup test");
        return None;
    }
    let mut c = Command::new(python);
    c.arg(script(file));
    Some(c)
}

/// `node tests/clients/<script>` with .tools/node's `module`, or a skip.
pub fn node(module: &str, file: &str) -> Option<Command> {
    let modules = root().join(".tools/node/node_modules");
    if !runs(Path::new("node"), &["--version"])
        || !modules.join(module).join("package.json").exists()
    {
        super::cannot_check(&format!(
            "node or npm's {module} is missing from .tools/node: run scripts/setup test"
        ));
        return None;
    }
    let mut c = Command::new("node");
    c.arg(script(file)).env("NODE_PATH", modules);
    Some(c)
}

/// `cmd`'s program, arguments and environment, as a command of its own.
pub fn copy(cmd: &Command) -> Command {
    let mut c = Command::new(cmd.get_program());
    c.args(cmd.get_args());
    same_env(&mut c, cmd);
    c
}

/// What `from` sets and removes of the environment, set and removed on `to` too.
pub fn same_env(to: &mut Command, from: &Command) {
    for (k, v) in from.get_envs() {
        match v {
            Some(v) => to.env(k, v),
            None => to.env_remove(k),
        };
    }
}

/// A client started held: a shell waiting for a line on its stdin before it execs the
/// client, so that its pid can be given to `pipescope observe --pid` before the client does
/// anything. Killed on drop if it is still running.
pub struct Held(std::process::Child);

impl Held {
    /// `cmd`, held; its output discarded.
    pub fn start(cmd: &Command) -> Held {
        let mut sh = Command::new("sh");
        sh.args(["-c", "read go && exec \"$@\"", "sh"])
            .arg(cmd.get_program())
            .args(cmd.get_args());
        same_env(&mut sh, cmd);
        let child = sh
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sh runs");
        Held(child)
    }

    /// Its pid: the shell's now, the client's once released (exec keeps it).
    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Lets it go, and waits for its end (deadline `CLIENT_LIMIT`): how it ended.
    pub fn release(mut self, what: &str) -> std::process::Output {
        use std::io::{Read, Write};
        writeln!(self.0.stdin.take().unwrap(), "go").unwrap();
        let mut stderr = self.0.stderr.take().unwrap();
        let said = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = stderr.read_to_end(&mut s);
            s
        });
        let deadline = Instant::now() + CLIENT_LIMIT;
        let status = loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                panic!("{what}: not done within {CLIENT_LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        std::process::Output {
            status,
            stdout: Vec::new(),
            stderr: said.join().unwrap(),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// redis-py's `redis_py.py PORT NAME MODE N` for each (name, mode, n), one after the other,
/// each to its end, on a blocking thread (for an async test; redis-py checked before).
pub async fn redis_py_runs(port: u16, runs: &[(&'static str, &'static str, u64)]) {
    for &(name, mode, n) in runs {
        let mut py = redis_py().expect("redis-py, checked before");
        py.args([port.to_string(), name.into(), mode.into(), n.to_string()]);
        tokio::task::spawn_blocking(move || run(py, None, name))
            .await
            .unwrap();
    }
}

/// Runs a client to its end (deadline `CLIENT_LIMIT`); it must succeed.
pub fn run(cmd: Command, stdin: Option<&Path>, what: &str) {
    let out = finish(cmd, stdin, what);
    assert!(
        out.status.success(),
        "{what}: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `cmd` to its end (deadline `CLIENT_LIMIT`), with no input, and returns how it ended.
pub fn output_within(cmd: Command, what: &str) -> std::process::Output {
    finish(cmd, None, what)
}

/// Runs `cmd` to its end within `CLIENT_LIMIT`. Its output goes to files, so it never blocks
/// on a full pipe while we wait.
fn finish(mut cmd: Command, stdin: Option<&Path>, what: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    cmd.stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .stdin(match stdin {
            Some(path) => Stdio::from(std::fs::File::open(path).unwrap()),
            None => Stdio::null(),
        });
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{what}: {e}"));
    let deadline = Instant::now() + CLIENT_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: not done within {CLIENT_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let said = |p: &Path| std::fs::read(p).unwrap_or_default();
    std::process::Output {
        status,
        stdout: said(&out),
        stderr: said(&err),
    }
}
