//! The websocket to the backend, turned into signals. Data flows one way: a frame arrives,
//! is decoded into a `ServerMsg`, folded into the signals here; the view only reads them.
//! The only way back is `start` / `cancel` and the observe view's requests, which send a
//! `ClientMsg`.
//!
//! The socket reconnects on its own with a capped exponential backoff. A one-file page
//! (`pipescope … --html`) has no socket: the message it carries goes down the same path.

use std::time::Duration;

use leptos::logging;
use leptos::prelude::*;
use shared::{
    ClientMsg, Limits, Network, PROTOCOL_VERSION, Recording, RunSpec, ServerMsg, validate_runs,
};
use wasm_bindgen::{JsCast, closure::Closure};
use web_sys::{CloseEvent, Event, MessageEvent, WebSocket};

use crate::state::{ObserveState, ResultRow, Session, Speedup};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnStatus {
    Connecting,
    Open,
    Closed,
}

impl ConnStatus {
    /// The value of `#status[data-state]`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnStatus::Connecting => "connecting",
            ConnStatus::Open => "open",
            ConnStatus::Closed => "closed",
        }
    }
}

/// What `Welcome` told us about the server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    pub protocol: u32,
    pub server_version: String,
    pub redis_version: String,
    pub target: String,
    pub limits: Limits,
    /// The network the server was started with: the controls' initial choice.
    pub network: Network,
    /// Whether this page may start and cancel runs (a viewer without the token only watches).
    pub can_control: bool,
    /// The server replays a recording (`pipescope replay`): no Redis, nothing can run.
    pub replay: bool,
}

/// The live socket and the callbacks it holds: dropping it detaches and closes the socket, so
/// no callback can run after it is freed.
struct Live {
    ws: WebSocket,
    _on_open: Closure<dyn FnMut(Event)>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
    }
}

/// The page's whole state: signals fed by the websocket, and memos derived from them.
/// `Copy`, so every component can take it as a prop.
#[derive(Clone, Copy)]
pub struct Connection {
    pub status: RwSignal<ConnStatus>,
    /// Seconds until the next connection attempt, while closed.
    pub retry_in: RwSignal<Option<f64>>,
    pub server: RwSignal<Option<ServerInfo>>,
    pub session: RwSignal<Session>,
    /// Observe mode: the observing proxy and the connections it follows.
    pub observe: RwSignal<ObserveState>,
    /// The latest error from the server or from the page's own checks (cleared by the next
    /// start or by dismissing it).
    pub error: RwSignal<Option<String>>,
    /// Why the socket is not open, while it is not.
    pub conn_error: RwSignal<Option<String>>,

    pub busy: Memo<bool>,
    pub run_ids: Memo<Vec<u64>>,
    pub queued: Memo<usize>,
    pub results: Memo<Vec<ResultRow>>,
    pub speedup: Memo<Option<Speedup>>,
    /// What the error banner shows: a lost connection first, then anything else.
    pub banner: Memo<Option<String>>,

    /// The page is one file from disk: its data came inside it, and there is no server.
    pub file: bool,
    /// The server's answer to the capture shown (`POST /capture`), as it came: sent back to
    /// have it written as one HTML file (the server keeps none).
    pub capture_read: StoredValue<Option<String>>,

    socket: StoredValue<Option<Live>, LocalStorage>,
    failures: StoredValue<u32>,
}

impl Default for Connection {
    fn default() -> Self {
        Self::new()
    }
}

