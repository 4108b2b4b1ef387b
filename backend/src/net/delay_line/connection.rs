//! One proxied connection: its two sockets, how its directions finish, and starting them.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::ending::Ending;
use super::hooks::{Ended, Hooks};
use super::pipe::{Ends, pipe};
use crate::net::schedule::Links;
use crate::net::stats::{Direction, ProxyStats};

/// A proxied connection's two sockets, kept so dropping the proxy can end it, and how many of
/// its two directions are still running.
pub(super) struct Connection {
    pub(super) client: TcpStream,
    pub(super) server: TcpStream,
    ending: Arc<Ending>,
}

pub(super) fn connect_pair(
    client: TcpStream,
    upstream: SocketAddr,
    sockets: &Mutex<Vec<Connection>>,
) -> Result<(TcpStream, TcpStream, Arc<Ending>), (TcpStream, std::io::Error)> {
    let server = match TcpStream::connect_timeout(&upstream, Duration::from_secs(5)) {
        Ok(s) => s,
        Err(e) => return Err((client, e)),
    };
    let kept = (|| {
        for s in [&client, &server] {
            s.set_nodelay(true)?;
        }
        Ok::<_, std::io::Error>((client.try_clone()?, server.try_clone()?))
    })();
    let (client_copy, server_copy) = match kept {
        Ok(k) => k,
        Err(e) => return Err((client, e)),
    };
    let ending = Ending::new();
    let mut all = sockets.lock().expect("proxy sockets");
    // A proxy serves connection after connection: let go of finished ones' sockets.
    all.retain(|c| c.ending.live.load(Ordering::Acquire) > 0);
    all.push(Connection {
        client: client_copy,
        server: server_copy,
        ending: ending.clone(),
    });
    Ok((client, server, ending))
}

pub(super) fn spawn_directions(
    client: TcpStream,
    server: TcpStream,
    links: Links,
    stats: Arc<ProxyStats>,
    hooks: Hooks,
    ending: Arc<Ending>,
) -> std::io::Result<()> {
    let Hooks {
        client_read,
        mut to_server,
        server_read,
        mut to_client,
        ended,
        client_socket,
    } = hooks;
    *ending.hook.lock().expect("ending") = Some(ended);
    // Only observation asks for it, so a socket that cannot be cloned (no file descriptor
    // left) costs that observation the kernel's counts, not the client its connection.
    if let Some(give) = client_socket
        && let Ok(socket) = client.try_clone()
    {
        give(socket);
    }
    // Commands go to Redis before their hooks have seen them (see `Ends::write_first`); this
    // lock keeps their hooks ahead of the replies' all the same.
    let order: Arc<Mutex<()>> = Default::default();
    let (c2, s2) = (client.try_clone()?, server.try_clone()?);
    // When Redis goes, the client's side goes too, so its record ends with it.
    let client_side = client.try_clone()?;
    let stats_back = stats.clone();
    pipe(
        "proxy-out",
        Ends {
            from: client,
            to: server,
            on_source_end: None,
            closed: Ended::ByClient,
            names: ("the client", "Redis"),
            order: order.clone(),
            write_first: true,
        },
        links.out,
        ending.clone(),
        client_read,
        move |release, at, bytes| {
            stats.written(Direction::Out, release, at, bytes.len());
            to_server(release, at, bytes);
        },
    )?;
    pipe(
        "proxy-back",
        Ends {
            from: s2,
            to: c2,
            on_source_end: Some(client_side),
            closed: Ended::ByRedis,
            names: ("Redis", "the client"),
            order,
            write_first: false,
        },
        links.back,
        ending,
        server_read,
        move |release, at, bytes| {
            stats_back.written(Direction::Back, release, at, bytes.len());
            to_client(release, at, bytes);
        },
    )?;
    Ok(())
}
