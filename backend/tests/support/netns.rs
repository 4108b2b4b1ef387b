//! A real network made by a test: two network namespaces joined by a veth pair, with
//! commands run inside either, and everything started in them ended when the test ends (a
//! panic included). No other network configuration of the host is touched.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::clients::output_within;

/// How long an `ip` command may take.
const IP_LIMIT: Duration = Duration::from_secs(30);

/// One network namespace the test created; deleted on drop, after what runs in it is killed.
pub struct Netns {
    pub name: String,
}

impl Netns {
    /// `program` run inside the namespace (`ip netns exec` execs it: the child's pid is the
    /// program's own).
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    /// `cmd` (program, arguments and environment) run inside the namespace instead.
    pub fn wrap(&self, cmd: &Command) -> Command {
        let mut c = self.command(cmd.get_program().to_str().unwrap());
        c.args(cmd.get_args());
        super::clients::same_env(&mut c, cmd);
        c
    }

    /// Runs `ip ARGS` inside the namespace; it must succeed.
    fn ip(&self, args: &[&str]) {
        let mut c = self.command("ip");
        c.args(args);
        ip_ok(c, &format!("ip netns exec {} ip {args:?}", self.name));
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // A process left inside keeps the namespace alive: end those first (ours alone: the
        // namespace is this test's).
        if let Ok(out) = Command::new("ip")
            .args(["netns", "pids", &self.name])
            .output()
        {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if let Ok(pid) = pid.parse::<i32>() {
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stderr(Stdio::null())
            .status();
    }
}

/// Two namespaces joined by a veth pair: `server` at `server_addr` on `server_if`, `client` at
/// `client_addr` on `client_if`, each with `lo` up.
pub struct Pair {
    pub server: Netns,
    pub client: Netns,
    pub server_addr: String,
    pub client_addr: String,
    pub server_if: &'static str,
    pub client_if: &'static str,
}

/// Runs an `ip` command to its end; it must succeed.
fn ip_ok(cmd: Command, what: &str) {
    let out = output_within(cmd, what);
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Pair {
    /// Creates the pair, named from this process's id and a count (unique on the host while
    /// it runs), on 10.77.N.0/24. `None` (after `cannot_check`) where namespaces cannot be
    /// made here: not root, or `ip netns` refused.
    pub fn new() -> Option<Pair> {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let seq = COUNT.fetch_add(1, Ordering::Relaxed);
        if unsafe { libc::geteuid() } != 0 {
            super::cannot_check("network namespaces need root (ip netns add)");
            return None;
        }
        let stem = format!("pipescope-{}-{seq}", std::process::id());
        let server = match create(&format!("{stem}-s"))? {
            Ok(ns) => ns,
            Err(why) => {
                super::cannot_check(&format!("ip netns add refused: {why}"));
                return None;
            }
        };
        let client = create(&format!("{stem}-c"))?
            .unwrap_or_else(|why| panic!("the second namespace, after the first: {why}"));
        // The addresses are the pair's own (no route leaves it), so N only keeps tests apart
        // in what they print.
        let n = (std::process::id() + seq) % 250 + 1;
        let pair = Pair {
            server_addr: format!("10.77.{n}.1"),
            client_addr: format!("10.77.{n}.2"),
            server_if: "veth-r",
            client_if: "veth-c",
            server,
            client,
        };
        // Both ends made inside their namespaces: no interface appears on the host.
        let mut veth = Command::new("ip");
        veth.args(["link", "add", pair.client_if, "netns", &pair.client.name])
            .args(["type", "veth", "peer", "name", pair.server_if])
            .args(["netns", &pair.server.name]);
        let out = output_within(veth, "ip link add … type veth");
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            super::cannot_check(&format!(
                "no veth pair here (ip link add … type veth): {why}"
            ));
            return None;
        }
        for (ns, dev, addr) in [
            (&pair.server, pair.server_if, &pair.server_addr),
            (&pair.client, pair.client_if, &pair.client_addr),
        ] {
            ns.ip(&["addr", "add", &format!("{addr}/24"), "dev", dev]);
            ns.ip(&["link", "set", dev, "up"]);
            ns.ip(&["link", "set", "lo", "up"]);
        }
        Some(pair)
    }
}

/// `ip netns add NAME`: the namespace, or why it was refused; `None` where `ip` is missing.
fn create(name: &str) -> Option<Result<Netns, String>> {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "add", name]);
    if Command::new("ip").arg("-V").output().is_err() {
        super::cannot_check("ip (iproute2) is not installed");
        return None;
    }
    let out = output_within(cmd, "ip netns add");
    Some(if out.status.success() {
        Ok(Netns { name: name.into() })
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

/// A child killed and reaped on drop, so a failing test leaves none behind.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
