//! How the page looks in the room: presenter mode (large type, controls tucked away) and the
//! theme (light for bright rooms, dark high-contrast). Shown as classes on `<body>`, so CSS
//! does the rest; the timeline canvas reads the same signals for its palette.

use leptos::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    Light,
    Dark,
}

impl Theme {
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn from_value(value: &str) -> Theme {
        match value {
            "dark" => Theme::Dark,
            _ => Theme::Light,
        }
    }

    pub fn other(self) -> Theme {
        match self {
            Theme::Light => Theme::Dark,
            Theme::Dark => Theme::Light,
        }
    }
}

#[derive(Clone, Copy)]
pub struct Look {
    pub presenter: RwSignal<bool>,
    pub theme: RwSignal<Theme>,
}

impl Look {
    pub fn new(presenter: bool, theme: Theme) -> Look {
        let look = Look {
            presenter: RwSignal::new(presenter),
            theme: RwSignal::new(theme),
        };
        crate::erased::effect(move || {
            let Some(body) = document().body() else {
                return;
            };
            let classes = body.class_list();
            let presenter = look.presenter.get();
            let theme = look.theme.get();
            let _ = classes.toggle_with_force("presenter", presenter);
            let _ = classes.toggle_with_force("theme-light", theme == Theme::Light);
            let _ = classes.toggle_with_force("theme-dark", theme == Theme::Dark);
        });
        look
    }

    pub fn toggle_presenter(&self) {
        self.presenter.update(|p| *p = !*p);
    }

    pub fn toggle_theme(&self) {
        self.theme.update(|t| *t = t.other());
    }

    /// Full screen on, or off again (the Fullscreen API; refused silently where not allowed).
    pub fn toggle_fullscreen(&self) {
        let doc = document();
        if doc.fullscreen_element().is_some() {
            doc.exit_fullscreen();
        } else if let Some(root) = doc.document_element() {
            let _ = root.request_fullscreen();
        }
    }
}
