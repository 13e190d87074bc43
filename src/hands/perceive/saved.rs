//! The perceiver's state between two frames, as plain data, to continue a run exactly
//! where it stood (`analyze --resume`). The frames it keeps (the ring between runs, the
//! contact crops' frames, the plate) are saved by number, not by pixel: a resumed run
//! decodes them again and hands them to `Perceiver::restore`.

use super::events::{LastInside, PressedCards};
use super::{PerceiveStats, Perceiver, Sample, SlotState, Untimed};
use crate::hands::contact::CropSource;
use crate::hands::decode::HandObs;
use crate::hands::HandsError;
use crate::rules::geometry::Pt;
use crate::rules::model::{any_f64, CardRef, Event, Hand, Player, SavedCard};
use opencv::core::Mat;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// A hand of a run, every field kept (`HandObs`'s own form leaves some out).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedObs {
    player: Player,
    hand: Hand,
    lead: Option<bool>,
    fingertips_px: Vec<[f64; 2]>,
    outline_px: Vec<[f64; 2]>,
    reach_outline_px: Vec<[f64; 2]>,
    body_outline_px: Vec<[f64; 2]>,
    inside: bool,
    #[serde(with = "any_f64")]
    reach_mm: f64,
    #[serde(with = "any_f64")]
    contact_p: f64,
    contact_px: Option<[f64; 2]>,
    contact: Option<SavedCard>,
    #[serde(with = "any_f64")]
    conf: f64,
    hand_votes: [u32; 2],
}

impl From<&HandObs> for SavedObs {
    fn from(h: &HandObs) -> Self {
        SavedObs {
            player: h.player,
            hand: h.hand,
            lead: h.lead,
            fingertips_px: h.fingertips_px.clone(),
            outline_px: h.outline_px.clone(),
            reach_outline_px: h.reach_outline_px.clone(),
            body_outline_px: h.body_outline_px.clone(),
            inside: h.inside,
            reach_mm: h.reach_mm,
            contact_p: h.contact_p,
            contact_px: h.contact_px,
            contact: h.contact.map(SavedCard::from),
            conf: h.conf,
            hand_votes: h.hand_votes,
        }
    }
}

