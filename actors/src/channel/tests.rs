use super::*;

fn update(state: TaskState, is_final: bool) -> StreamEvent {
    StreamEvent::StatusUpdate(TaskStatusUpdateEvent::new(
        TaskId::new("t-1"),
        ContextId::new("c-1"),
        TaskStatus::new(state),
        is_final,
    ))
}

fn is_final((_, event): &Published) -> bool {
    matches!(&**event, StreamEvent::StatusUpdate(u) if u.is_final)
}

#[tokio::test]
async fn a_capacity_past_the_most_is_taken_as_the_most() {
    // usize::MAX would overflow the ring's allocation and panic the stream's task.
    let channel = TaskChannel::new(TaskState::Submitted, usize::MAX);
    let mut follower = channel.subscribe();
    channel.publish(1, update(TaskState::Completed, true), None);
    assert!(is_final(&follower.recv().await.expect("the final update")));
}

#[tokio::test]
async fn the_broadcast_is_let_go_with_the_final_update_and_made_again_on_demand() {
    let channel = TaskChannel::new(TaskState::Submitted, 8);
    let mut follower = channel.subscribe();
    channel.publish(1, update(TaskState::Working, false), None);
    channel.publish(2, update(TaskState::InputRequired, true), None);

    assert!(
        channel.updates.lock().expect("not poisoned").is_none(),
        "a task waiting for input keeps no ring of updates"
    );
    assert!(!is_final(&follower.recv().await.expect("working")));
    assert!(is_final(&follower.recv().await.expect("the final update")));
    assert!(matches!(
        follower.recv().await,
        Err(broadcast::error::RecvError::Closed)
    ));
    assert_eq!(channel.watch().get(), TaskState::InputRequired);

    // The next turn is followed on a fresh broadcast.
    let mut next = channel.subscribe();
    channel.publish(3, update(TaskState::Working, false), None);
    assert!(!is_final(
        &next.recv().await.expect("the next turn's update")
    ));
}

#[tokio::test]
async fn an_ended_task_keeps_counting_its_streams_until_they_let_go() {
    let channel = TaskChannel::new(TaskState::Submitted, 8);
    let mut follower = channel.subscribe();
    channel.publish(1, update(TaskState::Failed, true), None);
    // The shutdown waits on this count for streams to take the final event.
    assert_eq!(channel.stream_count(), 1);
    assert!(is_final(&follower.recv().await.expect("the final update")));
    drop(follower);
    assert_eq!(channel.stream_count(), 0);
}

#[test]
fn an_artifact_chunk_names_what_a2a_sends_as_two_flags() {
    let flags = |chunk: ArtifactChunk| (chunk.appends(), chunk.is_last());
    assert_eq!(flags(ArtifactChunk::Whole), (false, true));
    assert_eq!(flags(ArtifactChunk::First), (false, false));
    assert_eq!(flags(ArtifactChunk::More), (true, false));
    assert_eq!(flags(ArtifactChunk::Last), (true, true));
}
