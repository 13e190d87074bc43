//! The contract's data types (docs/contract.md, sections 3-5) and their JSON forms.
//! Every stage speaks these: the simulator writes them, perception produces events,
//! the engine reads layouts, readings and events and writes rulings.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A player: A sits at the bottom of the field frame (negative y), B at the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Player {
    A,
    B,
}

impl Player {
    pub fn other(self) -> Player {
        match self {
            Player::A => Player::B,
            Player::B => Player::A,
        }
    }
    pub const BOTH: [Player; 2] = [Player::A, Player::B];
    pub fn index(self) -> usize {
        match self {
            Player::A => 0,
            Player::B => 1,
        }
    }
    /// The sign of the field frame's y towards this player's own edge: -1 for A (at
    /// negative y), +1 for B.
    pub fn toward_own_y(self) -> f64 {
        match self {
            Player::A => -1.0,
            Player::B => 1.0,
        }
    }
}

impl std::fmt::Display for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Player::A => "A",
            Player::B => "B",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Hand {
    Left,
    Right,
}

impl std::fmt::Display for Hand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Hand::Left => "left",
            Hand::Right => "right",
        })
    }
}

/// Who drove a card out: one player, or `both` when it cannot be told (18-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum By {
    A,
    B,
    #[serde(rename = "both")]
    Both,
}

impl By {
    pub fn player(self) -> Option<Player> {
        match self {
            By::A => Some(Player::A),
            By::B => Some(Player::B),
            By::Both => None,
        }
    }
}

impl From<Player> for By {
    fn from(p: Player) -> By {
        match p {
            Player::A => By::A,
            Player::B => By::B,
        }
    }
}

// ---------------------------------------------------------------- layout.json

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldSize {
    pub width_mm: f64,
    pub gap_mm: f64,
    pub row_gap_mm: f64,
    pub card_w_mm: f64,
    pub card_h_mm: f64,
}

impl Default for FieldSize {
    fn default() -> Self {
        use crate::rules::geometry::*;
        FieldSize {
            width_mm: TERRITORY_W_MM,
            gap_mm: GAP_MM,
            row_gap_mm: ROW_GAP_MM,
            card_w_mm: CARD_W_MM,
            card_h_mm: CARD_H_MM,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlayerInfo {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_hand: Option<Hand>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardPlacement {
    /// `None` when a measured layout cannot name the card yet.
    pub poem: Option<u8>,
    pub owner: Player,
    pub row: u8,
    pub x_mm: f64,
    pub y_mm: f64,
    #[serde(default)]
    pub angle_deg: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poem_score: Option<f64>,
    /// For a card left unnamed: the poems it may be, as the field's best one-to-one
    /// match of cards to poems and its runner-up give them (best first). Empty: any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    #[serde(default)]
    pub field: FieldSize,
    #[serde(default)]
    pub players: BTreeMap<Player, PlayerInfo>,
    pub cards: Vec<CardPlacement>,
}

impl Layout {
    pub fn lead_hand(&self, p: Player) -> Option<Hand> {
        self.players.get(&p).and_then(|i| i.lead_hand)
    }
}

// ---------------------------------------------------------------- readings.jsonl

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub seq: u32,
    pub poem: u8,
    pub kami_start_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onsets_s: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kami_end_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shimo_start_s: Option<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub void: bool,
}

// ---------------------------------------------------------------- events.jsonl

fn one() -> f64 {
    1.0
}
fn is_one(v: &f64) -> bool {
    *v == 1.0
}
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
fn yes() -> bool {
    true
}

/// One observation: what happened, never a judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub t_s: f64,
    #[serde(flatten)]
    pub what: EventKind,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub conf: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub t_err_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<[u64; 2]>,
    /// For a touch the hand model saw: how fast the touching hand moved over the field
    /// around it, mm/s (the lesser of its speed over the `SWEEP_SPAN_S` before and after;
    /// contract section 4). A fingertip that touches a card it does not move is at rest
    /// on it; a hand sweeping past is passing over the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_mm_s: Option<f64>,
    /// For a touch the hand model saw: how long the player was seen pressing from the
    /// touch on, s, counted up to `HELD_SPAN_S` of `judge::model_hands` (contract
    /// section 4). A fingertip taps a card it does not move; a hand seen "pressing" one
    /// for longer is held over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressed_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// A hand first touches a card; `direct: false` when only another card struck it (23-2).
    /// `poem` is `None` for a card the layout could not name: `territory` then says
    /// where it lay, which is all an otetsuki on it needs (23-1).
    Touch {
        player: Player,
        hand: Hand,
        poem: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        territory: Option<Player>,
        #[serde(default = "yes")]
        direct: bool,
    },
    /// A card has wholly left the playing area.
    Out {
        poem: u8,
        by: By,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hand: Option<Hand>,
    },
    Enter {
        player: Player,
        hand: Hand,
    },
    Leave {
        player: Player,
        hand: Hand,
    },
    /// `from` lets go of card `poem`, handing it to the opponent (26-1).
    Send {
        from: Player,
        poem: u8,
    },
    /// A card is put down in a territory.
    Place {
        poem: u8,
        owner: Player,
        row: u8,
        x_mm: f64,
        y_mm: f64,
    },
    Contact {
        players: Vec<Player>,
    },
    Unseen {
        from_s: f64,
        to_s: f64,
        what: String,
    },
}

/// A card as the camera knows it: by its poem, or, when the layout could not name it,
/// by its index among the layout's cards and the territory it lies in now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardRef {
    Poem(u8),
    Unnamed {
        index: usize,
        territory: Option<Player>,
    },
}

/// A number that may be infinite (JSON has no infinities): as itself when finite, else
/// as `"inf"`, `"-inf"` or `"nan"`.
pub mod any_f64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("nan")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Num(f64),
        Word(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Either::deserialize(d)? {
            Either::Num(v) => Ok(v),
            Either::Word(w) => match w.as_str() {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                "nan" => Ok(f64::NAN),
                _ => Err(serde::de::Error::custom(format!("not a number: {w}"))),
            },
        }
    }
}

