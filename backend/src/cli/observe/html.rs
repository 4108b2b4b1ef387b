//! `observe --html FILE`: where the file goes and the page it is built from, checked before
//! anything is observed, and what was written, said after; for the proxy and a capture alike.

use anyhow::Context;

use super::super::record_to::{RecordTo, kilobytes};
use super::args::ObserveArgs;

/// Where `--html` writes, and the page it writes, checked before anything is observed.
pub(super) fn html_to(
    args: &ObserveArgs,
) -> anyhow::Result<Option<(RecordTo, pipescope::html_file::Page)>> {
    let Some(to) = &args.html else {
        return Ok(None);
    };
    Ok(Some((
        RecordTo::prepare(to, "--html")?,
        pipescope::html_file::Page::built().context("--html")?,
    )))
}

/// Says where the file went and how large it is.
pub(super) fn wrote_html(to: &RecordTo, bytes: usize) {
    eprintln!(
        "wrote {} ({}): one HTML file with the page and the connections inside; it opens from disk in a browser, with no server and no network",
        to.path.display(),
        kilobytes(bytes)
    );
}