impl From<SavedObs> for HandObs {
    fn from(h: SavedObs) -> Self {
        HandObs {
            player: h.player,
            hand: h.hand,
            lead: h.lead,
            fingertips_px: h.fingertips_px,
            outline_px: h.outline_px,
            reach_outline_px: h.reach_outline_px,
            body_outline_px: h.body_outline_px,
            inside: h.inside,
            reach_mm: h.reach_mm,
            contact_p: h.contact_p,
            contact_px: h.contact_px,
            contact: h.contact.map(CardRef::from),
            conf: h.conf,
            hand_votes: h.hand_votes,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedSample {
    frame: usize,
    t_s: f64,
    hands: Vec<SavedObs>,
}

impl From<&Sample> for SavedSample {
    fn from(s: &Sample) -> Self {
        SavedSample {
            frame: s.frame,
            t_s: s.t_s,
            hands: s.hands.iter().map(SavedObs::from).collect(),
        }
    }
}

impl From<SavedSample> for Sample {
    fn from(s: SavedSample) -> Self {
        Sample {
            frame: s.frame,
            t_s: s.t_s,
            hands: s.hands.into_iter().map(HandObs::from).collect(),
        }
    }
}

/// The last sighting of a hand: frame, time, reach, contact probability.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Seen(
    usize,
    f64,
    #[serde(with = "any_f64")] f64,
    #[serde(with = "any_f64")] f64,
);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedSlot {
    inside: bool,
    contact: Option<SavedCard>,
    seen: Option<Seen>,
    pending_inside: Option<(bool, Event)>,
    pending_contact: Option<(SavedCard, Event, Option<[f64; 2]>)>,
    pressed_t_s: Option<f64>,
}

impl From<&SlotState> for SavedSlot {
    fn from(s: &SlotState) -> Self {
        SavedSlot {
            inside: s.inside,
            contact: s.contact.map(SavedCard::from),
            seen: s.seen.map(|(f, t, r, p)| Seen(f, t, r, p)),
            pending_inside: s.pending_inside.clone(),
            pending_contact: s
                .pending_contact
                .clone()
                .map(|(c, e, px)| (c.into(), e, px)),
            pressed_t_s: s.pressed_t_s,
        }
    }
}

impl From<SavedSlot> for SlotState {
    fn from(s: SavedSlot) -> Self {
        SlotState {
            inside: s.inside,
            contact: s.contact.map(CardRef::from),
            seen: s.seen.map(|Seen(f, t, r, p)| (f, t, r, p)),
            pending_inside: s.pending_inside,
            pending_contact: s.pending_contact.map(|(c, e, px)| (c.into(), e, px)),
            pressed_t_s: s.pressed_t_s,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedLastInside {
    t_s: f64,
    hand: Hand,
    tips_px: Vec<[f64; 2]>,
    tips_mm: Vec<Pt>,
}

/// Everything the perceiver knows between two frames but its networks, its field and
/// layout (made again from the recording) and the pixels of the frames it keeps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerceiverState {
    cards: Vec<(SavedCard, [Pt; 4])>,
    /// The frames kept since the last run: number, time, whether a contact crop was cut.
    ring: Vec<(usize, f64, bool)>,
    /// The contact crops' frames: number, time.
    crops: Vec<(usize, f64)>,
    /// The frame the plate was cut from.
    plate: Option<usize>,
    last: Option<SavedSample>,
    prev_t_s: Option<f64>,
    frame_s: Option<f64>,
    hurried: bool,
    slots: Vec<SavedSlot>,
    last_inside: Vec<Option<SavedLastInside>>,
    pressed_cards: Vec<((Player, Hand), SavedCard, f64)>,
    held: Vec<Event>,
    untimed: Vec<(Event, [f64; 2])>,
    presses: Vec<(Player, f64, [f64; 2])>,
    #[serde(with = "any_f64")]
    given_s: f64,
    stats: PerceiveStats,
}

impl PerceiverState {
    /// The frames whose pixels the state refers to, in order.
    pub fn frames(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .ring
            .iter()
            .map(|r| r.0)
            .chain(self.crops.iter().map(|c| c.0))
            .chain(self.plate)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

impl Perceiver {
    /// Its state after the frame pushed last.
    pub fn state(&self) -> PerceiverState {
        PerceiverState {
            cards: self.cards.iter().map(|(c, q)| ((*c).into(), *q)).collect(),
            ring: self
                .ring
                .iter()
                .map(|(f, t, _, c)| (*f, *t, c.is_some()))
                .collect(),
            crops: self.crops.iter().map(|(f, t, _)| (*f, *t)).collect(),
            plate: self.plate_frame.filter(|_| self.plate.is_some()),
            last: self.last.as_ref().map(SavedSample::from),
            prev_t_s: self.prev_t_s,
            frame_s: self.frame_s,
            hurried: self.hurried,
            slots: self.slots.iter().map(SavedSlot::from).collect(),
            last_inside: self
                .last_inside
                .iter()
                .map(|l| {
                    l.as_ref().map(|l| SavedLastInside {
                        t_s: l.t_s,
                        hand: l.hand,
                        tips_px: l.tips_px.clone(),
                        tips_mm: l.tips_mm.clone(),
                    })
                })
                .collect(),
            pressed_cards: self
                .pressed_cards
                .0
                .iter()
                .map(|(h, c, t)| (*h, (*c).into(), *t))
                .collect(),
            held: self.held.clone(),
            untimed: self
                .untimed
                .iter()
                .map(|u| (u.ev.clone(), u.at_px))
                .collect(),
            presses: self.presses.clone(),
            given_s: self.given_s,
            stats: self.stats.clone(),
        }
    }

    /// Continues from `state`, given the frames it refers to (`PerceiverState::frames`)
    /// as decoded again.
    pub fn restore(
        &mut self,
        state: PerceiverState,
        frames: &BTreeMap<usize, Arc<Mat>>,
    ) -> Result<(), HandsError> {
        let frame = |f: usize| -> Result<&Arc<Mat>, HandsError> {
            frames.get(&f).ok_or_else(|| {
                HandsError::Restore(format!(
                    "frame {f} of the saved state was not decoded again"
                ))
            })
        };
        // One crop a frame, shared as a run shares it.
        let mut cut: BTreeMap<usize, Arc<CropSource>> = BTreeMap::new();
        let mut crop_of = |f: usize| -> Result<Arc<CropSource>, HandsError> {
            if let Some(c) = cut.get(&f) {
                return Ok(Arc::clone(c));
            }
            let c = Arc::new(CropSource::new(frame(f)?)?);
            cut.insert(f, Arc::clone(&c));
            Ok(c)
        };
        let mut ring = VecDeque::with_capacity(state.ring.len());
        for (f, t, cropped) in &state.ring {
            let crop = if *cropped { Some(crop_of(*f)?) } else { None };
            ring.push_back((*f, *t, Arc::clone(frame(*f)?), crop));
        }
        let mut crops = VecDeque::with_capacity(state.crops.len());
        for (f, t) in &state.crops {
            crops.push_back((*f, *t, crop_of(*f)?));
        }
        let plate = match state.plate {
            Some(f) => Some(crop_of(f)?),
            None => None,
        };
        if state.slots.len() != self.slots.len() || state.last_inside.len() != 2 {
            return Err(HandsError::Restore(
                "the saved state has another number of hands".into(),
            ));
        }
        self.cards = state
            .cards
            .into_iter()
            .map(|(c, q)| (c.into(), q))
            .collect();
        self.ring = ring;
        self.crops = crops;
        self.plate = plate;
        self.plate_frame = state.plate;
        self.last = state.last.map(Sample::from);
        self.prev_t_s = state.prev_t_s;
        self.frame_s = state.frame_s;
        self.hurried = state.hurried;
        for (slot, saved) in self.slots.iter_mut().zip(state.slots) {
            *slot = saved.into();
        }
        for (l, saved) in self.last_inside.iter_mut().zip(state.last_inside) {
            *l = saved.map(|s| LastInside {
                t_s: s.t_s,
                hand: s.hand,
                tips_px: s.tips_px,
                tips_mm: s.tips_mm,
            });
        }
        self.pressed_cards = PressedCards(
            state
                .pressed_cards
                .into_iter()
                .map(|(h, c, t)| (h, c.into(), t))
                .collect(),
        );
        self.held = state.held;
        self.untimed = state
            .untimed
            .into_iter()
            .map(|(ev, at_px)| Untimed { ev, at_px })
            .collect();
        self.presses = state.presses;
        self.given_s = state.given_s;
        self.stats = state.stats;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, Deserialize)]
    struct Holder(#[serde(with = "any_f64")] f64);

    /// Every number comes back from the checkpoint's JSON to the bit, the infinities
    /// included: a resumed run must continue from exactly the state saved.
    #[test]
    fn numbers_come_back_from_json_to_the_bit() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut values = vec![
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.1 + 0.2,
            -0.0,
            f64::MIN_POSITIVE / 3.0,
            f64::MAX,
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_finite() {
                values.push(v);
            }
        }
        for v in values {
            let text = serde_json::to_string(&Holder(v)).unwrap();
            let back: Holder = serde_json::from_str(&text).unwrap();
            assert_eq!(
                back.0.to_bits(),
                v.to_bits(),
                "{v:e} came back as {:e}",
                back.0
            );
        }
        let nan: Holder =
            serde_json::from_str(&serde_json::to_string(&Holder(f64::NAN)).unwrap()).unwrap();
        assert!(nan.0.is_nan());
        assert!(serde_json::from_str::<Holder>("\"far\"").is_err());
    }

    #[test]
    fn a_hand_and_an_unnamed_card_come_back_whole() {
        let h = HandObs {
            player: Player::B,
            hand: Hand::Left,
            lead: Some(true),
            fingertips_px: vec![[10.25, 20.5]],
            outline_px: vec![[1.0, 2.0], [3.0, 4.0], [5.0, 1.0]],
            reach_outline_px: vec![[0.5, 0.25]],
            body_outline_px: vec![[7.0, 8.0]],
            inside: true,
            reach_mm: f64::NEG_INFINITY,
            contact_p: 0.625,
            contact_px: Some([11.0, 21.0]),
            contact: Some(CardRef::Unnamed {
                index: 17,
                territory: Some(Player::A),
            }),
            conf: 0.875,
            hand_votes: [2, 5],
        };
        let text = serde_json::to_string(&SavedObs::from(&h)).unwrap();
        let back: HandObs = serde_json::from_str::<SavedObs>(&text).unwrap().into();
        assert_eq!(back, h);
    }
}
