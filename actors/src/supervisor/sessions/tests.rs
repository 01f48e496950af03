use std::sync::Arc;
use std::time::Duration;

use agentyard_transport::ContextId;
use ractor::ActorStatus;

use super::*;
use crate::agent::{Agent, AgentError, DynAgent, TaskContext};
use crate::error::Error;
use crate::limits::Limited;
use crate::occupancy::TaskPin;
use crate::session::{Runs, SessionActor};

struct Idle;

impl Agent for Idle {
    async fn handle(&self, _ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        Ok(())
    }
}

fn key(context: &str) -> SessionKey {
    SessionKey {
        agent: Arc::from("idle"),
        context_id: ContextId::new(context),
    }
}

fn spawn(key: &SessionKey) -> Result<(ActorRef<SessionMsg>, Arc<dyn DynAgent>)> {
    let agent = Arc::new(Idle) as Arc<dyn DynAgent>;
    ractor::ActorRuntime::spawn_instant(
        None,
        SessionActor,
        SessionActor::args(Arc::clone(&agent), key, Runs::InTurn),
    )
    .map(|(actor, _)| (actor, agent))
    .map_err(|e| Error::SessionUnavailable {
        agent: key.agent.to_string(),
        context_id: key.context_id.clone(),
        reason: e.to_string(),
    })
}

/// Registers (or finds) the session under `context`.
fn open(sessions: &Sessions, context: &str) -> (ActorRef<SessionMsg>, Arc<SessionShared>, bool) {
    let key = key(context);
    let (live, created) = sessions
        .get_or_spawn(&key, || spawn(&key))
        .expect("session spawns");
    (live.actor, live.session, created)
}

