//! What the page says about the match, computed once from the contract's data: where
//! every card lies at a given time (layout + events), each ruling's deciding moment and
//! focus card, reaction times, takes by territory and fouls by kind.
//!
//! Reads `Layout`, `Reading`, `Event`, `Ruling` only; it does not judge (the rulings come
//! from `rules`), it only counts and measures what the rulings and events already say.

use crate::rules::geometry::FieldGeometry;
use crate::rules::model::{EventKind, FoulKind, Layout, Player, Reading, Ruling};
use crate::rules::Event;
use std::collections::BTreeMap;

/// One card on the field at some moment.
#[derive(Debug, Clone, PartialEq)]
pub struct CardOnField {
    /// `None`: a measured layout could not name it.
    pub poem: Option<u8>,
    pub owner: crate::rules::Player,
    pub x_mm: f64,
    pub y_mm: f64,
    pub angle_deg: f64,
}

/// The cards lying on the field at time `t_s`: the layout, less the cards that went out or
/// were picked up to be sent, plus the cards placed (contract section 4: `out`, `send`,
/// `place`).
pub fn cards_at(layout: &Layout, events: &[Event], t_s: f64) -> Vec<CardOnField> {
    let mut cards: Vec<CardOnField> = layout
        .cards
        .iter()
        .map(|c| CardOnField {
            poem: c.poem,
            owner: c.owner,
            x_mm: c.x_mm,
            y_mm: c.y_mm,
            angle_deg: c.angle_deg,
        })
        .collect();
    for e in events.iter().take_while(|e| e.t_s <= t_s) {
        match &e.what {
            EventKind::Out { poem, .. } | EventKind::Send { poem, .. } => {
                cards.retain(|c| c.poem != Some(*poem));
            }
            EventKind::Place {
                poem,
                owner,
                x_mm,
                y_mm,
                ..
            } => {
                cards.retain(|c| c.poem != Some(*poem));
                cards.push(CardOnField {
                    poem: Some(*poem),
                    owner: *owner,
                    x_mm: *x_mm,
                    y_mm: *y_mm,
                    // A placed card faces its owner: upright for A, turned for B.
                    angle_deg: if *owner == Player::A { 0.0 } else { 180.0 },
                });
            }
            _ => {}
        }
    }
    cards
}

/// The events in a reading's window `[kami_start_s, next kami_start_s)` (contract 4).
pub fn window<'a>(readings: &[Reading], seq: u32, events: &'a [Event]) -> &'a [Event] {
    let Some(i) = readings.iter().position(|r| r.seq == seq) else {
        return &[];
    };
    let from = readings[i].kami_start_s;
    let to = readings
        .get(i + 1)
        .map_or(f64::INFINITY, |r| r.kami_start_s);
    let a = events.partition_point(|e| e.t_s < from);
    let b = events.partition_point(|e| e.t_s < to);
    &events[a..b.max(a)]
}

/// The moment a ruling turns on, and the card the evidence is zoomed on.
#[derive(Debug, Clone, PartialEq)]
pub struct Focus {
    pub deciding_t_s: f64,
    /// Where the evidence looks: the read card, or the card a foul was made on.
    pub poem: Option<u8>,
    /// Field point to centre on, when the card is known.
    pub at_mm: Option<(f64, f64)>,
    /// What the moment is, for the caption.
    pub what: String,
}