impl Connection {
    /// The signals, not yet connected (the component tests in `frontend/tests/components.rs`
    /// feed it server messages by hand).
    pub fn new() -> Self {
        let status = RwSignal::new(ConnStatus::Connecting);
        let session = RwSignal::new(Session::default());
        let error = RwSignal::new(None::<String>);
        let conn_error = RwSignal::new(None::<String>);
        let results = Memo::new(move |_| session.with(Session::results));
        Connection {
            status,
            retry_in: RwSignal::new(None),
            server: RwSignal::new(None),
            session,
            observe: RwSignal::new(ObserveState::default()),
            error,
            conn_error,
            busy: Memo::new(move |_| session.with(Session::busy)),
            run_ids: Memo::new(move |_| session.with(|s| s.runs.iter().map(|r| r.run).collect())),
            queued: Memo::new(move |_| session.with(Session::queued)),
            results,
            speedup: Memo::new(move |_| results.with(|rows| crate::state::speedup_of(rows))),
            banner: Memo::new(move |_| conn_error.get().or_else(|| error.get())),
            file: false,
            capture_read: StoredValue::new(None),
            socket: StoredValue::new_local(None),
            failures: StoredValue::new(0),
        }
    }

    /// Feeds the signals: from the messages a one-file page carries (its loader leaves them in
    /// `window.pipescopeFile`, one a line), else from the websocket.
    pub fn feed(mut self) -> Self {
        let carried = js_sys::Reflect::get(&window(), &"pipescopeFile".into())
            .ok()
            .and_then(|m| m.as_string());
        match carried {
            Some(message) => {
                self.file = true;
                self.status.set(ConnStatus::Open);
                message.lines().for_each(|m| self.receive(m));
            }
            None => self.connect(),
        }
        self
    }

    /// The limits to validate against: the server's, or the defaults before `Welcome`.
    pub fn limits(&self) -> Limits {
        self.server
            .with(|s| s.as_ref().map(|s| s.limits).unwrap_or_default())
    }

    /// `Welcome` said this page may start runs (false until it arrives).
    pub fn can_control(&self) -> bool {
        self.server
            .with(|s| s.as_ref().is_some_and(|s| s.can_control))
    }

    pub fn is_open(&self) -> bool {
        self.status.get() == ConnStatus::Open
    }

    /// `ws://host/ws` (or `wss://` behind TLS) on the host that served the page.
    pub fn url() -> String {
        let location = window().location();
        let scheme = match location.protocol().as_deref() {
            Ok("https:") => "wss",
            _ => "ws",
        };
        let host = location.host().unwrap_or_else(|_| "127.0.0.1".to_string());
        // The presenter's link carries the token that lets this page start runs.
        let search = location.search().unwrap_or_default();
        match crate::url_state::UrlState::parse(&search).token {
            Some(token) => format!(
                "{scheme}://{host}/ws?token={}",
                js_sys::encode_uri_component(&token)
            ),
            None => format!("{scheme}://{host}/ws"),
        }
    }

