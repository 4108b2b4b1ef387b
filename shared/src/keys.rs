//! The one key format: request `i` of run `r` writes `pipescope:<r>:k<i>`, or with the one-tag
//! layout `pipescope:{<r>}:k<i>` (every key of the run in one Redis Cluster slot). The engine
//! writes and removes keys by it (and touches nothing outside `pipescope:`), and the page
//! counts a request's bytes on the wire by it.

use serde::{Deserialize, Serialize};

/// Every key pipescope writes starts with this.
pub const PREFIX: &str = "pipescope:";

/// How a run's keys fall into Redis Cluster slots. On a single server it only changes the
/// keys' names (two bytes longer with the tag).
///
/// On the wire it is its `name` (`"spread"`, `"one-tag"`), through `String`, whose
/// (de)serialisers the page has anyway: a derived enum visitor would cost the page's WASM more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum KeyLayout {
    /// `pipescope:<run>:k<i>`: each key hashes on its own, so a run's keys spread over every
    /// slot, hence every master of a cluster.
    #[default]
    Spread,
    /// `pipescope:{<run>}:k<i>`: the run id is the keys' hash tag, so they all hash to one
    /// slot, served by one master (what MULTI/EXEC and MSET need on a cluster).
    OneTag,
}

impl KeyLayout {
    pub const ALL: [KeyLayout; 2] = [KeyLayout::Spread, KeyLayout::OneTag];

    pub fn is_spread(&self) -> bool {
        *self == KeyLayout::Spread
    }

    /// Its name in URLs and on the command line (`bench --keys`).
    pub fn name(self) -> &'static str {
        match self {
            KeyLayout::Spread => "spread",
            KeyLayout::OneTag => "one-tag",
        }
    }

    pub fn parse(s: &str) -> Option<KeyLayout> {
        KeyLayout::ALL.into_iter().find(|l| l.name() == s)
    }

    /// What a run's name adds for it: nothing for the default, `" · one hash tag"` for one
    /// tag (so the two runs of a layout comparison are told apart).
    pub fn suffix(self) -> &'static str {
        match self {
            KeyLayout::Spread => "",
            KeyLayout::OneTag => " · one hash tag",
        }
    }

    /// What the page's select says.
    pub fn label(self) -> &'static str {
        match self {
            KeyLayout::Spread => "spread over slots",
            KeyLayout::OneTag => "one hash tag {run}",
        }
    }
}

impl From<KeyLayout> for &'static str {
    fn from(l: KeyLayout) -> &'static str {
        l.name()
    }
}

impl TryFrom<String> for KeyLayout {
    type Error = String;

    fn try_from(s: String) -> Result<KeyLayout, String> {
        KeyLayout::parse(&s).ok_or_else(|| format!("unknown key layout {s:?}: spread or one-tag"))
    }
}

/// A run's namespace in the spread layout: `pipescope:<run>:`.
pub fn namespace(run: u64) -> String {
    namespace_in(run, KeyLayout::Spread)
}

/// A run's namespace: `pipescope:<run>:`, or `pipescope:{<run>}:` with one tag.
pub fn namespace_in(run: u64, layout: KeyLayout) -> String {
    match layout {
        KeyLayout::Spread => format!("{PREFIX}{run}:"),
        KeyLayout::OneTag => format!("{PREFIX}{{{run}}}:"),
    }
}

/// Request `i`'s key in the spread layout: `pipescope:<run>:k<i>`.
pub fn key(run: u64, i: u64) -> String {
    key_in(run, i, KeyLayout::Spread)
}

/// Request `i`'s key: `<namespace>k<i>`.
pub fn key_in(run: u64, i: u64, layout: KeyLayout) -> String {
    format!("{}k{i}", namespace_in(run, layout))
}

/// The one counter a run with the other client INCRs, both sides: `<namespace>counter`
/// (inside the run's namespace, so its cleanup removes it, and with one tag in the slot of
/// the run's keys).
pub fn counter(run: u64, layout: KeyLayout) -> String {
    format!("{}counter", namespace_in(run, layout))
}

/// `key_in(run, i, layout).len()`, without building the key.
pub fn key_len(run: u64, i: u64, layout: KeyLayout) -> u64 {
    let tag = match layout {
        KeyLayout::Spread => 0,
        KeyLayout::OneTag => "{}".len() as u64,
    };
    PREFIX.len() as u64 + tag + digits(run) + ":k".len() as u64 + digits(i)
}

/// The run id of one of our keys, `pipescope:<id>:…` or `pipescope:{<id>}:…`; `None` for any
/// other shape.
pub fn run_id_of(key: &[u8]) -> Option<u64> {
    let rest = key.strip_prefix(PREFIX.as_bytes())?;
    let (id, _) = match rest.strip_prefix(b"{") {
        Some(tagged) => split_at(tagged, b"}:")?,
        None => split_at(rest, b":")?,
    };
    if id.is_empty() || !id.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(id).ok()?.parse().ok()
}

/// `s` split around the first `sep`.
fn split_at<'a>(s: &'a [u8], sep: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let at = s.windows(sep.len()).position(|w| w == sep)?;
    Some((&s[..at], &s[at + sep.len()..]))
}

/// Decimal digits of `n`.
pub fn digits(n: u64) -> u64 {
    n.checked_ilog10().map_or(1, |d| d as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_length_is_the_keys() {
        for layout in KeyLayout::ALL {
            for (run, i) in [
                (0, 0),
                (7, 9),
                (7, 10),
                (1_764_701_234_567, 99_999),
                (u64::MAX, 1),
            ] {
                assert_eq!(
                    key_len(run, i, layout),
                    key_in(run, i, layout).len() as u64,
                    "{run} {i} {layout:?}"
                );
            }
        }
        assert_eq!(key(3, 42), "pipescope:3:k42");
        assert_eq!(key_in(3, 42, KeyLayout::OneTag), "pipescope:{3}:k42");
        for layout in KeyLayout::ALL {
            assert!(key_in(3, 42, layout).starts_with(&namespace_in(3, layout)));
            assert!(counter(3, layout).starts_with(&namespace_in(3, layout)));
            assert!(key_in(3, 42, layout).starts_with(PREFIX));
        }
    }

    #[test]
    fn run_ids_are_read_from_both_layouts_only() {
        assert_eq!(run_id_of(b"pipescope:42:k7"), Some(42));
        assert_eq!(run_id_of(b"pipescope:{42}:k7"), Some(42));
        assert_eq!(run_id_of(b"pipescope:{42}:counter"), Some(42));
        assert_eq!(run_id_of(b"pipescope:x:k7"), None);
        assert_eq!(run_id_of(b"pipescope:{x}:k7"), None);
        assert_eq!(run_id_of(b"pipescope:{42:k7"), None);
        assert_eq!(run_id_of(b"pipescope:42"), None);
        assert_eq!(run_id_of(b"other:42:k7"), None);
    }

    #[test]
    fn names_round_trip() {
        for l in KeyLayout::ALL {
            assert_eq!(KeyLayout::parse(l.name()), Some(l));
        }
        assert_eq!(KeyLayout::parse("tag"), None);
    }
}
