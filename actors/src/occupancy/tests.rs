use super::*;

fn session() -> Arc<SessionShared> {
    Arc::new(SessionShared::new(Limiter::new(1, 4), 0))
}

#[test]
fn a_new_session_is_idle() {
    assert!(session().is_idle());
}

#[test]
fn a_pinned_task_keeps_its_session_busy_until_it_lets_go() {
    let session = session();
    let first = TaskPin::new(&session);
    let second = TaskPin::new(&session);
    assert!(!session.is_idle());
    drop(first);
    assert!(!session.is_idle(), "one task is still live");
    assert!(Arc::ptr_eq(&second.session(), &session));
    drop(second);
    assert!(session.is_idle());
}

#[test]
fn a_held_permit_keeps_its_session_busy() {
    let session = session();
    let permit = session.try_acquire().expect("free");
    assert!(!session.is_idle());
    drop(permit);
    assert!(session.is_idle());
}

#[test]
fn an_idle_sessions_shared_state_stays_in_the_96_byte_allocation() {
    // Every live session holds one, so its size class is part of the figure the
    // `sessions` benchmark holds against a raw actor's (docs/benchmarks.md). With
    // `Arc`'s two counts, 80 bytes allocate 96; one more word would take 112.
    assert!(
        std::mem::size_of::<SessionShared>() <= 80,
        "SessionShared grew to {} bytes",
        std::mem::size_of::<SessionShared>()
    );
}
