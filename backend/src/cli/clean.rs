//! `pipescope clean`: removes what pipescope's runs left in a Redis.

use super::args::TargetArgs;
use super::output::say;

#[derive(clap::Args)]
#[command(
    mut_arg("redis_url", |a| a.help(
        "The Redis to remove pipescope's keys from, e.g. redis://:password@host:6379/0 (needed: pipescope's own redis-server holds nothing once pipescope exits)"
    )),
    mut_arg("cluster", |a| a.help(
        "The Redis Cluster --redis-url's node belongs to: the keys are removed from every master"
    )),
)]
pub struct CleanArgs {
    /// Only the keys of this run (the id a message named); without it, every key of any run.
    #[arg(long, value_name = "ID")]
    pub run: Option<u64>,
    #[command(flatten)]
    pub target: TargetArgs,
}

pub async fn clean(args: CleanArgs) -> anyhow::Result<()> {
    if args.target.redis_url.is_none() {
        anyhow::bail!(
            "clean removes pipescope's keys from your Redis: give --redis-url (or REDIS_URL); \
             pipescope's own redis-server holds nothing once pipescope exits"
        );
    }
    let redis = args.target.connect_or("").await?;
    let said = pipescope::clean::clean(&redis.target, args.run).await?;
    say(format_args!("{said}"));
    Ok(())
}
