use futures::StreamExt as _;

#[tokio::test]
async fn a_stream_ends_right_after_its_first_error() {
    let items = futures::stream::iter([Ok(1), Err("boom"), Ok(2)]);
    let seen: Vec<Result<i32, &str>> = super::end_after_error(items).collect().await;
    assert_eq!(seen, [Ok(1), Err("boom")]);
}

#[tokio::test]
async fn a_stream_without_errors_is_passed_through_whole() {
    let items = futures::stream::iter([Ok::<_, ()>(1), Ok(2), Ok(3)]);
    let seen: Vec<_> = super::end_after_error(items).collect().await;
    assert_eq!(seen, [Ok(1), Ok(2), Ok(3)]);
}
