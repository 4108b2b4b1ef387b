//! The page's URL query: everything a run can say, so a slide links to a prepared run.
//! `?count=…&mode=sequential|pipelined|multiplexed|transaction|mset|connections&batch=…`
//! `&cmd=set|get|incr`
//! `&value=<bytes>&flush=batch|each|buffered&every=<n>&delay=<µs>&back=<µs>&jitter=<µs>`
//! `&bw=<Mbit/s>&poll=<µs>&sweep=<largest batch>&plan=run|compare|sweep|pool&presenter=1`
//! `&theme=light|dark&other=1` (`poll`: busy-poll for replies for up to that long; `other`: the
//! other client INCRs the run's counter) `&keys=one-tag` (every key under one hash tag; absent:
//! spread over slots).
//! (`mode=compare`, from older links, means `plan=compare`.) The page keeps the query in step
//! with its fields (history.replaceState). Parsing and writing are pure; the browser calls live
//! in the callers; `inputs::Form` maps the fields to and from this.

/// Query keys whose value is kept as typed (the form explains what is wrong with it).
const TEXT_KEYS: [&str; 10] = [
    "count", "batch", "value", "every", "delay", "back", "jitter", "bw", "poll", "sweep",
];

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UrlState {
    pub count: Option<String>,
    /// `sequential`, `pipelined`, `multiplexed`, `transaction` or `mset`.
    pub mode: Option<String>,
    pub batch: Option<String>,
    /// `set`, `get` or `incr`.
    pub command: Option<String>,
    /// Bytes per value.
    pub value: Option<String>,
    /// `batch`, `each` or `buffered`.
    pub flush: Option<String>,
    /// Buffered flushing: commands per write.
    pub every: Option<String>,
    /// One-way delay (out, and back unless `back` is given), µs.
    pub delay: Option<String>,
    pub back: Option<String>,
    pub jitter: Option<String>,
    /// Bandwidth cap, Mbit/s.
    pub bw: Option<String>,
    /// Busy-poll for replies for up to this many µs (absent: sleep).
    pub poll: Option<String>,
    /// The sweep's largest batch.
    pub sweep: Option<String>,
    /// The prepared button: `run`, `compare` or `sweep`.
    pub plan: Option<String>,
    pub presenter: bool,
    /// The other client runs beside a pipelined or MULTI/EXEC run of INCR.
    pub other: bool,
    /// The key layout's name (`shared::KeyLayout::name`), when not the default.
    pub keys: Option<String>,
    /// `light` or `dark`.
    pub theme: Option<String>,
    /// The presenter token, when the server needs one to start runs (kept in the URL so the
    /// presenter's link keeps working after the page rewrites its query).
    pub token: Option<String>,
}

