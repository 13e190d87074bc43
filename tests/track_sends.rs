//! Sends seen from video: `analyze` (hands from the simulator's labels) on small
//! simulated recordings whose cards are sent across the field. A sent card is lost under
//! the sender's hand and covered again by the receiver's; the tracker must find it where
//! it is placed and say `send`, or the sender's touch on it counts as a foul (25-1).
//! Measured against the simulator's truth: sends found, and none invented.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use support::sim::{analyze_with_labels, labelled_recording};

/// (from, poem) of every `send` in a JSON-lines event file.
fn sends(path: &Path) -> BTreeSet<(String, u64)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "send")
        .map(|v| {
            (
                v["from"].as_str().unwrap().to_string(),
                v["poem"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn sent_cards_are_found_where_they_are_placed() {
    let (mut truth_n, mut found_n) = (0, 0);
    for seed in [3302, 3303] {
        let rec = labelled_recording("sends", seed, 60.0, 6);
        let out = analyze_with_labels(&rec);
        let truth = sends(&rec.join("truth.jsonl"));
        let seen = sends(&out.join("events.jsonl"));
        let invented: Vec<_> = seen.difference(&truth).collect();
        assert!(
            invented.is_empty(),
            "seed {seed}: sends not in the truth: {invented:?}"
        );
        truth_n += truth.len();
        found_n += seen.intersection(&truth).count();
        let _ = std::fs::remove_dir_all(&rec);
    }
    assert!(truth_n >= 10, "the recordings hold {truth_n} sends");
    // 8 of these 12 are found; before missing cards were looked for more than once and
    // cards at rest without their whole face showing were handed to the card search, 2.
    assert!(found_n * 2 >= truth_n, "{found_n} of {truth_n} sends found");
}
