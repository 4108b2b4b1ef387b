//! The tour's prose as HTML: template pieces (`crate::tour::render`) with colour marks as spans
//! and every measured number a `.tour-num[data-key][data-value]` (the browser tests read them).

use leptos::prelude::*;

use crate::tour::{self, Piece};

/// Renders template pieces: marks as coloured spans, numbers as `.tour-num`.
pub fn prose(pieces: Vec<Piece>) -> impl IntoView {
    pieces
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => t.into_any(),
            Piece::Mark { class, text } => view! { <span class=class>{text}</span> }.into_any(),
            Piece::Num {
                key,
                value,
                text,
                class,
            } => view! {
                <b
                    class=format!("tour-num {}", class.unwrap_or_default())
                    data-key=key
                    data-value=value.to_string()
                >
                    {text}
                </b>
            }
            .into_any(),
        })
        .collect_view()
}

pub fn template(text: &str) -> impl IntoView + use<> {
    prose(tour::render(text, None).unwrap_or_else(|| vec![Piece::Text(text.to_string())]))
}
