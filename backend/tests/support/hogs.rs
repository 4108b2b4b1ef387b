//! A shared CPU for the tests that judge a client's timing: a busy process on each of two
//! cores, for at most a minute, stopped when dropped.

use std::process::{Child, Command, Stdio};

pub struct Hogs(Vec<Child>);

impl Hogs {
    pub fn start() -> Hogs {
        Hogs(
            (0..2)
                .map(|_| {
                    Command::new("timeout")
                        .args(["60", "sh", "-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("timeout and sh (coreutils, dash)")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for child in &mut self.0 {
            // SIGTERM, which timeout passes on to the busy loop it runs.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }
}
