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