    /// Opens the socket (replacing any previous one). Failures schedule a retry.
    pub fn connect(self) {
        let url = Self::url();
        self.status.set(ConnStatus::Connecting);
        self.retry_in.set(None);
        let ws = match WebSocket::new(&url) {
            Ok(ws) => ws,
            Err(e) => {
                logging::warn!("websocket to {url}: {e:?}");
                self.socket.set_value(None);
                self.closed(false, &url);
                return;
            }
        };

        let on_open = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
            self.failures.set_value(0);
            self.conn_error.set(None);
            self.retry_in.set(None);
            self.status.set(ConnStatus::Open);
        });
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| match ev
            .data()
            .as_string()
        {
            Some(text) => self.receive(&text),
            None => logging::warn!("ignoring a non-text websocket frame"),
        });
        let close_url = url.clone();
        let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |_: CloseEvent| {
            let was_open = self.status.get_untracked() == ConnStatus::Open;
            self.closed(was_open, &close_url);
        });
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        self.socket.set_value(Some(Live {
            ws,
            _on_open: on_open,
            _on_message: on_message,
            _on_close: on_close,
        }));
    }

    /// The socket closed (or never opened): say so, and try again after a backoff.
    fn closed(self, was_open: bool, url: &str) {
        let failures = self.failures.get_value();
        self.failures.set_value(failures.saturating_add(1));
        let delay = backoff(failures);
        self.status.set(ConnStatus::Closed);
        self.retry_in.set(Some(delay.as_secs_f64()));
        self.session.update(Session::connection_lost);
        // The header's status shows the countdown; this message stays put while retrying.
        self.conn_error.set(Some(if was_open {
            "Lost the connection to the pipescope server. Reconnecting…".to_string()
        } else {
            format!("Cannot reach the pipescope server at {url}. Retrying…")
        }));
        set_timeout(move || self.connect(), delay);
    }

    /// One text frame from the server.
    fn receive(self, text: &str) {
        let msg = match ServerMsg::from_json(text) {
            Ok(msg) => msg,
            Err(e) => {
                logging::warn!("{e}: {text}");
                self.error.set(Some(
                    "The server sent a message this page does not understand. Reload the page?"
                        .into(),
                ));
                return;
            }
        };
        if let ServerMsg::Welcome {
            protocol,
            server_version,
            redis_version,
            target,
            limits,
            network,
            can_control,
            replay,
            ..
        } = &msg
        {
            if *protocol != PROTOCOL_VERSION {
                self.error.set(Some(format!(
                    "The server speaks protocol {protocol} but this page speaks {PROTOCOL_VERSION}: reload the page."
                )));
            }
            self.server.set(Some(ServerInfo {
                protocol: *protocol,
                server_version: server_version.clone(),
                redis_version: redis_version.clone(),
                target: target.clone(),
                limits: *limits,
                network: *network,
                can_control: *can_control,
                replay: replay.is_some(),
            }));
        }
        self.observe.update(|o| o.apply(&msg));
        let mut shown = None;
        self.session.update(|s| shown = s.apply(msg));
        if let Some(message) = shown {
            self.error.set(Some(message));
        }
    }

    /// Shows the recording the server read from `file` (its answer to `POST /recording`,
    /// `reply`) in place of the stage's runs; a file that is not one leaves the stage as it
    /// was and says why in the banner.
    pub fn open_recording(&self, file: &str, reply: &str) {
        match ServerMsg::from_json(reply) {
            Ok(ServerMsg::RecordingRead { info, runs }) => {
                self.session.update(|s| s.open_recording(info, runs));
                self.error.set(None);
            }
            Ok(ServerMsg::Rejected { reason }) => self.error.set(Some(reason)),
            Ok(_) | Err(_) => self.error.set(Some(format!(
                "Could not open {file}: the server's answer was not a recording. The page still shows what it showed before."
            ))),
        }
    }

    /// Shows the capture the server read from `file` (its answer to `POST /capture`, `reply`)
    /// in place of the observed connections; a file that is not one leaves them as they were
    /// and says why in the banner.
    /// Leaves the capture shown for the observing proxy's connections.
    pub fn back_to_live(&self) {
        self.observe.update(ObserveState::back_to_live);
        self.capture_read.set_value(None);
    }

    pub fn open_capture(&self, file: &str, reply: &str) {
        match ServerMsg::from_json(reply) {
            Ok(msg @ ServerMsg::CaptureRead { .. }) => {
                self.observe.update(|o| o.apply(&msg));
                self.capture_read.set_value(Some(reply.to_string()));
                self.error.set(None);
            }
            Ok(ServerMsg::Rejected { reason }) => self.error.set(Some(reason)),
            Ok(_) | Err(_) => self.error.set(Some(format!(
                "Could not open {file}: the server's answer was not a capture ({}). The page still shows what it showed before.",
                reply.chars().take(200).collect::<String>()
            ))),
        }
    }

    /// The stage's finished runs as a recording saved `now_ms` (unix ms). A recording shown
    /// again keeps what it says about where and by what it was measured.
    pub fn recording(&self, now_ms: u64) -> Recording {
        self.recording_of(self.session.with_untracked(Session::records), now_ms)
    }

    /// `runs` as a recording saved `now_ms`, said to be measured where the stage's were.
    pub fn recording_of(&self, runs: Vec<shared::RunRecord>, now_ms: u64) -> Recording {
        let shown = self.session.with_untracked(|s| s.recording.clone());
        let server = self.server.get_untracked();
        let (server_version, redis_version, target) = match (shown, &server) {
            (Some(r), _) => (r.server_version, r.redis_version, r.target),
            (None, Some(s)) => (
                s.server_version.clone(),
                s.redis_version.clone(),
                s.target.clone(),
            ),
            (None, None) => Default::default(),
        };
        Recording::new(
            shared::recording::rfc3339_utc(now_ms),
            server_version,
            redis_version,
            target,
            server.map(|s| s.network).unwrap_or_default(),
            runs,
        )
    }

    fn send(&self, msg: &ClientMsg) -> Result<(), String> {
        self.socket.with_value(|live| match live {
            Some(live) if live.ws.ready_state() == WebSocket::OPEN => live
                .ws
                .send_with_str(&msg.to_json())
                .map_err(|e| format!("Could not send to the server: {e:?}")),
            _ => Err("Not connected to the pipescope server.".to_string()),
        })
    }

    /// Asks the server to run `runs`, after checking them with the same rules it applies.
    pub fn start(&self, runs: Vec<RunSpec>) {
        if let Err(e) = validate_runs(&runs, &self.limits()) {
            self.error.set(Some(capitalise(&e.to_string())));
            return;
        }
        match self.send(&ClientMsg::Start { runs }) {
            Ok(()) => {
                self.error.set(None);
                self.session.update(|s| s.awaiting_start = true);
            }
            Err(e) => self.error.set(Some(e)),
        }
    }

    pub fn cancel(&self) {
        self.send_or_say(&ClientMsg::Cancel);
    }

    /// Starts the observing proxy (the presenter's page only; the server checks again), its
    /// probe on with `probe`.
    pub fn start_observing(&self, network: Network, probe: bool) {
        self.send_or_say(&ClientMsg::Observe { network, probe });
    }

    pub fn stop_observing(&self) {
        self.send_or_say(&ClientMsg::StopObserve);
    }

    /// Asks for connection `id`'s requests (they arrive as `ObservedTimeline`; a one-file
    /// page carries them all).
    pub fn want_timeline(&self, id: u64) {
        if !self.file {
            self.send_or_say(&ClientMsg::WantTimeline { id });
        }
    }

    /// Asks the server to measure connection `id`'s pipelined equivalent.
    pub fn measure_equivalent(&self, id: u64) {
        if self.send_or_say(&ClientMsg::MeasureEquivalent { id }) {
            self.observe.update(|o| o.measuring = Some(id));
        }
    }

    /// Sends `msg`, or shows why it could not be sent; returns whether it was sent.
    fn send_or_say(&self, msg: &ClientMsg) -> bool {
        match self.send(msg) {
            Ok(()) => {
                self.error.set(None);
                true
            }
            Err(e) => {
                self.error.set(Some(e));
                false
            }
        }
    }
}

/// 0.5 s, 1 s, 2 s, 4 s, then every 5 s.
fn backoff(failures: u32) -> Duration {
    Duration::from_millis((500u64 << failures.min(4)).min(5_000))
}

/// `"count must be …"` → `"Count must be …"`.
/// ASCII only: the messages are English, and Unicode's case tables would cost the page's WASM
/// ~25 KB (a non-ASCII first letter is left as it is).
pub fn capitalise(s: &str) -> String {
    let mut out = s.to_string();
    if let Some(first) = out.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn backoff_grows_then_caps() {
        let secs: Vec<f64> = (0..7).map(|n| backoff(n).as_secs_f64()).collect();
        assert_eq!(secs, [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]);
    }

    #[test]
    fn errors_read_as_sentences() {
        assert_eq!(
            capitalise("count must be between 1 and 10"),
            "Count must be between 1 and 10"
        );
    }
}
