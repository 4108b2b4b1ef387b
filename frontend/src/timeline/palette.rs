//! The timeline's colours: one palette per theme, and the lighter shade a long run's sampled
//! part is drawn in.

/// Colours of one theme.
pub struct Palette {
    pub background: &'static str,
    pub ink: &'static str,
    pub muted: &'static str,
    pub grid: &'static str,
    pub lane: &'static str,
    pub band: [&'static str; 2],
    pub playhead: &'static str,
    /// (request, reply) per mode: sequential, pipelined, other.
    pub seq: (&'static str, &'static str),
    pub pipe: (&'static str, &'static str),
    /// The other client's INCRs: (between the run's batches, inside one).
    pub other: (&'static str, &'static str),
}

pub const LIGHT: Palette = Palette {
    background: "#ffffff",
    ink: "#0f1722",
    muted: "#556070",
    grid: "#e6e9ee",
    lane: "#98a2b1",
    band: ["rgba(11,122,117,0.10)", "rgba(29,78,216,0.08)"],
    playhead: "#1d4ed8",
    seq: ("#d9480f", "#8f2d06"),
    pipe: ("#0b7a75", "#1d4ed8"),
    other: ("#7c8695", "#e11d48"),
};

pub const DARK: Palette = Palette {
    background: "#0b0f15",
    ink: "#f4f7fb",
    muted: "#aab4c3",
    grid: "#1f2732",
    lane: "#6b7686",
    band: ["rgba(45,212,191,0.16)", "rgba(96,165,250,0.14)"],
    playhead: "#facc15",
    seq: ("#ff8a4c", "#ffd166"),
    pipe: ("#2dd4bf", "#60a5fa"),
    other: ("#8b95a5", "#fb7185"),
};

/// How much of its colour the sampled part of a long run keeps (the rest is background). A
/// colour, not an alpha: thousands of overlapping translucent lines add up to full strength.
pub(super) const SAMPLED_STRENGTH: f64 = 0.3;

/// `colour` kept at `strength` (0..=1) over `background`, both `#rrggbb`: `#rrggbb` again.
/// Anything else comes back unchanged.
pub(super) fn fade(colour: &str, background: &str, strength: f64) -> String {
    let rgb = |c: &str| -> Option<[f64; 3]> {
        let hex = c.strip_prefix('#').filter(|h| h.len() == 6)?;
        let ch = |k: usize| u8::from_str_radix(&hex[k..k + 2], 16).ok().map(f64::from);
        Some([ch(0)?, ch(2)?, ch(4)?])
    };
    let (Some(c), Some(b)) = (rgb(colour), rgb(background)) else {
        return colour.to_string();
    };
    let mix = |k: usize| (b[k] + (c[k] - b[k]) * strength.clamp(0.0, 1.0)).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn a_faded_colour_lies_between_the_colour_and_the_background() {
        assert_eq!(fade("#1d4ed8", "#ffffff", 1.0), "#1d4ed8");
        assert_eq!(fade("#1d4ed8", "#ffffff", 0.0), "#ffffff");
        assert_eq!(fade("#000000", "#ffffff", 0.3), "#b3b3b3");
        assert_eq!(fade("rgba(0,0,0,1)", "#ffffff", 0.3), "rgba(0,0,0,1)");
    }
}
