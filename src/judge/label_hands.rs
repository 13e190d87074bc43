//! A hand source read from a simulated recording's per-frame labels (`labels/frames.jsonl`,
//! docs/sim.md): what a perfect hand stage would report at the camera's frame rate. It
//! exists to measure the rest of the pipeline (cards, tracking, the judge) apart from the
//! hand model; it is never used on real video, and rulings made with it say so.
//!
//! Times are frame-quantised as a camera's are: a touch first seen in frame k happened
//! between frames k-1 and k, so it is reported at the middle, with the error of a
//! uniform spread over one frame. A card the measured layout could not name is touched
//! as the camera would report it: by its territory, not by the poem the labels know.

use super::{HandSource, HandsSnapshot, JudgeError};
use crate::rules::model::{CardRef, Event, EventKind, Hand, Layout, Player};
use crate::track::HandSeen;
use opencv::core::Mat;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct FrameLine {
    frame: usize,
    hands: Vec<HandLine>,
}

#[derive(Deserialize)]
struct HandLine {
    player: Player,
    hand: Hand,
    #[serde(default)]
    touching: Vec<u8>,
    inside: bool,
    #[serde(default)]
    keypoints_px: BTreeMap<String, [f64; 2]>,
    /// Field millimetres and height above the tatami.
    #[serde(default)]
    keypoints_mm: BTreeMap<String, [f64; 3]>,
}

impl HandLine {
    /// The territory under the hand's lowest fingertip (the one on the card it touches):
    /// A's half of the field has y < 0 (contract section 2).
    fn territory_touched(&self) -> Option<Player> {
        let tip = self
            .keypoints_mm
            .iter()
            .filter(|(k, _)| k.as_str() != "wrist")
            .map(|(_, p)| p)
            .min_by(|a, b| a[2].total_cmp(&b[2]))?;
        Some(if tip[1] < 0.0 { Player::A } else { Player::B })
    }
}

/// Hands as the simulator's labels give them.
pub struct LabelHands {
    path: PathBuf,
    lines: std::io::Lines<BufReader<std::fs::File>>,
    line_no: usize,
    fps: f64,
    touching: BTreeMap<(Player, Hand), BTreeSet<u8>>,
    inside: BTreeMap<(Player, Hand), bool>,
    /// The poems the measured layout named.
    named: BTreeSet<u8>,
}

impl LabelHands {
    /// `dir/labels/frames.jsonl`, or `None` when the recording has no labels; `layout` is
    /// the layout measured from the video.
    pub fn open(dir: &Path, fps: f64, layout: &Layout) -> Result<Option<LabelHands>, JudgeError> {
        let path = dir.join("labels").join("frames.jsonl");
        if !path.is_file() {
            return Ok(None);
        }
        let f = std::fs::File::open(&path).map_err(|e| JudgeError::Input {
            path: path.clone(),
            place: "file".into(),
            problem: format!("cannot be read: {e}"),
        })?;
        Ok(Some(LabelHands {
            path,
            lines: BufReader::new(f).lines(),
            line_no: 0,
            fps,
            touching: BTreeMap::new(),
            inside: BTreeMap::new(),
            named: layout.cards.iter().filter_map(|c| c.poem).collect(),
        }))
    }

    fn next_line(&mut self, frame: usize) -> Result<Option<FrameLine>, JudgeError> {
        loop {
            let Some(line) = self.lines.next() else {
                return Ok(None);
            };
            self.line_no += 1;
            let line = line.map_err(|e| self.bad(e.to_string()))?;
            let l: FrameLine = serde_json::from_str(&line)
                .map_err(|e| self.bad(format!("not a frame label: {e}")))?;
            if l.frame >= frame {
                return Ok(Some(l));
            }
        }
    }

    fn bad(&self, problem: String) -> JudgeError {
        JudgeError::Input {
            path: self.path.clone(),
            place: format!("line {}", self.line_no),
            problem,
        }
    }
}

impl HandSource for LabelHands {
    fn push(
        &mut self,
        frame: usize,
        t_s: f64,
        _bgr: &std::sync::Arc<Mat>,
    ) -> Result<(Vec<HandSeen>, Vec<Event>), JudgeError> {
        let Some(l) = self.next_line(frame)? else {
            return Ok((Vec::new(), Vec::new()));
        };
        let t = t_s - 0.5 / self.fps;
        let t_err = 1.0 / (self.fps * 12f64.sqrt());
        let mut seen = Vec::new();
        let mut events = Vec::new();
        let mut push = |what: EventKind| {
            let mut e = Event::new(t, what);
            e.t_err_s = t_err;
            e.frames = Some([frame as u64, frame as u64]);
            events.push(e);
        };
        for h in l.hands {
            let key = (h.player, h.hand);
            let was_inside = self.inside.insert(key, h.inside).unwrap_or(false);
            if h.inside && !was_inside {
                push(EventKind::Enter {
                    player: h.player,
                    hand: h.hand,
                });
            } else if !h.inside && was_inside {
                push(EventKind::Leave {
                    player: h.player,
                    hand: h.hand,
                });
            }
            let now: BTreeSet<u8> = h.touching.iter().copied().collect();
            let before = self.touching.insert(key, now.clone()).unwrap_or_default();
            for poem in now.difference(&before) {
                // The labels do not say which of the layout's cards it is; only its
                // territory reaches the event.
                let named = self.named.contains(poem).then_some(*poem);
                let card = CardRef::of(named, 0, h.territory_touched());
                push(card.touch(h.player, h.hand, true));
            }
            seen.push(HandSeen {
                player: h.player,
                hand: h.hand,
                fingertips_px: h
                    .keypoints_px
                    .iter()
                    .filter(|(k, _)| k.as_str() != "wrist")
                    .map(|(_, p)| *p)
                    .collect(),
                hidden: false,
                // The labels say what each hand touches; a region's player is never in
                // doubt.
                pressing_px: None,
            });
        }
        Ok((seen, events))
    }

    fn finish(&mut self) -> Vec<Event> {
        Vec::new()
    }

    fn describe(&self) -> String {
        "simulator labels (per-frame truth, not a model)".into()
    }

    fn state(&self) -> Option<HandsSnapshot> {
        let touching: Vec<(Player, Hand, Vec<u8>)> = self
            .touching
            .iter()
            .map(|((p, h), s)| (*p, *h, s.iter().copied().collect()))
            .collect();
        let inside: Vec<(Player, Hand, bool)> =
            self.inside.iter().map(|((p, h), v)| (*p, *h, *v)).collect();
        Some(HandsSnapshot::json(
            serde_json::json!({ "touching": touching, "inside": inside }),
        ))
    }

    fn restore(
        &mut self,
        state: &serde_json::Value,
        _frames: &BTreeMap<usize, std::sync::Arc<Mat>>,
    ) -> Result<(), JudgeError> {
        let bad = |e: serde_json::Error| JudgeError::Checkpoint(format!("saved hand state: {e}"));
        let touching: Vec<(Player, Hand, Vec<u8>)> =
            serde_json::from_value(state["touching"].clone()).map_err(bad)?;
        let inside: Vec<(Player, Hand, bool)> =
            serde_json::from_value(state["inside"].clone()).map_err(bad)?;
        self.touching = touching
            .into_iter()
            .map(|(p, h, s)| ((p, h), s.into_iter().collect()))
            .collect();
        self.inside = inside.into_iter().map(|(p, h, v)| ((p, h), v)).collect();
        Ok(())
    }
}