/// A card as the perceiver refers to it (`CardRef`, whose own form in `hands.jsonl`
/// leaves out an unnamed card's index).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum SavedCard {
    Poem(u8),
    Unnamed {
        index: usize,
        territory: Option<Player>,
    },
}

impl From<CardRef> for SavedCard {
    fn from(c: CardRef) -> Self {
        match c {
            CardRef::Poem(p) => SavedCard::Poem(p),
            CardRef::Unnamed { index, territory } => SavedCard::Unnamed { index, territory },
        }
    }
}

impl From<SavedCard> for CardRef {
    fn from(c: SavedCard) -> Self {
        match c {
            SavedCard::Poem(p) => CardRef::Poem(p),
            SavedCard::Unnamed { index, territory } => CardRef::Unnamed { index, territory },
        }
    }
}

/// In `hands.jsonl`: the poem, or `{"territory": "A"}` for a card the layout could not
/// name (`"territory": null` while it lies in neither).
impl Serialize for CardRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            CardRef::Poem(p) => s.serialize_u8(*p),
            CardRef::Unnamed { territory, .. } => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("territory", territory)?;
                m.end()
            }
        }
    }
}

impl CardRef {
    /// Card `index` of the layout: by `poem` when named, else by `territory`.
    pub fn of(poem: Option<u8>, index: usize, territory: Option<Player>) -> CardRef {
        match poem {
            Some(p) => CardRef::Poem(p),
            None => CardRef::Unnamed { index, territory },
        }
    }

    pub fn poem(&self) -> Option<u8> {
        match self {
            CardRef::Poem(p) => Some(*p),
            CardRef::Unnamed { .. } => None,
        }
    }

    /// The contract's `touch` of this card.
    pub fn touch(&self, player: Player, hand: Hand, direct: bool) -> EventKind {
        let territory = match self {
            CardRef::Poem(_) => None,
            CardRef::Unnamed { territory, .. } => *territory,
        };
        EventKind::Touch {
            player,
            hand,
            poem: self.poem(),
            territory,
            direct,
        }
    }
}

/// How a touch names its card in words: the poem, or where the unnamed card lay.
pub fn touched_card_words(poem: Option<u8>, territory: Option<Player>) -> String {
    match (poem, territory) {
        (Some(p), _) => p.to_string(),
        (None, Some(t)) => format!("an unnamed card in {t}'s territory"),
        (None, None) => "an unnamed card".to_string(),
    }
}

impl Event {
    pub fn new(t_s: f64, what: EventKind) -> Self {
        Event {
            t_s,
            what,
            conf: 1.0,
            t_err_s: 0.0,
            frames: None,
            sweep_mm_s: None,
            pressed_s: None,
        }
    }
    /// What the camera could not see from `from_s` to `to_s`, dated when it began.
    pub fn unseen(from_s: f64, to_s: f64, what: String) -> Self {
        Event::new(from_s, EventKind::Unseen { from_s, to_s, what })
    }
    /// The poem the event names, if any.
    pub fn poem(&self) -> Option<u8> {
        match &self.what {
            EventKind::Touch { poem, .. } => *poem,
            EventKind::Out { poem, .. }
            | EventKind::Send { poem, .. }
            | EventKind::Place { poem, .. } => Some(*poem),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------- decisions.jsonl

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TakeHow {
    Direct,
    PushOut,
    Simultaneous,
    Awarded,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Take {
    pub player: Player,
    pub how: TakeHow,
    pub t_s: f64,
    pub margin_ms: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FoulKind {
    WrongTerritory,
    DeadCard,
    Double,
    EarlyEntry,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Foul {
    pub player: Player,
    pub kind: FoulKind,
    pub t_s: f64,
    pub count: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardStatus {
    pub owner: Option<Player>,
    pub in_play: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendDone {
    pub from: Player,
    pub poem: u8,
    pub t_s: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sends {
    pub owed: BTreeMap<Player, u32>,
    pub done: Vec<SendDone>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewWhat {
    CloseCall,
    Contact,
    Unseen,
    UnknownCard,
    ForceMajeure,
    Rules,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub reason: String,
    pub what: ReviewWhat,
}

/// The ruling on one reading (a `"kind": "reading"` line of decisions.jsonl).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ruling {
    pub kind: String,
    pub seq: u32,
    pub poem: u8,
    pub card: CardStatus,
    pub kimariji: String,
    pub decided_s: f64,
    pub decided_estimated: bool,
    pub take: Option<Take>,
    pub fouls: Vec<Foul>,
    pub sends: Sends,
    pub cards_after: BTreeMap<Player, u32>,
    pub articles: Vec<String>,
    pub why: String,
    pub confidence: f64,
    pub needs_review: Option<Review>,
}

/// The closing `"kind": "result"` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchResult {
    pub kind: String,
    pub winner: Option<Player>,
    pub cards: BTreeMap<Player, u32>,
}
