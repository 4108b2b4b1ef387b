//! The observing proxy's bounds, against a real redis-server: at most
//! `MAX_OBSERVED_CONNECTIONS` connections at once, one more refused with a RESP error the
//! client can show, room again once one closes; and connections that sit idle are never
//! closed by pipescope.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use pipescope::observe::Observer;
use shared::Network;
use shared::observe::MAX_OBSERVED_CONNECTIONS;

fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
    let s = TcpStream::connect(addr).expect("connect to the observing proxy");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    BufReader::new(s)
}

/// Sends PING and returns the reply's line.
fn ping(conn: &mut BufReader<TcpStream>) -> String {
    conn.get_mut().write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    let mut line = String::new();
    conn.read_line(&mut line)
        .expect("a reply to PING within 10 s");
    line
}

fn wait_open(observer: &Observer, want: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while observer.connections().open() != want {
        assert!(
            Instant::now() < deadline,
            "{} connections open after 10 s, expected {want}",
            observer.connections().open()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_connection_beyond_the_cap_is_refused_with_a_resp_error_and_idle_ones_stay_open() {
    let (_redis, target) = support::redis();
    let observer = Observer::start("127.0.0.1:0".parse().unwrap(), &target, Network::default())
        .await
        .expect("the observing proxy starts");
    let addr = observer.addr();

    tokio::task::spawn_blocking(move || {
        let mut idle = connect(addr);
        assert_eq!(ping(&mut idle), "+PONG\r\n");
        let mut conns: Vec<_> = (1..MAX_OBSERVED_CONNECTIONS)
            .map(|_| {
                let mut c = connect(addr);
                assert_eq!(ping(&mut c), "+PONG\r\n");
                c
            })
            .collect();
        wait_open(&observer, MAX_OBSERVED_CONNECTIONS);

        // One more: the refusal is a RESP error, then the proxy closes that connection.
        let mut refused = connect(addr);
        let mut said = String::new();
        refused
            .read_to_string(&mut said)
            .expect("the refused connection is closed within 10 s");
        assert!(
            said.starts_with("-ERR pipescope observes at most 256 connections at once"),
            "{said:?}"
        );
        assert_eq!(
            observer.connections().snapshot().len(),
            MAX_OBSERVED_CONNECTIONS
        );

        // Room again once a client closes one.
        drop(conns.pop());
        wait_open(&observer, MAX_OBSERVED_CONNECTIONS - 1);
        let mut next = connect(addr);
        assert_eq!(ping(&mut next), "+PONG\r\n");

        // The first connection sat idle through all of that and still works.
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(ping(&mut idle), "+PONG\r\n");
        let first = observer
            .connections()
            .snapshot()
            .into_iter()
            .find(|c| c.id == 1)
            .expect("the first connection is still listed");
        assert!(first.open && first.ended.is_none(), "{first:?}");
        assert_eq!(first.counts.commands, 2);
    })
    .await
    .unwrap();
}