/// The take, else the first foul, else the first touch, else the kimari-ji moment.
pub fn focus(layout: &Layout, readings: &[Reading], events: &[Event], r: &Ruling) -> Focus {
    let win = window(readings, r.seq, events);
    let first_touch = win.iter().find_map(|e| match &e.what {
        EventKind::Touch { player, poem, .. } => Some((e.t_s, *player, *poem)),
        _ => None,
    });
    let first_foul = r
        .fouls
        .iter()
        .min_by(|a, b| a.t_s.total_cmp(&b.t_s))
        .map(|f| (f.t_s, f.player, f.kind));
    let (t, what, poem) = if let Some(take) = &r.take {
        (take.t_s, format!("take by {}", take.player), Some(r.poem))
    } else if let Some((t, p, k)) = first_foul {
        // The card the foul was made on: the touch by that player nearest the foul.
        let poem = win
            .iter()
            .filter_map(|e| match &e.what {
                EventKind::Touch { player, poem, .. } if *player == p => {
                    Some(((e.t_s - t).abs(), *poem))
                }
                _ => None,
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .and_then(|x| x.1);
        (t, format!("{} by {p}", foul_name(k)), poem.or(Some(r.poem)))
    } else if let Some((t, p, poem)) = first_touch {
        (t, format!("first touch, by {p}"), poem)
    } else {
        (
            r.decided_s,
            "kimari-ji complete, nobody moved".into(),
            Some(r.poem),
        )
    };
    // Where that card lay just before the moment.
    let at_mm = poem.and_then(|p| {
        cards_at(layout, events, t - 1e-3)
            .into_iter()
            .find(|c| c.poem == Some(p))
            .map(|c| (c.x_mm, c.y_mm))
    });
    Focus {
        deciding_t_s: t,
        poem,
        at_mm,
        what,
    }
}

pub fn foul_name(k: FoulKind) -> &'static str {
    match k {
        FoulKind::WrongTerritory => "wrong territory",
        FoulKind::DeadCard => "dead card",
        FoulKind::Double => "double",
        FoulKind::EarlyEntry => "early entry",
    }
}

pub const FOUL_KINDS: [FoulKind; 4] = [
    FoulKind::WrongTerritory,
    FoulKind::DeadCard,
    FoulKind::Double,
    FoulKind::EarlyEntry,
];

/// A player's reaction on one reading: kimari-ji complete to their first touch of the
/// read card or of a card beside it in its territory (a push-out starts on a neighbour).
#[derive(Debug, Clone, PartialEq)]
pub struct Reaction {
    pub seq: u32,
    pub poem: u8,
    pub kimariji_len: usize,
    pub player: Player,
    pub reaction_ms: f64,
}

/// Reactions on every reading whose card was in play.
pub fn reactions(
    layout: &Layout,
    readings: &[Reading],
    events: &[Event],
    rulings: &[Ruling],
) -> Vec<Reaction> {
    let geom = FieldGeometry::new(layout.field.clone());
    let mut out = Vec::new();
    for r in rulings {
        let Some(owner) = r.card.owner else { continue };
        let win = window(readings, r.seq, events);
        for p in Player::BOTH {
            let first = win.iter().find(|e| match &e.what {
                EventKind::Touch {
                    player,
                    poem: Some(poem),
                    direct: true,
                    ..
                } if *player == p => {
                    *poem == r.poem
                        || cards_at(layout, events, e.t_s - 1e-6)
                            .iter()
                            .find(|c| c.poem == Some(*poem))
                            .is_some_and(|c| {
                                geom.territory_of(crate::rules::geometry::Pt::new(c.x_mm, c.y_mm))
                                    == Some(owner)
                            })
                }
                _ => false,
            });
            if let Some(e) = first {
                out.push(Reaction {
                    seq: r.seq,
                    poem: r.poem,
                    kimariji_len: r.kimariji.chars().count(),
                    player: p,
                    reaction_ms: (e.t_s - r.decided_s) * 1000.0,
                });
            }
        }
    }
    out
}

/// Takes per player, split by whose territory the card was in (own, opponent's).
pub fn takes_by_territory(rulings: &[Ruling]) -> BTreeMap<Player, (u32, u32)> {
    let mut m: BTreeMap<Player, (u32, u32)> = Player::BOTH.iter().map(|p| (*p, (0, 0))).collect();
    for r in rulings {
        if let (Some(t), Some(owner)) = (&r.take, r.card.owner) {
            let e = m.entry(t.player).or_default();
            if owner == t.player {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
    }
    m
}

/// Fouls per player and kind (counted as the ruling counts them; cancelled ones too),
/// and how many of them were cancelled (25-4).
pub fn fouls_by_kind(rulings: &[Ruling]) -> (BTreeMap<(Player, usize), u32>, u32) {
    let mut m = BTreeMap::new();
    let mut cancelled = 0;
    for f in rulings.iter().flat_map(|r| &r.fouls) {
        let k = FOUL_KINDS.iter().position(|k| *k == f.kind).unwrap_or(0);
        *m.entry((f.player, k)).or_insert(0) += f.count;
        if f.cancelled {
            cancelled += f.count;
        }
    }
    (m, cancelled)
}

/// Each player's cards on the field before the first reading and after each one.
pub fn card_counts(layout: &Layout, rulings: &[Ruling]) -> Vec<(u32, [u32; 2])> {
    let start =
        [Player::A, Player::B].map(|p| layout.cards.iter().filter(|c| c.owner == p).count() as u32);
    let mut out = vec![(0, start)];
    for r in rulings {
        let prev = out.last().map_or(start, |x| x.1);
        let a = r.cards_after.get(&Player::A).copied().unwrap_or(prev[0]);
        let b = r.cards_after.get(&Player::B).copied().unwrap_or(prev[1]);
        out.push((r.seq, [a, b]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::model::{CardPlacement, FieldSize, Hand, PlayerInfo};

    fn card(poem: u8, owner: Player, x_mm: f64) -> CardPlacement {
        let g = FieldGeometry::new(FieldSize::default());
        CardPlacement {
            poem: Some(poem),
            owner,
            row: 1,
            x_mm,
            y_mm: g.row_center_y_mm(owner, 1),
            angle_deg: 0.0,
            poem_score: None,
            candidates: Vec::new(),
        }
    }

    /// A's 17 and 18 side by side, B's 30; poem 17 read; B touches 17 at 0.30 s after the
    /// kimari-ji, A touches 18 (beside it) at 0.20 s: A reacted first (push-out start).
    fn small_match() -> (Layout, Vec<Reading>, Vec<Event>) {
        let layout = Layout {
            field: FieldSize::default(),
            players: [Player::A, Player::B]
                .into_iter()
                .map(|p| {
                    (
                        p,
                        PlayerInfo {
                            name: String::new(),
                            lead_hand: Some(Hand::Right),
                        },
                    )
                })
                .collect(),
            cards: vec![
                card(17, Player::A, -100.0),
                card(18, Player::A, -40.0),
                card(30, Player::B, 100.0),
            ],
        };
        let reading = Reading {
            seq: 1,
            poem: 17,
            kami_start_s: 1.0,
            onsets_s: Some(vec![1.0, 2.0, 2.2, 2.4, 2.6, 2.8, 3.0]),
            kami_end_s: Some(4.0),
            shimo_start_s: Some(6.0),
            void: false,
        };
        let touch = |t_s: f64, player: Player, poem: u8| {
            Event::new(
                t_s,
                EventKind::Touch {
                    player,
                    hand: Hand::Right,
                    poem: Some(poem),
                    territory: None,
                    direct: true,
                },
            )
        };
        let readings = vec![reading];
        let decided = crate::rules::adjudicate(&layout, &readings, &[]).0[0].decided_s;
        let events = vec![
            touch(decided + 0.20, Player::A, 18),
            touch(decided + 0.30, Player::B, 17),
        ];
        (layout, readings, events)
    }

    #[test]
    fn reaction_counts_a_touch_beside_the_read_card_in_its_territory() {
        let (layout, readings, events) = small_match();
        let (rulings, _) = crate::rules::adjudicate(&layout, &readings, &events);
        let rs = reactions(&layout, &readings, &events, &rulings);
        let of = |p: Player| rs.iter().find(|r| r.player == p).map(|r| r.reaction_ms);
        assert!((of(Player::A).unwrap() - 200.0).abs() < 1e-6);
        assert!((of(Player::B).unwrap() - 300.0).abs() < 1e-6);
    }

    #[test]
    fn cards_leave_the_board_when_out_and_come_back_when_placed() {
        let (layout, _, _) = small_match();
        let events = vec![
            Event::new(
                2.0,
                EventKind::Out {
                    poem: 17,
                    by: crate::rules::By::B,
                    hand: None,
                },
            ),
            Event::new(
                3.0,
                EventKind::Send {
                    from: Player::A,
                    poem: 18,
                },
            ),
            Event::new(
                3.5,
                EventKind::Place {
                    poem: 18,
                    owner: Player::B,
                    row: 1,
                    x_mm: 0.0,
                    y_mm: 60.0,
                },
            ),
        ];
        let poems = |t: f64| {
            cards_at(&layout, &events, t)
                .iter()
                .map(|c| c.poem)
                .collect::<Vec<_>>()
        };
        assert_eq!(poems(1.0), vec![Some(17), Some(18), Some(30)]);
        assert_eq!(poems(2.5), vec![Some(18), Some(30)]);
        assert_eq!(poems(3.2), vec![Some(30)]);
        let placed = cards_at(&layout, &events, 4.0);
        let c = placed.iter().find(|c| c.poem == Some(18)).unwrap();
        assert_eq!((c.owner, c.angle_deg), (Player::B, 180.0));
    }

    #[test]
    fn takes_are_split_by_the_card_owner() {
        let (layout, readings, events) = small_match();
        let (rulings, _) = crate::rules::adjudicate(&layout, &readings, &events);
        let t = takes_by_territory(&rulings);
        // B took A's card: a take from the opponent's territory.
        assert_eq!(rulings[0].take.as_ref().map(|t| t.player), Some(Player::B));
        assert_eq!(t[&Player::B], (0, 1));
        assert_eq!(t[&Player::A], (0, 0));
    }
}
