//! The tour's routes: `/tour/<step>` ↔ page index, and the query numbers (`?count=`,
//! `?delay=`) that adjust every step.

use super::script::STEPS;

/// A whole-number query parameter (`?count=1000&delay=100`); `1,000` reads as 1000.
pub fn query_number(search: &str, key: &str) -> Option<u64> {
    search.trim_start_matches('?').split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == key).then(|| v.replace("%2C", "").replace(',', "").parse().ok())?
    })
}

/// The steps plus the closing handout.
pub fn pages() -> usize {
    STEPS.len() + 1
}

/// `/tour` → 0, `/tour/3` → 2 (1-based in the URL), `/tour/handout` or past the end → the
/// handout. `None` for any path outside the tour.
pub fn page_from_path(path: &str) -> Option<usize> {
    let rest = path.trim_end_matches('/').strip_prefix("/tour")?;
    if rest.is_empty() {
        return Some(0);
    }
    let rest = rest.strip_prefix('/')?;
    if rest == "handout" {
        return Some(STEPS.len());
    }
    let n: usize = rest.parse().ok()?;
    Some(n.clamp(1, pages()) - 1)
}

/// The path of a page (inverse of `page_from_path`).
pub fn path_of(page: usize) -> String {
    if page >= STEPS.len() {
        "/tour/handout".to_string()
    } else {
        format!("/tour/{}", page + 1)
    }
}
