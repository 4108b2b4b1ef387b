//! Who may watch and who may start: Origin, the presenter's token, the start rate limit.

use super::*;

async fn connect_with(
    url: &str,
    origin: Option<&str>,
) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = url.into_client_request().unwrap();
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
    }
    tokio_tungstenite::connect_async(request)
        .await
        .map(|(ws, _)| ws)
}

#[tokio::test]
async fn a_page_from_another_origin_is_refused() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let same = format!("http://{}", server.addr);
    assert!(
        connect_with(&server.ws_url(), Some(&same)).await.is_ok(),
        "same origin is fine"
    );
    let Err(err) = connect_with(&server.ws_url(), Some("http://evil.example")).await else {
        panic!("a foreign Origin must be refused");
    };
    assert!(err.to_string().contains("403"), "{err}");
}

#[tokio::test]
async fn with_a_token_viewers_watch_and_only_the_presenter_starts() {
    let (_redis, target) = support::redis();
    let server = support::Server::start_with_token(target.clone(), "s3cr3t-token").await;
    let start = ClientMsg::Start {
        runs: vec![RunSpec::set(10, Mode::Sequential)],
    };

    let mut viewer = connect_with(&server.ws_url(), None).await.unwrap();
    assert!(matches!(next(&mut viewer).await, ServerMsg::Welcome { .. }));
    send(&mut viewer, &start).await;
    let ServerMsg::Rejected { reason } = next(&mut viewer).await else {
        panic!("expected Rejected")
    };
    assert!(reason.contains("only watch"), "{reason}");
    let mut wrong = connect_with(&format!("{}?token=guess", server.ws_url()), None)
        .await
        .unwrap();
    next(&mut wrong).await;
    send(&mut wrong, &start).await;
    assert!(matches!(next(&mut wrong).await, ServerMsg::Rejected { .. }));
    assert_eq!(
        support::command_calls(&target).await.get("set"),
        None,
        "nothing ran"
    );

    let mut presenter = connect_with(&format!("{}?token=s3cr3t-token", server.ws_url()), None)
        .await
        .unwrap();
    next(&mut presenter).await;
    send(&mut presenter, &start).await;
    assert!(matches!(
        next(&mut presenter).await,
        ServerMsg::RunStarted { .. }
    ));
    // The viewer watches it.
    assert!(matches!(
        next(&mut viewer).await,
        ServerMsg::RunStarted { .. }
    ));
}

#[tokio::test]
async fn starts_are_rate_limited() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let mut ws = connect(&server).await;
    let one = ClientMsg::Start {
        runs: vec![RunSpec::set(1, Mode::Sequential)],
    };
    let mut accepted = 0;
    let mut limited = false;
    for _ in 0..pipescope::server::hub::STARTS_PER_WINDOW + 1 {
        send(&mut ws, &one).await;
        // Each start either runs to the end or is refused.
        support::within(
            Duration::from_secs(60),
            "a start runs or is refused",
            async {
                loop {
                    match next(&mut ws).await {
                        ServerMsg::Finished { .. } => {
                            accepted += 1;
                            break;
                        }
                        ServerMsg::Rejected { reason } if reason.contains("too many starts") => {
                            limited = true;
                            break;
                        }
                        ServerMsg::Rejected { reason }
                            if reason.contains("already in progress") =>
                        {
                            // The previous run's plan had not quite ended: try again.
                            send(&mut ws, &one).await;
                        }
                        _ => {}
                    }
                }
            },
        )
        .await;
    }
    assert!(limited, "the start after {accepted} was refused");
    assert_eq!(accepted, pipescope::server::hub::STARTS_PER_WINDOW);
}
