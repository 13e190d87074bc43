//! The hand model as the pipeline's hand source: `hands::Perceiver` behind `HandSource`.
//! The perceiver sees frames at a reduced rate and refines where a hand's state changes;
//! its events come out final and in time order.

use super::{HandSource, JudgeError};
use crate::hands::{HandFrame, Perceiver};
use crate::rules::model::Event;
use crate::track::HandSeen;
use opencv::core::Mat;

/// Hands seen by the model.
pub struct ModelHands {
    perceiver: Perceiver,
    name: String,
    /// The hands of the latest frame the network ran on, handed to the card tracker
    /// (who drove a card) until the next run.
    latest: Vec<HandSeen>,
}

impl ModelHands {
    pub fn new(perceiver: Perceiver, name: String) -> ModelHands {
        ModelHands {
            perceiver,
            name,
            latest: Vec::new(),
        }
    }
}

fn seen(f: &HandFrame) -> Vec<HandSeen> {
    f.hands
        .iter()
        .map(|h| HandSeen {
            player: h.player,
            hand: h.hand,
            fingertips_px: h.fingertips_px.clone(),
        })
        .collect()
}

impl HandSource for ModelHands {
    fn push(
        &mut self,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
    ) -> Result<(Vec<HandSeen>, Vec<Event>), JudgeError> {
        let p = self
            .perceiver
            .push(frame, t_s, bgr)
            .map_err(|e| JudgeError::Hands(e.to_string()))?;
        if let Some(last) = p.frames.last() {
            self.latest = seen(last);
        }
        Ok((self.latest.clone(), p.events))
    }

    fn finish(&mut self) -> Vec<Event> {
        self.perceiver.finish()
    }

    fn describe(&self) -> String {
        format!("hand model {}", self.name)
    }
}
