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