fn decode(s: &str) -> String {
    // Only what the fields can contain needs decoding: digits, letters, `+` and `%2C`-style escapes.
    let s = s.replace('+', " ");
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        if bytes[k] == b'%'
            && k + 2 < bytes.len()
            && let Some(hex) = s.get(k + 1..k + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            k += 3;
            continue;
        }
        out.push(bytes[k]);
        k += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl UrlState {
    /// From `location.search` (with or without the leading `?`). Unknown keys are ignored.
    pub fn parse(search: &str) -> UrlState {
        let mut out = UrlState::default();
        for pair in search.trim_start_matches('?').split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode(value);
            if TEXT_KEYS.contains(&key) {
                if !value.is_empty() {
                    *out.text_mut(key) = Some(value);
                }
                continue;
            }
            match key {
                "mode" if value == "compare" => out.plan = Some(value),
                "mode" if shared::Mode::KINDS.contains(&value.as_str()) => out.mode = Some(value),
                "cmd" if ["set", "get", "incr"].contains(&value.to_ascii_lowercase().as_str()) => {
                    out.command = Some(value.to_ascii_lowercase())
                }
                "flush" if ["batch", "each", "buffered"].contains(&value.as_str()) => {
                    out.flush = Some(value)
                }
                "plan" if ["run", "compare", "sweep", "pool"].contains(&value.as_str()) => {
                    out.plan = Some(value)
                }
                "presenter" => out.presenter = matches!(value.as_str(), "1" | "true" | "on" | ""),
                "keys" if shared::KeyLayout::parse(&value).is_some() => out.keys = Some(value),
                "other" => out.other = matches!(value.as_str(), "1" | "true" | "on" | ""),
                "theme" if ["light", "dark"].contains(&value.as_str()) => out.theme = Some(value),
                "token" if !value.is_empty() => out.token = Some(value),
                _ => {}
            }
        }
        out
    }

    fn text_mut(&mut self, key: &str) -> &mut Option<String> {
        match key {
            "count" => &mut self.count,
            "batch" => &mut self.batch,
            "value" => &mut self.value,
            "every" => &mut self.every,
            "delay" => &mut self.delay,
            "back" => &mut self.back,
            "jitter" => &mut self.jitter,
            "bw" => &mut self.bw,
            "poll" => &mut self.poll,
            _ => &mut self.sweep,
        }
    }

    /// `?count=…&mode=…&batch=…[&cmd=…]…[&presenter=1][&theme=…][&token=…]`.
    pub fn to_query(&self) -> String {
        let mut parts = Vec::new();
        for (key, value) in [
            ("count", &self.count),
            ("mode", &self.mode),
            ("batch", &self.batch),
            ("cmd", &self.command),
            ("value", &self.value),
            ("flush", &self.flush),
            ("every", &self.every),
            ("delay", &self.delay),
            ("back", &self.back),
            ("jitter", &self.jitter),
            ("bw", &self.bw),
            ("poll", &self.poll),
            ("sweep", &self.sweep),
            ("plan", &self.plan),
            ("keys", &self.keys),
        ] {
            if let Some(v) = value.as_ref().filter(|v| !v.trim().is_empty()) {
                parts.push(format!("{key}={}", encode(v.trim())));
            }
        }
        if self.other {
            parts.push("other=1".to_string());
        }
        if self.presenter {
            parts.push("presenter=1".to_string());
        }
        if let Some(theme) = &self.theme {
            parts.push(format!("theme={}", encode(theme)));
        }
        if let Some(token) = &self.token {
            parts.push(format!("token={}", encode(token)));
        }
        format!("?{}", parts.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn the_other_client_is_a_flag() {
        let u = UrlState::parse("?mode=transaction&cmd=incr&other=1");
        assert!(u.other);
        assert!(u.to_query().contains("other=1"));
        assert!(!UrlState::parse("?mode=transaction").other);
    }

    #[test]
    fn the_key_layout_is_kept_by_name() {
        let u = UrlState::parse("?mode=mset&keys=one-tag");
        assert_eq!(u.keys.as_deref(), Some("one-tag"));
        assert!(u.to_query().contains("keys=one-tag"), "{}", u.to_query());
        assert_eq!(UrlState::parse("?keys=tagged").keys, None);
    }

    #[test]
    fn the_presenter_token_survives_a_rewrite() {
        let u = UrlState::parse("?count=10&token=Ab12");
        assert_eq!(u.token.as_deref(), Some("Ab12"));
        assert!(u.to_query().contains("token=Ab12"));
    }

    #[test]
    fn a_slide_link_parses() {
        let u = UrlState::parse("?count=3000&mode=compare&batch=100&presenter=1&theme=dark");
        assert_eq!(u.count.as_deref(), Some("3000"));
        assert_eq!(u.mode, None);
        assert_eq!(u.plan.as_deref(), Some("compare"));
        assert_eq!(u.batch.as_deref(), Some("100"));
        assert!(u.presenter);
        assert_eq!(u.theme.as_deref(), Some("dark"));
        assert_eq!(UrlState::parse(&u.to_query()), u);
    }

    #[test]
    fn the_pool_preset_is_a_plan_a_link_can_name() {
        let u = UrlState::parse("?count=20000&plan=pool&presenter=1");
        assert_eq!(u.plan.as_deref(), Some("pool"));
        assert_eq!(UrlState::parse(&u.to_query()), u);
        assert_eq!(UrlState::parse("?plan=pools").plan, None);
    }

    #[test]
    fn every_key_round_trips() {
        let q = "?count=5000&mode=transaction&batch=10&cmd=get&value=1024&flush=buffered&every=5\
                 &delay=30000&back=100&jitter=50&bw=0.5&sweep=256&plan=sweep&presenter=1&theme=dark&token=T";
        let u = UrlState::parse(q);
        assert_eq!(u.mode.as_deref(), Some("transaction"));
        assert_eq!(u.command.as_deref(), Some("get"));
        assert_eq!(u.bw.as_deref(), Some("0.5"));
        assert_eq!(u.back.as_deref(), Some("100"));
        assert_eq!(u.plan.as_deref(), Some("sweep"));
        assert_eq!(u.to_query(), q.replace(' ', ""));
        assert_eq!(UrlState::parse(&u.to_query()), u);
        assert_eq!(
            UrlState::parse("cmd=DEL&flush=never&plan=go"),
            UrlState::default()
        );
    }

    #[test]
    fn junk_is_ignored() {
        let u = UrlState::parse("mode=turbo&theme=neon&x=1&presenter=0&count=");
        assert_eq!(u, UrlState::default());
        assert_eq!(UrlState::parse(""), UrlState::default());
    }

    #[test]
    fn values_are_escaped() {
        let u = UrlState {
            count: Some("10 000".into()),
            ..UrlState::default()
        };
        assert_eq!(u.to_query(), "?count=10%20000");
        assert_eq!(
            UrlState::parse(&u.to_query()).count.as_deref(),
            Some("10 000")
        );
        assert_eq!(
            UrlState::parse("count=1%2C000").count.as_deref(),
            Some("1,000")
        );
    }
}
