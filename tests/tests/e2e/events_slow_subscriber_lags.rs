//! The event bus: a subscriber that falls behind is told how many events it missed
//! (`Received::Lagged`) and then reads on from the newest ones; it never blocks the
//! runtime, and every event it does get is a complete, typed event.

use std::time::Duration;

use agentyard::{AgentDescriptor, EventKind, Message, Received, Runtime, TaskState};
use agentyard_tests::{Echo, within};
use futures::{FutureExt, StreamExt};

const CAPACITY: usize = 4;
const SENDS: usize = 20;
/// initiated, status submitted, working and completed, the response, send.completed.
const EVENTS_PER_SEND: usize = 6;

#[tokio::test]
async fn a_subscriber_that_never_reads_lags_and_does_not_block_the_runtime() {
    let runtime = Runtime::builder()
        .event_capacity(CAPACITY)
        .agent(AgentDescriptor::new("echo"), |_| Echo::default())
        .build()
        .await
        .expect("runtime starts");
    let mut slow = runtime.subscribe();

    // The sends emit 100 events into a bus that holds 4, overflowing the idle
    // subscriber many times over; the sends must not notice.
    within(
        Duration::from_secs(5),
        "sends past an idle subscriber",
        async {
            for i in 0..SENDS {
                let done = runtime
                    .send_and_wait("echo", Message::user_text(format!("{i}")))
                    .await
                    .expect("sent");
                assert_eq!(done.task.status.state, TaskState::Completed);
            }
        },
    )
    .await;

    let Some(Received::Lagged(missed)) = slow.recv().await else {
        panic!("the subscriber is told it fell behind");
    };
    let missed = usize::try_from(missed).expect("small");
    let total = SENDS * EVENTS_PER_SEND;
    assert!(
        missed < total && total - missed <= CAPACITY,
        "it missed all but the newest few of {total} events: {missed}"
    );
    // What is left is already there: each read is ready at once.
    let mut rest = Vec::new();
    for _ in missed..total {
        match slow.recv().now_or_never() {
            Some(Some(Received::Event(event))) => rest.push(event),
            other => panic!("expected one of the newest events, got {other:?}"),
        }
    }
    assert!(
        slow.recv().now_or_never().is_none(),
        "nothing more was emitted"
    );
    assert_eq!(
        rest.last().map(|e| e.kind),
        Some(EventKind::SendCompleted),
        "the newest event is the last send's completion"
    );
}

#[tokio::test]
async fn a_subscription_is_also_a_stream() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("echo"), |_| Echo::default())
        .build()
        .await
        .expect("runtime starts");
    let events = runtime.subscribe().into_stream();

    runtime
        .send_and_wait("echo", Message::user_text("hi"))
        .await
        .expect("sent");

    let kinds: Vec<EventKind> = within(
        Duration::from_secs(5),
        "the send's events",
        events
            .take(6)
            .map(|received| match received {
                Received::Event(event) => event.kind,
                Received::Lagged(n) => panic!("lagged by {n}"),
            })
            .collect(),
    )
    .await;
    assert_eq!(kinds.first(), Some(&EventKind::SendInitiated));
    assert_eq!(kinds.last(), Some(&EventKind::SendCompleted));
}
