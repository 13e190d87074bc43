//! The hand stage's own output, written as it is made: the hands of every run the
//! network made (`hands.jsonl`, frames with no hand left out) and the events
//! (`events.jsonl`), one JSON line each, flushed (contract, `perceive`). `perceive`
//! writes it, and `analyze --hands-out` beside its rulings; `score-hands` reads it.

use super::HandFrame;
use crate::rules::model::Event;
use crate::util::write_json_line;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// `hands.jsonl` and `events.jsonl` in one directory, open for writing.
pub struct HandsRecord {
    hands: BufWriter<File>,
    events: BufWriter<File>,
}

impl HandsRecord {
    /// Creates (or empties) `dir/hands.jsonl` and `dir/events.jsonl`, and `dir` itself.
    pub fn create(dir: &Path) -> std::io::Result<HandsRecord> {
        std::fs::create_dir_all(dir)?;
        let open = |name: &str| File::create(dir.join(name)).map(BufWriter::new);
        Ok(HandsRecord {
            hands: open("hands.jsonl")?,
            events: open("events.jsonl")?,
        })
    }

    /// Appends the runs `frames` (those with a hand) and `events`.
    pub fn write(&mut self, frames: &[HandFrame], events: &[Event]) -> std::io::Result<()> {
        for f in frames.iter().filter(|f| !f.hands.is_empty()) {
            write_json_line(&mut self.hands, f)?;
        }
        for e in events {
            write_json_line(&mut self.events, e)?;
        }
        Ok(())
    }
}
