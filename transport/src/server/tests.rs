//! The serving loop's own settings.

#[tokio::test]
async fn accepted_connections_have_nodelay_set() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let _client = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    let (accepted, _) = listener.accept().await.expect("accept");
    super::set_nodelay(&accepted);
    assert!(accepted.nodelay().expect("read TCP_NODELAY"));
}

#[test]
fn the_connection_cap_never_exceeds_the_open_file_limit() {
    let Some(limit) = super::conn::open_file_limit() else {
        // Not Linux: the limit cannot be read without `unsafe`, and the cap stands.
        assert_eq!(super::conn::within_fd_limit(10), 10);
        return;
    };
    assert!(super::conn::within_fd_limit(usize::MAX) < limit);
    assert_eq!(super::conn::within_fd_limit(1), 1);
}
