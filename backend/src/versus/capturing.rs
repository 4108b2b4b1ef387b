//! The contenders that run beside a capture: redis-benchmark direct while pipescope captures
//! the interface live (as `observe --capture` does), or while tcpdump does (the kernel's part
//! of any capture's cost). `cost observer` reports them.

use anyhow::Context;

use crate::capture::{Live, Source};
use crate::observe::captured;

use super::tcpdump::Tcpdump;
use super::{Bench, Sample};

impl Bench<'_> {
    /// redis-benchmark direct while `Bench::capture` is captured live, as `observe --capture`
    /// does: the capture is opened before the run (so it holds every packet of it), read and
    /// analysed on a thread of its own meanwhile, stopped after it; its SETs are counted on the
    /// connections it saw. Opening and draining it are outside redis-benchmark's timing, as
    /// starting pipescope is outside an application's.
    pub(super) async fn captured(&self, count: u64, k: u32) -> anyhow::Result<Sample> {
        let interface = self.capture.context("no interface to capture")?;
        let ports = [self.port];
        let mut live = Live::open(interface, &ports)?;
        let stopper = live.stopper();
        let reading =
            tokio::task::spawn_blocking(move || captured::observe(Source::Live(&mut live), &ports));
        let sample = self.theirs(self.port, 1, count, k).await;
        // Stopped whether or not redis-benchmark succeeded: the thread ends within a second.
        stopper.store(true, std::sync::atomic::Ordering::SeqCst);
        let seen = reading.await.context("the capture's thread")??;
        let sets = seen
            .connections
            .iter()
            .flat_map(|c| &c.top_commands)
            .filter(|(name, _)| name == "SET")
            .map(|(_, n)| n)
            .sum();
        Ok(Sample {
            observed_sets: Some(sets),
            capture_dropped: Some(seen.facts.dropped + seen.facts.if_dropped),
            ..sample?
        })
    }

    /// redis-benchmark direct while tcpdump captures `Bench::capture`'s interface for its
    /// port: started before the run, stopped after it, outside redis-benchmark's timing, as
    /// pipescope's capture is (`captured`).
    pub(super) async fn tcpdumped(&self, count: u64, k: u32) -> anyhow::Result<Sample> {
        let interface = self.capture.context("no interface to capture")?;
        let tcpdump = Tcpdump::start(interface, self.port).await?;
        let sample = self.theirs(self.port, 1, count, k).await;
        let dropped = tcpdump.stop().await?;
        Ok(Sample {
            capture_dropped: Some(dropped),
            ..sample?
        })
    }
}
