#![allow(dead_code)]
pub mod frames;
pub mod sim;
pub mod synth;

/// Fails the test unless the command exited 0, showing its stderr.
pub fn assert_exit_0(o: &std::process::Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Kills `child` with SIGKILL as soon as `ready` holds, polling every 2 ms for at most
/// `limit`; true when it was killed, false when it ended first (or the time ran out).
pub fn kill_when(
    child: &mut std::process::Child,
    ready: impl Fn() -> bool,
    limit: std::time::Duration,
) -> bool {
    let t0 = std::time::Instant::now();
    let mut killed = false;
    while t0.elapsed() < limit {
        if ready() {
            child.kill().unwrap(); // SIGKILL
            killed = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.wait();
    killed
}
