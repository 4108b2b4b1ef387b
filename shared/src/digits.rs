//! Counts as people read them, digits grouped by thousands, with their noun in the singular
//! or the plural: one grouping for every sentence about a connection, the command line's
//! reports and the page's figures. A leaf.

/// 100000 → "100,000".
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// "1 command", "100,000 commands": `noun` takes an "s" unless `n` is 1; a noun whose plural
/// is not its singular and an "s" ("batch") is written with `count_as`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", group(n))
    }
}

/// `count` for a noun with a plural of its own: `count_as(3, "batch", "batches")`.
pub fn count_as(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", group(n))
    }
}

#[cfg(test)]
mod tests {
    use super::{count, count_as, group};

    #[test]
    fn a_count_says_its_noun_in_the_number_it_has() {
        assert_eq!(count(1, "round trip"), "1 round trip");
        assert_eq!(count(0, "round trip"), "0 round trips");
        assert_eq!(count(100_000, "SET"), "100,000 SETs");
        assert_eq!(count_as(2, "batch", "batches"), "2 batches");
    }

    #[test]
    fn digits_are_grouped_by_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group(10_000_000), "10,000,000");
    }
}