/// Waits until the actor has stopped (a drain is asynchronous).
async fn stopped(actor: &ActorRef<SessionMsg>) -> bool {
    for _ in 0..200 {
        if actor.get_status() == ActorStatus::Stopped {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    false
}

#[tokio::test]
async fn a_session_is_spawned_once_and_found_after() {
    let sessions = Sessions::new(10, 1, 8);
    let (first, shared, created) = open(&sessions, "c");
    assert!(created);
    let (again, same, created) = open(&sessions, "c");
    assert!(!created, "a second lookup registers nothing");
    assert_eq!(first.get_id(), again.get_id());
    assert!(Arc::ptr_eq(&shared, &same));
    let touched = sessions.touch(&key("c"), Instant::now()).expect("live");
    assert_eq!(touched.actor.get_id(), first.get_id());
    assert!(sessions.touch(&key("other"), Instant::now()).is_none());
    assert_eq!(sessions.len(), 1);
}

/// Opens and settles each session in turn, a millisecond apart (a line made when
/// the registry outgrows the limit orders the sessions by their last use).
async fn open_settled(sessions: &Sessions, contexts: &[&str]) -> Vec<ActorRef<SessionMsg>> {
    let mut actors = Vec::new();
    for context in contexts {
        let (actor, shared, _) = open(sessions, context);
        sessions.settled(&key(context), &shared);
        actors.push(actor);
        tokio::time::advance(Duration::from_millis(1)).await;
    }
    actors
}

#[tokio::test(start_paused = true)]
async fn past_the_warm_limit_the_least_recently_settled_is_passivated() {
    let sessions = Sessions::new(2, 1, 8);
    let actors = open_settled(&sessions, &["a", "b", "c"]).await;
    assert!(!sessions.contains(&key("a")), "the oldest went");
    assert!(sessions.contains(&key("b")) && sessions.contains(&key("c")));
    assert!(stopped(&actors[0]).await, "and its actor stopped");
    // Kept from here: "d" pushes out "b", the oldest of the line.
    open_settled(&sessions, &["d"]).await;
    assert!(!sessions.contains(&key("b")));
    assert!(sessions.contains(&key("c")) && sessions.contains(&key("d")));
}

#[tokio::test]
async fn below_the_warm_limit_no_line_is_kept() {
    let sessions = Sessions::new(3, 1, 8);
    for context in ["a", "b", "c"] {
        let (_, shared, _) = open(&sessions, context);
        sessions.settled(&key(context), &shared);
    }
    assert!(!sessions.line_kept(), "no session can be one too many");
    assert_eq!(sessions.warm_entries(), 0);
    assert_eq!(
        sessions.warm_len(),
        3,
        "each is marked warm on its own state"
    );
    // Used again, a session is not warm until it settles.
    let a = sessions
        .touch(&key("a"), Instant::now())
        .expect("live")
        .session;
    assert_eq!(sessions.warm_len(), 2);
    sessions.settled(&key("a"), &a);
    assert_eq!(sessions.warm_len(), 3);
    assert_eq!(sessions.len(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_registry_past_the_limit_lines_up_its_warm_sessions_least_recently_used_first() {
    let sessions = Sessions::new(3, 1, 8);
    open_settled(&sessions, &["a", "b", "c"]).await;
    // "a" is used again and settles last: "b" is now the least recently used.
    let a = sessions
        .touch(&key("a"), Instant::now())
        .expect("live")
        .session;
    sessions.settled(&key("a"), &a);
    tokio::time::advance(Duration::from_millis(1)).await;
    // A session in use is not lined up: "busy" is registered, then "d" settles.
    let (_, busy, _) = open(&sessions, "busy");
    let _permit = busy.try_acquire().expect("a free permit");
    open_settled(&sessions, &["d"]).await;
    assert!(sessions.line_kept());
    assert!(
        !sessions.contains(&key("b")),
        "the least recently used went"
    );
    for context in ["a", "c", "d", "busy"] {
        assert!(sessions.contains(&key(context)), "{context} stays");
    }
    assert_eq!(sessions.warm_len(), 3);
    assert_eq!(sessions.len(), 4);
}

#[tokio::test(start_paused = true)]
async fn sessions_used_within_one_millisecond_are_lined_up_in_the_order_they_were_used() {
    // Sends a few microseconds apart: a last use counted in milliseconds tied them,
    // and the line was made in the registry's hash order instead.
    let sessions = Sessions::new(4, 1, 8);
    for context in ["a", "b", "c", "d", "e", "f", "g"] {
        let (_, shared, _) = open(&sessions, context);
        sessions.settled(&key(context), &shared);
        tokio::time::advance(Duration::from_micros(3)).await;
    }
    for gone in ["a", "b", "c"] {
        assert!(
            !sessions.contains(&key(gone)),
            "{gone}, among the oldest, went"
        );
    }
    for kept in ["d", "e", "f", "g"] {
        assert!(sessions.contains(&key(kept)), "{kept} stays");
    }
}

#[tokio::test(start_paused = true)]
async fn the_line_is_let_go_at_half_the_limit_and_made_again_past_it() {
    let sessions = Sessions::new(4, 1, 8);
    open_settled(&sessions, &["a", "b", "c", "d", "e"]).await;
    assert!(sessions.line_kept());
    assert!(!sessions.contains(&key("a")));
    for context in ["b", "c"] {
        assert!(sessions.passivate_if(&key(context), |_| true));
    }
    // Two left, half the limit: the next settle lets the line go, and they stay warm.
    let d = sessions
        .touch(&key("d"), Instant::now())
        .expect("live")
        .session;
    sessions.settled(&key("d"), &d);
    assert!(!sessions.line_kept());
    assert_eq!(sessions.warm_entries(), 0);
    assert_eq!(sessions.warm_len(), 2);
    // Past the limit again: "e" (used before "d") is the first to go.
    open_settled(&sessions, &["f", "g", "h"]).await;
    assert!(sessions.line_kept());
    assert!(!sessions.contains(&key("e")));
    for context in ["d", "f", "g", "h"] {
        assert!(sessions.contains(&key(context)), "{context} stays");
    }
    assert_eq!(sessions.warm_len(), 4);
}

#[tokio::test]
async fn a_session_in_use_again_leaves_the_warm_set() {
    let sessions = Sessions::new(2, 1, 8);
    for context in ["a", "b"] {
        let (_, shared, _) = open(&sessions, context);
        sessions.settled(&key(context), &shared);
    }
    // "a" is used again: it is no longer the oldest warm session, nor warm at all.
    let a = sessions
        .touch(&key("a"), Instant::now())
        .expect("live")
        .session;
    let (_, c, _) = open(&sessions, "c");
    sessions.settled(&key("c"), &c);
    assert!(
        sessions.contains(&key("a")),
        "a session in use is never the victim"
    );
    assert!(sessions.contains(&key("b")) && sessions.contains(&key("c")));
    // Settled again, it is the newest: "b" is now the oldest of three warm.
    sessions.settled(&key("a"), &a);
    assert!(!sessions.contains(&key("b")));
}

#[tokio::test]
async fn a_busy_session_is_not_offered_to_the_warm_set() {
    let sessions = Sessions::new(0, 1, 8);
    let (_, shared, _) = open(&sessions, "a");
    let pin = TaskPin::new(&shared);
    assert!(!shared.is_idle());
    sessions.settled(&key("a"), &shared);
    assert!(sessions.contains(&key("a")), "a task of it has not ended");
    drop(pin);
    sessions.settled(&key("a"), &shared);
    assert!(
        !sessions.contains(&key("a")),
        "with no warm room it goes at once"
    );
}

#[tokio::test]
async fn passivating_all_takes_only_the_chosen_sessions() {
    let sessions = Sessions::new(10, 1, 8);
    let (idle, _, _) = open(&sessions, "idle");
    let (_, busy, _) = open(&sessions, "busy");
    let _permit = busy.try_acquire().expect("a free permit");
    sessions.passivate_all(|session| session.limiter.is_idle());
    assert!(!sessions.contains(&key("idle")));
    assert!(sessions.contains(&key("busy")));
    assert!(stopped(&idle).await);
}

#[tokio::test]
async fn a_forgotten_session_is_only_the_one_registered() {
    let sessions = Sessions::new(10, 1, 8);
    let (old, old_shared, _) = open(&sessions, "a");
    assert!(sessions.passivate_if(&key("a"), |_| true));
    let (fresh, _, created) = open(&sessions, "a");
    assert!(created);
    assert!(!sessions.is_current(&key("a"), &old_shared));
    // Forgetting the old actor leaves the fresh session alone.
    sessions.forget(&key("a"), &old);
    assert!(sessions.contains(&key("a")));
    sessions.forget(&key("a"), &fresh);
    assert!(!sessions.contains(&key("a")));
}

/// A small xorshift, so the stress test below needs no random crate and each of its
/// threads replays the same choices.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Four threads open, use, settle and passivate two dozen sessions around a warm
/// limit of eight at once, so the line is made (past eight live), let go (at four)
/// and made again under them while other sessions settle, are touched and leave. The
/// threads stop together every fifty calls each, and one of them checks that the
/// counts agree with the line (`check_warm_count`) before they go on; at the end, one
/// more settle of every session leaves no more than the limit live, all of them warm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_warm_count_holds_while_the_line_is_made_and_let_go_under_racing_settles() {
    const LIMIT: usize = 8;
    const THREADS: u64 = 4;
    let sessions = Arc::new(Sessions::new(LIMIT, 1, 8));
    let pause = Arc::new(std::sync::Barrier::new(THREADS as usize));
    // The first broken count: every thread stops at the round after it (a panic
    // would leave the others waiting at the barrier for ever).
    let broken = Arc::new(std::sync::OnceLock::new());
    let workers: Vec<_> = (0..THREADS)
        .map(|thread| {
            let sessions = Arc::clone(&sessions);
            let pause = Arc::clone(&pause);
            let broken = Arc::clone(&broken);
            tokio::task::spawn_blocking(move || {
                let mut rng = 0x9E37_79B9_7F4A_7C15 ^ (thread + 1);
                for round in 0..100 {
                    for _ in 0..50 {
                        let roll = next(&mut rng);
                        let context = format!("c{}", roll % 24);
                        match (roll >> 8) % 16 {
                            0..=8 => {
                                let (_, shared, _) = open(&sessions, &context);
                                sessions.settled(&key(&context), &shared);
                            }
                            9..=11 => {
                                if let Some(slot) = sessions.touch(&key(&context), Instant::now()) {
                                    sessions.settled(&key(&context), &slot.session);
                                }
                            }
                            // Used and not yet settled: out of the warm set for now.
                            12 => {
                                sessions.touch(&key(&context), Instant::now());
                            }
                            13 | 14 => {
                                sessions.passivate_if(&key(&context), |_| true);
                            }
                            _ => sessions.passivate_idle_for(Duration::ZERO),
                        }
                    }
                    if pause.wait().is_leader()
                        && let Err(why) = sessions.check_warm_count()
                    {
                        let _ = broken.set(format!("after round {round}: {why}"));
                    }
                    pause.wait();
                    if broken.get().is_some() {
                        return;
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("no thread panicked");
    }
    assert_eq!(broken.get(), None, "the counts agree after every round");
    let live: Vec<(SessionKey, Arc<SessionShared>)> = sessions
        .slots
        .iter()
        .map(|slot| (slot.key().clone(), Arc::clone(&slot.session)))
        .collect();
    for (key, session) in &live {
        sessions.settled(key, session);
    }
    sessions
        .check_warm_count()
        .expect("counts agree after settling");
    assert!(
        sessions.len() <= LIMIT,
        "{} live past the limit",
        sessions.len()
    );
    assert_eq!(sessions.warm_len(), sessions.len(), "every idle one warm");
}
