//! Removing what pipescope's runs left in a Redis: `pipescope clean` (one run's keys, or every
//! key pipescope's engine could have written), and that command spelled out for a person to
//! run (`Command`), which never shows a password.

use crate::engine::keys;
use crate::target::{RedisTarget, TargetError};

#[derive(Debug, thiserror::Error)]
pub enum CleanError {
    #[error(
        "run {0} is live: a pipescope is running it now (it holds its lease), and removes its keys itself when it ends; nothing was removed"
    )]
    Live(u64),
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// `pipescope clean`: `remove` and a sentence saying what it removed. A run that is live
/// (another pipescope's, holding its lease) is never touched.
pub async fn clean(target: &RedisTarget, run: Option<u64>) -> Result<String, CleanError> {
    if let Some(run) = run {
        let runs = std::collections::HashSet::from([run]);
        let map = match target.is_cluster() {
            true => {
                let mut seed = target.admin_connection().await?;
                Some(
                    crate::cluster::SlotMap::discover(&mut seed, &target.addr())
                        .await
                        .map_err(TargetError::from)?,
                )
            }
            false => None,
        };
        if !crate::engine::lease::live(target, map.as_ref(), &runs)
            .await?
            .is_empty()
        {
            return Err(CleanError::Live(run));
        }
    }
    let removed = remove(target, run).await?;
    let what = match run {
        Some(run) => format!("of run {run}"),
        None => "of pipescope's runs".to_string(),
    };
    Ok(format!(
        "removed {} keys {what} from {}",
        shared::digits::group(removed),
        target.shown()
    ))
}

/// Removes run `run`'s keys, or without one every `pipescope:<run>:…` key of any run that is
/// not live, from
/// `target` (on a cluster, from every master; a node of a cluster not named as one is
/// treated as its cluster). SCAN + UNLINK, never KEYS. Returns how many keys were removed.
pub async fn remove(target: &RedisTarget, run: Option<u64>) -> Result<u64, TargetError> {
    let target = match !target.is_cluster() && target.is_cluster_node().await? {
        true => target.clone().as_cluster(),
        false => target.clone(),
    };
    match run {
        Some(run) => keys::remove_run_keys(&target, run, 0).await,
        // Every run id is below the largest.
        None => keys::sweep_leftovers(&target, u64::MAX).await,
    }
}

/// `pipescope clean` as the person who started pipescope would type it against the same
/// Redis: built from the options they gave (the URL, TLS trust, --cluster).
#[derive(Debug, Clone, Default)]
pub struct Command {
    /// The URL as given; `None`: pipescope's own redis-server (or cluster), which stops with
    /// pipescope and leaves nothing.
    pub url: Option<String>,
    /// The same URL with its password hidden (`RedisTarget::redacted`), when it has one.
    pub redacted_password: Option<String>,
    pub tls_ca: Option<std::path::PathBuf>,
    pub tls_insecure: bool,
    pub cluster: bool,
}

impl Command {
    /// For the options given: `url` (`--redis-url` or `REDIS_URL`; none: pipescope's own
    /// Redis), its TLS trust, `--cluster`.
    pub fn new(url: Option<&str>, tls: crate::target::TlsOptions, cluster: bool) -> Command {
        let Some(url) = url else {
            return Command::default();
        };
        let target = RedisTarget::parse_with(url, &tls).ok();
        Command {
            tls_ca: tls.ca,
            tls_insecure: tls.insecure,
            cluster,
            ..Command::for_url(url, target)
        }
    }

    /// For `--redis-url url` (or `REDIS_URL`), parsed as `target` (`None`: it does not
    /// parse, and is then never shown, as it may hold a password).
    pub fn for_url(url: &str, target: Option<RedisTarget>) -> Command {
        let redacted = match &target {
            Some(t) => t.redacted(),
            None => "not a URL pipescope reads".to_string(),
        };
        Command {
            url: Some(url.to_string()),
            redacted_password: (target.is_none() || redacted.contains(":***@")).then_some(redacted),
            tls_ca: None,
            tls_insecure: false,
            cluster: target.is_some_and(|t| t.is_cluster()),
        }
    }

    /// What removes the keys of `runs` (every pipescope key without any), as a sentence that
    /// holds the command; the password never appears in it.
    pub fn sentence(&self, runs: &[u64]) -> String {
        let Some(url) = &self.url else {
            return "pipescope's own redis-server stops with it: nothing of pipescope's is left"
                .to_string();
        };
        let mut args = Vec::new();
        if self.redacted_password.is_none() {
            args.push(format!("--redis-url {}", quoted(url)));
        }
        if self.cluster {
            args.push("--cluster".into());
        }
        if let Some(ca) = &self.tls_ca {
            args.push(format!("--tls-ca {}", quoted(&ca.to_string_lossy())));
        }
        if self.tls_insecure {
            args.push("--tls-insecure".into());
        }
        let what = match runs {
            [] => "every key pipescope's runs wrote".to_string(),
            [run] => format!("run {run}'s keys"),
            _ => format!(
                "the keys of runs {}",
                runs.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        // One command per run: `--run` takes one.
        let commands: Vec<String> = match runs {
            [] => vec![command_line(&args, None)],
            _ => runs.iter().map(|r| command_line(&args, Some(*r))).collect(),
        };
        let command = commands.join(" && ");
        match &self.redacted_password {
            None => format!("to remove {what}: {command}"),
            Some(redacted) => format!(
                "to remove {what}, with REDIS_URL set to your Redis URL ({redacted}; its password is not printed here): {command}"
            ),
        }
    }
}

fn command_line(args: &[String], run: Option<u64>) -> String {
    let mut line = String::from("pipescope clean");
    for a in args {
        line.push(' ');
        line.push_str(a);
    }
    if let Some(run) = run {
        line.push_str(&format!(" --run {run}"));
    }
    line
}

/// `s` as one shell word: as it is when it is plain, else in single quotes.
fn quoted(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/:.@_-+=,%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_names_the_url_and_the_run_but_never_a_password() {
        let plain = RedisTarget::parse("redis://127.0.0.1:6400/2").unwrap();
        let c = Command::for_url("redis://127.0.0.1:6400/2", Some(plain));
        assert_eq!(
            c.sentence(&[17]),
            "to remove run 17's keys: pipescope clean --redis-url redis://127.0.0.1:6400/2 --run 17"
        );
        assert_eq!(
            c.sentence(&[]),
            "to remove every key pipescope's runs wrote: pipescope clean --redis-url redis://127.0.0.1:6400/2"
        );
        let secret = "redis://:hunter2@127.0.0.1:6400/0";
        let c = Command::for_url(secret, RedisTarget::parse(secret).ok());
        let s = c.sentence(&[17]);
        assert!(!s.contains("hunter2"), "{s}");
        assert!(
            s.ends_with(": pipescope clean --run 17") && s.contains("REDIS_URL"),
            "{s}"
        );
    }

    #[test]
    fn several_runs_get_a_command_each_and_odd_words_are_quoted() {
        let url = "redis://127.0.0.1:6400/0";
        let c = Command {
            tls_ca: Some("/tmp/my ca.pem".into()),
            cluster: true,
            ..Command::for_url(url, RedisTarget::parse(url).ok())
        };
        assert_eq!(
            c.sentence(&[1, 2]),
            "to remove the keys of runs 1, 2: pipescope clean --redis-url redis://127.0.0.1:6400/0 --cluster --tls-ca '/tmp/my ca.pem' --run 1 \
             && pipescope clean --redis-url redis://127.0.0.1:6400/0 --cluster --tls-ca '/tmp/my ca.pem' --run 2"
        );
    }
}
