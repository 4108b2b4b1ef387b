use leptos::prelude::*;

use crate::components::files::clipboard::copy_text;
use crate::connection::Connection;

/// The connection string to give the application (`redis://127.0.0.1:6380`) with a copy
/// button, while observing; and anything the server said about the address.
#[component]
pub fn ConnectBox(conn: Connection) -> impl IntoView {
    let copied = RwSignal::new(None::<bool>);
    let url = Memo::new(move |_| {
        conn.observe
            .with(|o| o.status.as_ref().map(|s| s.connect_url.clone()))
    });
    let note = move || {
        conn.observe
            .with(|o| o.status.as_ref().and_then(|s| s.note.clone()))
    };
    // Where the proxy forwards, and a warning when that is the page's own throwaway Redis.
    let forwards = move || {
        conn.observe.with(|o| {
            o.status.as_ref().filter(|s| !s.forwards_to.is_empty()).map(|s| {
                (
                    s.own_redis,
                    match s.own_redis {
                        true => format!(
                            "Its proxy forwards to {}, the page's own throwaway redis-server: your application's data is not there, and what it writes is gone when pipescope stops. Start pipescope with --redis-url to forward to your Redis.",
                            s.forwards_to
                        ),
                        false => format!(
                            "Its proxy forwards to {}, the Redis pipescope was started with (--redis-url).",
                            s.forwards_to
                        ),
                    },
                )
            })
        })
    };
    view! {
        <div class="connect-box">
            <span class="connect-label">"Point your application at"</span>
            {move || match url.get() {
                Some(u) => {
                    view! {
                        <code id="connect-url" class="connect-url">{u.clone()}</code>
                        <button
                            id="connect-copy"
                            class="small"
                            on:click=crate::erased::handler(move |_| copy_text(&u, copied))
                        >
                            "Copy"
                        </button>
                    }
                        .into_any()
                }
                None => {
                    view! {
                        <span class="connect-url off">
                            "its address appears here once observing starts"
                        </span>
                    }
                        .into_any()
                }
            }}
            {move || {
                copied
                    .get()
                    .map(|ok| {
                        view! {
                            <span class="copied" role="status">
                                {if ok { "Copied." } else { "The clipboard was refused: select the address." }}
                            </span>
                        }
                    })
            }}
            {move || {
                forwards()
                    .map(|(own, text)| {
                        view! {
                            <p
                                id="connect-forwards"
                                class=if own { "note warning" } else { "note" }
                                data-own=if own { "yes" } else { "no" }
                            >
                                {text}
                            </p>
                        }
                    })
            }}
            {move || note().map(|n| view! { <p id="connect-note" class="note">{n}</p> })}
        </div>
    }
}
