//! The page's URL query: `?count=…&mode=sequential|pipelined|compare&batch=…&presenter=1&theme=light|dark`.
//! A slide links to a prepared demonstration; the page keeps the query in step with its fields
//! (history.replaceState). Parsing and writing are pure; the browser calls live in the callers.

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UrlState {
    pub count: Option<String>,
    /// `sequential`, `pipelined` or `compare`.
    pub mode: Option<String>,
    pub batch: Option<String>,
    pub presenter: bool,
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
            match key {
                "count" if !value.is_empty() => out.count = Some(value),
                "batch" if !value.is_empty() => out.batch = Some(value),
                "mode" if ["sequential", "pipelined", "compare"].contains(&value.as_str()) => {
                    out.mode = Some(value)
                }
                "presenter" => out.presenter = matches!(value.as_str(), "1" | "true" | "on" | ""),
                "theme" if ["light", "dark"].contains(&value.as_str()) => out.theme = Some(value),
                "token" if !value.is_empty() => out.token = Some(value),
                _ => {}
            }
        }
        out
    }

    /// `?count=…&mode=…&batch=…[&presenter=1][&theme=…]`.
    pub fn to_query(&self) -> String {
        let mut parts = Vec::new();
        for (key, value) in [
            ("count", &self.count),
            ("mode", &self.mode),
            ("batch", &self.batch),
        ] {
            if let Some(v) = value {
                parts.push(format!("{key}={}", encode(v.trim())));
            }
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
        assert_eq!(u.mode.as_deref(), Some("compare"));
        assert_eq!(u.batch.as_deref(), Some("100"));
        assert!(u.presenter);
        assert_eq!(u.theme.as_deref(), Some("dark"));
        assert_eq!(UrlState::parse(&u.to_query()), u);
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
