use leptos::prelude::*;

use crate::connection::Connection;

/// The visible error banner: a lost connection, a refused or failed run, invalid input.
/// `#error` holds exactly the message; it exists only while there is one.
#[component]
pub fn ErrorBanner(conn: Connection) -> impl IntoView {
    move || {
        conn.banner.get().map(|message| {
            // A connection problem clears itself on reconnect; the others can be dismissed.
            let dismissable = conn.conn_error.with(Option::is_none);
            view! {
                <div class="banner" role="alert">
                    <span class="banner-icon" aria-hidden="true">"!"</span>
                    <p id="error">{message}</p>
                    {dismissable
                        .then(|| {
                            view! {
                                <button
                                    class="dismiss"
                                    aria-label="Dismiss"
                                    on:click=crate::erased::handler(move |_| conn.error.set(None))
                                >
                                    "×"
                                </button>
                            }
                        })}
                </div>
            }
        })
    }
}
