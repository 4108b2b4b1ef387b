//! The `pipescope` binary as a user runs it: its jobs, Ctrl-C and SIGTERM, bad input and the
//! words that come back, recordings; and the docs held to the code (`docs_*`: links, layout
//! lists, cli.md's flags, troubleshooting.md's messages).

#[path = "../support/mod.rs"]
mod support;

mod cancel;
mod cost;
mod cost_html;
mod docs_flags;
mod docs_layout;
mod docs_links;
mod docs_troubleshooting;
mod errors;
mod help;
mod jobs;
mod recording;
mod shared_redis;
