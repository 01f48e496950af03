use super::*;
use crate::limits::LimitScope;

fn session() -> Arc<SessionShared> {
    Arc::new(SessionShared::new(
        Limiter::new(LimitScope::Session, 1, 4),
        0,
    ))
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
