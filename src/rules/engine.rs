//! The judge: match state and the ruling on each reading, from events (contract
//! section 4) under articles 15-26. Pure: it never reads files, clocks or pixels.
//!
//! A reading's window is `[kami_start_s, next kami_start_s)`. Events are applied in
//! time order; the ruling is made when the window closes.

use crate::rules::geometry::FieldGeometry;
use crate::rules::kimariji::ReadPool;
use crate::rules::model::*;
use std::collections::{BTreeMap, BTreeSet};

/// Reader-tempo model used when a reading has no `onsets_s`: the first mora of the
/// kami-no-ku is held, the rest follow at an even pace (a typical tournament reader).
pub const FIRST_MORA_S: f64 = 1.15;
pub const MORA_S: f64 = 0.26;
/// A taking motion (23-3) lasts this long after the deciding event: touches within it
/// are judged; later touches are tidying or sending (23-4, 25-1).
pub const TAKING_MOTION_S: f64 = 1.0;
/// With no take (dead card, or nobody reached the card), touches are judged for this long
/// after the kimari-ji was decided.
pub const NO_TAKE_WINDOW_S: f64 = 2.0;
/// A touch of an unnamed card this long after the opponent's first otetsuki of the
/// reading may be a send answering it (25-1): the sender sees the foul, then reaches for
/// a card; the offender's own touches after that send are taking the card in. Touches
/// closer to it are the same reaction to the kimari-ji by both players; one player's
/// later touches (one hand across both territories, 25-3) are never a send.
pub const SEND_AFTER_FOUL_MIN_S: f64 = 0.5;
/// Two touch times closer than this are the same moment (18-1), whatever the error bars.
pub const EXACT_TIE_S: f64 = 1e-6;
/// Two touches within this many standard deviations of their combined timing error
/// cannot be ordered by the camera: simultaneous (18-1), flagged for review.
pub const TIE_SIGMAS: f64 = 2.0;

/// Where a card is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Location {
    /// On a territory; `pos` is unknown for a card sent but not yet placed.
    Field {
        owner: Player,
        pos: Option<(u8, f64, f64)>,
    },
    /// Knocked out of the playing area, still the owner's until put back (19, 12).
    Out { owner: Player },
    /// Taken, or otherwise removed from the match.
    Gone,
}

impl Location {
    fn owner(&self) -> Option<Player> {
        match self {
            Location::Field { owner, .. } | Location::Out { owner } => Some(*owner),
            Location::Gone => None,
        }
    }
}

/// The state of a match between readings.
#[derive(Debug, Clone)]
pub struct Referee {
    geometry: FieldGeometry,
    cards: BTreeMap<u8, Location>,
    /// The cards the layout could not name, by the territory they lie in.
    unnamed_of: [u32; 2],
    /// The poems those cards may be (their `candidates`); `None` when any card may be
    /// any poem.
    unnamed_may_be: Option<BTreeSet<u8>>,
    lead: [Option<Hand>; 2],
    pool: ReadPool,
    inside: BTreeSet<(Player, Hand)>,
    /// When each hand last entered the playing area (for close early-entry calls).
    entered_at: BTreeMap<(Player, Hand), (f64, f64)>,
    initial_cards: usize,
    winner: Option<Player>,
}

/// A touch as the judge sees it: who, with which hand, and where the card lay then.
#[derive(Debug, Clone, Copy)]
struct SeenTouch {
    t_s: f64,
    t_err_s: f64,
    conf: f64,
    player: Player,
    hand: Hand,
    /// `None`: a card the layout could not name, in `territory`.
    poem: Option<u8>,
    direct: bool,
    territory: Option<Player>,
}

impl Referee {
    pub fn new(layout: &Layout) -> Self {
        let geometry = FieldGeometry::new(layout.field.clone());
        let mut cards = BTreeMap::new();
        let mut unnamed_of = [0u32; 2];
        let mut unnamed_may_be = Some(BTreeSet::new());
        for c in &layout.cards {
            match c.poem {
                Some(p) => {
                    cards.insert(
                        p,
                        Location::Field {
                            owner: c.owner,
                            pos: Some((c.row, c.x_mm, c.y_mm)),
                        },
                    );
                }
                None => {
                    unnamed_of[c.owner.index()] += 1;
                    if c.candidates.is_empty() {
                        unnamed_may_be = None;
                    } else if let Some(s) = unnamed_may_be.as_mut() {
                        s.extend(c.candidates.iter().copied());
                    }
                }
            }
        }
        let initial_cards = cards.len();
        Referee {
            geometry,
            cards,
            unnamed_of,
            unnamed_may_be,
            lead: [layout.lead_hand(Player::A), layout.lead_hand(Player::B)],
            pool: ReadPool::new(),
            inside: BTreeSet::new(),
            entered_at: BTreeMap::new(),
            initial_cards,
            winner: None,
        }
    }

    pub fn geometry(&self) -> &FieldGeometry {
        &self.geometry
    }

    /// True when `poem` lies on a territory and has not been read yet: a card a reading
    /// may still be about.
    pub fn is_unread_on_field(&self, poem: u8) -> bool {
        !self.pool.is_read(poem) && matches!(self.cards.get(&poem), Some(Location::Field { .. }))
    }

    /// Cards a player has: on the territory or knocked out and not yet put back, the
    /// cards the layout could not name included (a card is the player's whatever its
    /// poem; without them a player left with only unnamed cards would have won, 1).
    pub fn cards_of(&self, p: Player) -> u32 {
        self.cards.values().filter(|l| l.owner() == Some(p)).count() as u32
            + self.unnamed_of[p.index()]
    }

    pub fn counts(&self) -> BTreeMap<Player, u32> {
        Player::BOTH
            .into_iter()
            .map(|p| (p, self.cards_of(p)))
            .collect()
    }

    /// Cards that left the match (taken or removed).
    pub fn cards_gone(&self) -> u32 {
        self.cards
            .values()
            .filter(|l| **l == Location::Gone)
            .count() as u32
    }

    pub fn initial_cards(&self) -> usize {
        self.initial_cards
    }

    pub fn location(&self, poem: u8) -> Option<Location> {
        self.cards.get(&poem).copied()
    }

    pub fn lead_hand(&self, p: Player) -> Option<Hand> {
        self.lead[p.index()]
    }

    pub fn winner(&self) -> Option<Player> {
        self.winner
    }

    pub fn result(&self) -> MatchResult {
        MatchResult {
            kind: "result".into(),
            winner: self.winner,
            cards: self.counts(),
        }
    }

    /// Applies an event's effect on the physical state (no judgement).
    pub fn observe(&mut self, e: &Event) {
        match &e.what {
            EventKind::Out { poem, .. } => {
                if let Some(Location::Field { owner, .. }) = self.cards.get(poem).copied() {
                    self.cards.insert(*poem, Location::Out { owner });
                }
            }
            EventKind::Enter { player, hand } => {
                self.inside.insert((*player, *hand));
                self.entered_at.insert((*player, *hand), (e.t_s, e.t_err_s));
            }
            EventKind::Leave { player, hand } => {
                self.inside.remove(&(*player, *hand));
            }
            EventKind::Send { from, poem } => {
                if let Some(Location::Field { owner, .. }) = self.cards.get(poem).copied() {
                    if owner == *from {
                        self.cards.insert(
                            *poem,
                            Location::Field {
                                owner: from.other(),
                                pos: None,
                            },
                        );
                    }
                }
            }
            EventKind::Place {
                poem,
                owner,
                row,
                x_mm,
                y_mm,
            } => {
                if let Some(l) = self.cards.get(poem).copied() {
                    if l != Location::Gone {
                        self.cards.insert(
                            *poem,
                            Location::Field {
                                owner: *owner,
                                pos: Some((*row, *x_mm, *y_mm)),
                            },
                        );
                    }
                }
            }
            EventKind::Touch { .. } | EventKind::Contact { .. } | EventKind::Unseen { .. } => {}
        }
    }

    fn hand_counts_for_entry(&self, p: Player, h: Hand) -> bool {
        // 21-1 names the lead hand; before it is known, either hand counts.
        self.lead[p.index()].is_none_or(|l| l == h)
    }

    /// Rules on one reading. `events` are those of its window, in time order.
    ///
    /// Four phases over one set of facts: `gather` walks the window (15-1, 21-1, the
    /// card's place, touches, outs, sends), then `rule_take` (17-19, 21), `rule_fouls`
    /// (21-23, 24, 25-3) and `rule_sends` (25-26); `close` counts the cards (1).
    pub fn judge(&mut self, r: &Reading, events: &[Event]) -> Ruling {
        let mut draft = Draft::default();
        let facts = self.gather(r, events, &mut draft);
        self.rule_take(r, &facts, &mut draft);
        self.rule_fouls(r, &facts, &mut draft);
        let owed = self.rule_sends(r, &facts, &mut draft);
        self.close(r, facts, draft, owed)
    }

    /// Phase 1: the reading's facts. Marks the poem read, finds early entries, where the
    /// read card lies, and walks the window in time order, applying each event's effect.
    fn gather(&mut self, r: &Reading, events: &[Event], draft: &mut Draft) -> Facts {
        // 15-1: the kimari-ji against the unread poems, and when it was complete.
        let kimariji = self
            .pool
            .kimariji(r.poem)
            .map(|k| (k.kana, k.len))
            .unwrap_or_default();
        self.pool.mark_read(r.poem);
        draft.articles.insert("15-1");
        let (decided_s, decided_estimated) = match &r.onsets_s {
            Some(on) if on.len() >= kimariji.1 && kimariji.1 > 0 => (on[kimariji.1 - 1], false),
            _ => (estimate_decided_s(r.kami_start_s, kimariji.1), true),
        };

        // 21-1: a hand already in the playing area when the kami-no-ku begins.
        let mut early: Vec<(Player, f64)> = Vec::new();
        for &(p, h) in &self.inside {
            if self.hand_counts_for_entry(p, h) && !early.iter().any(|(q, _)| *q == p) {
                let (t, err) = self
                    .entered_at
                    .get(&(p, h))
                    .copied()
                    .unwrap_or((r.kami_start_s, 0.0));
                if r.kami_start_s - t <= TIE_SIGMAS * err {
                    draft.flag(
                        ReviewWhat::CloseCall,
                        format!("{p}'s hand entered {:.1} ms before the kami-no-ku began, within the timing error", (r.kami_start_s - t) * 1e3),
                    );
                }
                early.push((p, t));
            }
        }

        // Where the read card lies as the reading begins.
        let start_loc = self.cards.get(&r.poem).copied();
        let (card_owner, in_play, lost) = match start_loc {
            Some(Location::Field { owner, .. }) => (Some(owner), true, false),
            Some(Location::Out { owner }) => (Some(owner), false, true),
            _ => (None, false, false),
        };
        let unnamed: u32 = self.unnamed_of.iter().sum();
        let read_maybe_unnamed = start_loc.is_none()
            && unnamed > 0
            && self
                .unnamed_may_be
                .as_ref()
                .is_none_or(|may_be| may_be.contains(&r.poem));
        if read_maybe_unnamed {
            draft.flag(
                ReviewWhat::UnknownCard,
                format!(
                    "poem {} is not among the named cards, and {unnamed} card(s) are still unnamed",
                    r.poem
                ),
            );
        } else if start_loc.is_none() && unnamed > 0 {
            // 23-1: ruled a dead card, on the layout's word that no unnamed card is it.
            draft.flag(
                ReviewWhat::UnknownCard,
                format!(
                    "poem {} is not among the named cards, and none of the {unnamed} unnamed card(s) matches it: ruled a dead card",
                    r.poem
                ),
            );
        }

        // Walk the window in time order, recording what the judgement needs.
        let sent_later: BTreeSet<(Player, u8)> = events
            .iter()
            .filter_map(|e| match e.what {
                EventKind::Send { from, poem } => Some((from, poem)),
                _ => None,
            })
            .collect();
        let mut facts = Facts {
            kimariji,
            decided_s,
            decided_estimated,
            early,
            card_owner,
            in_play,
            read_maybe_unnamed,
            lost,
            sent_later,
            touches: Vec::new(),
            out_of_read: None,
            sends_done: Vec::new(),
            late_sends: Vec::new(),
            contact_t: None,
            unseen: Vec::new(),
        };
        for e in events {
            match &e.what {
                EventKind::Touch {
                    player,
                    hand,
                    poem,
                    territory,
                    direct,
                } => {
                    if *direct && self.lead[player.index()].is_none() {
                        // 13-2 note: the hand that first touches a card is the lead hand.
                        self.lead[player.index()] = Some(*hand);
                        draft.articles.insert("13-2");
                    }
                    let territory = match poem {
                        Some(poem) => match self.cards.get(poem) {
                            Some(Location::Field { owner, .. }) => Some(*owner),
                            _ => None,
                        },
                        // Where the camera saw the unnamed card lie.
                        None => *territory,
                    };
                    facts.touches.push(SeenTouch {
                        t_s: e.t_s,
                        t_err_s: e.t_err_s,
                        conf: e.conf,
                        player: *player,
                        hand: *hand,
                        poem: *poem,
                        direct: *direct,
                        territory,
                    });
                }
                EventKind::Out { poem, by, hand }
                    if *poem == r.poem && facts.out_of_read.is_none() && in_play =>
                {
                    facts.out_of_read = Some(ReadCardOut {
                        t_s: e.t_s,
                        by: *by,
                        hand: *hand,
                        conf: e.conf,
                    });
                }
                EventKind::Send { from, poem } => {
                    let owns = matches!(self.cards.get(poem), Some(Location::Field { owner, .. }) if owner == from);
                    let s = SendDone {
                        from: *from,
                        poem: *poem,
                        t_s: e.t_s,
                    };
                    if r.shimo_start_s.is_some_and(|sh| e.t_s >= sh) {
                        // 25-5: the right to send is lost once the shimo-no-ku begins.
                        facts.late_sends.push(s);
                        continue;
                    }
                    if owns {
                        facts.sends_done.push(s);
                    }
                }
                EventKind::Contact { .. } => {
                    facts.contact_t.get_or_insert(e.t_s);
                }
                EventKind::Unseen { from_s, to_s, what } => {
                    facts.unseen.push((*from_s, *to_s, what.clone()))
                }
                _ => {}
            }
            self.observe(e);
        }
        facts
    }

    /// Phase 2: the take under 17-19, and 21-1/21-3 on who may have it.
    fn rule_take(&self, r: &Reading, f: &Facts, draft: &mut Draft) {
        if r.void {
            // 15-1 note, 23-6: a void reading counts no take and no otetsuki.
            draft.articles.insert("23-6");
            draft.fouls_invalid = true;
            draft.why.push(
                "The head judge declared the reading void: no take and no otetsuki count.".into(),
            );
        } else if f.lost {
            // 19-1: a lost card read goes to the opponent of its owner; otetsuki are invalid.
            let owner = f.card_owner.unwrap_or(Player::A);
            draft.articles.insert("19-1");
            draft.fouls_invalid = true;
            draft.take = Some(Take {
                player: owner.other(),
                how: TakeHow::Awarded,
                t_s: f.decided_s,
                margin_ms: None,
            });
            draft.why.push(format!(
                "Poem {} had left the playing area and was not put back: {} is awarded it; otetsuki do not count (19).",
                r.poem,
                owner.other()
            ));
        } else if f.in_play {
            self.rule_race(r, f, draft);
        } else {
            draft.articles.insert("23-1");
            draft.why.push(format!(
                "Poem {} is a dead card (on neither territory).",
                r.poem
            ));
        }

        // 21-1: early entry voids the offender's take, which goes to the opponent.
        if !f.early.is_empty() {
            draft.articles.insert("21-1");
            if f.early.len() == 1 {
                let off = f.early[0].0;
                if let Some(t) = draft.take.as_mut() {
                    if t.player == off {
                        t.player = off.other();
                        t.how = TakeHow::Awarded;
                        draft.why.push(format!("{off}'s lead hand was in the playing area before the reading began: the take goes to {} (21-1).", off.other()));
                    }
                }
            }
        }
    }

    /// The race for a card in play: first direct touches (17-1, 17-3, 18-1, 21-3) or a
    /// push-out before any (17-2, 18-2).
    fn rule_race(&self, r: &Reading, f: &Facts, draft: &mut Draft) {
        let owner = f.card_owner.unwrap_or(Player::A);
        let out_of_read = f.out_of_read;
        let until = out_of_read.map(|o| o.t_s).unwrap_or(f64::INFINITY);
        // Each player's first direct touch of the read card while it is still in the area (17-3).
        let first: [Option<SeenTouch>; 2] = Player::BOTH.map(|p| {
            f.touches
                .iter()
                .filter(|t| t.player == p && t.poem == Some(r.poem) && t.direct && t.t_s <= until)
                .min_by(|a, b| a.t_s.total_cmp(&b.t_s))
                .copied()
        });
        let rival_time = |p: Player| -> Option<f64> {
            let mut t = first[p.index()].map(|x| x.t_s);
            if let Some(o) = out_of_read {
                if o.by.player() == Some(p) || o.by == By::Both {
                    t = Some(t.map_or(o.t_s, |x| x.min(o.t_s)));
                }
            }
            t
        };
        match (first[0], first[1]) {
            (None, None) => match out_of_read {
                Some(ReadCardOut {
                    t_s: t,
                    by,
                    hand,
                    conf,
                }) => {
                    draft.confidence = draft.confidence.min(conf);
                    match by.player() {
                        None => {
                            // 18-2: a push-out nobody can be said to have won goes to the owner.
                            draft.articles.extend(["17-2", "18-2"]);
                            draft.take = Some(Take {
                                player: owner,
                                how: TakeHow::Simultaneous,
                                t_s: t,
                                margin_ms: Some(0.0),
                            });
                            draft.why.push(format!("Both drove {} out of the playing area together: it goes to its owner {owner} (18-2).", r.poem));
                        }
                        Some(p) => {
                            let non_lead =
                                hand.is_some_and(|h| self.lead[p.index()].is_some_and(|l| l != h));
                            let margin = rival_time(p.other()).map(|rt| (rt - t).abs() * 1e3);
                            if non_lead {
                                // 21-3 note: a push-out with the other hand does not count.
                                draft.articles.extend(["17-2", "21-3"]);
                                draft.take = Some(Take {
                                    player: p.other(),
                                    how: TakeHow::Awarded,
                                    t_s: t,
                                    margin_ms: margin,
                                });
                                draft.why.push(format!("{p} drove {} out with the hand that is not the lead hand: the take goes to {} (21-3).", r.poem, p.other()));
                            } else {
                                draft.articles.insert("17-2");
                                draft.take = Some(Take {
                                    player: p,
                                    how: TakeHow::PushOut,
                                    t_s: t,
                                    margin_ms: margin,
                                });
                                draft.why.push(format!("{p} drove {} wholly out of the playing area before any direct touch (17-2).", r.poem));
                            }
                        }
                    }
                }
                None => {
                    draft.articles.insert("28-1");
                    draft.flag(
                        ReviewWhat::Rules,
                        format!(
                            "nobody touched or drove out poem {}, which was in play",
                            r.poem
                        ),
                    );
                    draft.why.push(format!(
                        "Nobody took {}: the judge decides what becomes of it (28-1).",
                        r.poem
                    ));
                }
            },
            (a, b) => {
                let winner = match (a, b) {
                    (Some(x), None) | (None, Some(x)) => Ok(x),
                    (Some(x), Some(y)) => {
                        let dt = (x.t_s - y.t_s).abs();
                        let sigma = (x.t_err_s.powi(2) + y.t_err_s.powi(2)).sqrt();
                        if dt <= EXACT_TIE_S || dt <= TIE_SIGMAS * sigma {
                            if dt > EXACT_TIE_S {
                                draft.flag(
                                    ReviewWhat::CloseCall,
                                    format!("the touches are {:.1} ms apart, within the camera's timing error ({:.1} ms at {TIE_SIGMAS} standard deviations)", dt * 1e3, TIE_SIGMAS * sigma * 1e3),
                                );
                            }
                            Err((x, y))
                        } else if x.t_s < y.t_s {
                            Ok(x)
                        } else {
                            Ok(y)
                        }
                    }
                    (None, None) => unreachable!("matched above"),
                };
                match winner {
                    Err((x, y)) => {
                        // 18-1: simultaneous direct touches go to the owner of the card.
                        draft.articles.insert("18-1");
                        draft.confidence = draft.confidence.min(x.conf).min(y.conf);
                        draft.take = Some(Take {
                            player: owner,
                            how: TakeHow::Simultaneous,
                            t_s: x.t_s.min(y.t_s),
                            margin_ms: Some((x.t_s - y.t_s).abs() * 1e3),
                        });
                        draft.why.push(format!("A and B touched {} at the same moment: it goes to {owner}, on whose territory it lay (18-1).", r.poem));
                    }
                    Ok(w) => {
                        draft.confidence = draft.confidence.min(w.conf);
                        let margin = rival_time(w.player.other()).map(|rt| (rt - w.t_s) * 1e3);
                        let lead_ok = self.lead[w.player.index()].is_none_or(|l| l == w.hand);
                        if lead_ok {
                            draft.articles.insert("17-1");
                            if out_of_read.is_some() {
                                draft.articles.insert("17-3");
                            }
                            draft.take = Some(Take {
                                player: w.player,
                                how: TakeHow::Direct,
                                t_s: w.t_s,
                                margin_ms: margin,
                            });
                            let by = match margin {
                                Some(m) => format!(" {m:.1} ms before {}", w.player.other()),
                                None => String::new(),
                            };
                            draft.why.push(format!(
                                "{} touched {} in {owner}'s territory{by} (17-1).",
                                w.player, r.poem
                            ));
                        } else {
                            // 21-3: a direct touch with the other hand gives the card to the opponent.
                            draft.articles.insert("21-3");
                            draft.take = Some(Take {
                                player: w.player.other(),
                                how: TakeHow::Awarded,
                                t_s: w.t_s,
                                margin_ms: margin,
                            });
                            draft.why.push(format!("{} touched {} first but with the {} hand, not the lead hand: the take goes to {} (21-3).", w.player, r.poem, w.hand, w.player.other()));
                        }
                    }
                }
            }
        }
    }

    /// Phase 3: otetsuki (21-1 note, 23, 25-3), and what a person must look at (2, 24).
    fn rule_fouls(&self, r: &Reading, f: &Facts, draft: &mut Draft) {
        let anchor = draft.take.as_ref().map(|t| t.t_s);
        let window_end = {
            let end = match anchor {
                Some(t) => t + TAKING_MOTION_S,
                None => f.decided_s + NO_TAKE_WINDOW_S,
            };
            r.shimo_start_s.map_or(end, |sh| end.min(sh))
        };
        let read_territory = if f.in_play { f.card_owner } else { None };
        // The territory on which a touch is an otetsuki, by the reading alone (sends aside):
        // a hand's direct touch of another card than the read one, with the lead hand, on a
        // territory without the read card (23-1, 23-2, 23-5).
        let otetsuki_on = |t: &SeenTouch| -> Option<Player> {
            let by_lead = self.lead[t.player.index()].is_none_or(|l| l == t.hand);
            let unsure = t.poem.is_none() && f.read_maybe_unnamed;
            let territory = t
                .territory
                .filter(|&w| !(f.in_play && Some(w) == read_territory));
            (t.direct && t.t_s <= window_end && t.poem != Some(r.poem) && !unsure && by_lead)
                .then_some(territory)
                .flatten()
        };
        // Each player's first touch that may be an otetsuki: the opponent's send answering
        // it comes later (25-1), and the offender then takes the sent card in.
        let first_foul_s: [Option<f64>; 2] = Player::BOTH.map(|p| {
            f.touches
                .iter()
                .filter(|t| t.player == p && otetsuki_on(t).is_some())
                .map(|t| t.t_s)
                .reduce(f64::min)
        });
        let sends_after = |p: Player, t_s: f64| {
            first_foul_s[p.other().index()].is_some_and(|f0| t_s > f0 + SEND_AFTER_FOUL_MIN_S)
        };
        let first_send_s: [Option<f64>; 2] = Player::BOTH.map(|p| {
            f.touches
                .iter()
                .filter(|t| t.player == p && t.poem.is_none() && sends_after(p, t.t_s))
                .map(|t| t.t_s)
                .reduce(f64::min)
        });
        let sending_after = |p: Player, t_s: f64| {
            anchor.is_some_and(|a| t_s > a)
                || sends_after(p, t_s)
                || first_send_s[p.other().index()].is_some_and(|s| t_s >= s)
        };
        let mut fouls: Vec<Foul> = Vec::new();
        for p in Player::BOTH {
            let lead = self.lead[p.index()];
            let mut hit: BTreeMap<Player, f64> = BTreeMap::new();
            for t in f
                .touches
                .iter()
                .filter(|t| t.player == p && t.t_s <= window_end)
            {
                if t.poem == Some(r.poem) || !t.direct {
                    continue; // 23-2: struck by a card, not by the hand
                }
                if t.poem.is_none() && (f.read_maybe_unnamed || sending_after(p, t.t_s)) {
                    // An unnamed card may be the read card itself; after the take or an
                    // otetsuki, a hand on one may be sending it or taking it in (25-1),
                    // which the camera cannot date for a card it cannot name.
                    continue;
                }
                if lead.is_some_and(|l| l != t.hand) {
                    draft.articles.insert("23-5");
                    continue; // 23-5: the other hand commits no otetsuki
                }
                let sent_later =
                    |q: Player| t.poem.is_some_and(|poem| f.sent_later.contains(&(q, poem)));
                if sent_later(p) {
                    continue; // 25-1: picking up the card to send
                }
                if sent_later(p.other())
                    && f.touches
                        .iter()
                        .any(|u| u.player == p.other() && u.poem == t.poem && u.t_s <= t.t_s)
                {
                    continue; // 25-1: taking in the card the opponent is sending
                }
                // 23-1 note: other cards on the read card's territory are no otetsuki.
                let Some(terr) = otetsuki_on(t) else { continue };
                hit.entry(terr).or_insert(t.t_s);
            }
            if hit.is_empty() {
                continue;
            }
            let t_first = hit.values().copied().fold(f64::INFINITY, f64::min);
            if f.in_play || f.lost || r.void {
                draft.articles.insert("23-1");
                fouls.push(Foul {
                    player: p,
                    kind: FoulKind::WrongTerritory,
                    t_s: t_first,
                    count: 1,
                    cancelled: false,
                });
            } else if hit.len() == 2 {
                draft.articles.insert("25-3");
                fouls.push(Foul {
                    player: p,
                    kind: FoulKind::Double,
                    t_s: t_first,
                    count: 2,
                    cancelled: false,
                });
            } else {
                draft.articles.insert("23-1");
                fouls.push(Foul {
                    player: p,
                    kind: FoulKind::DeadCard,
                    t_s: t_first,
                    count: 1,
                    cancelled: false,
                });
            }
        }
        for (p, t) in &f.early {
            // One otetsuki per player and reading (a double counts two, 25-3): an early
            // entry is the offender's otetsuki, unless a double already charges more.
            let double = fouls.iter().any(|f| f.player == *p && f.count == 2);
            for f in fouls.iter_mut().filter(|f| f.player == *p && f.count == 1) {
                f.cancelled = true;
            }
            fouls.push(Foul {
                player: *p,
                kind: FoulKind::EarlyEntry,
                t_s: *t,
                count: 1,
                cancelled: double,
            });
        }
        if draft.fouls_invalid {
            for f in fouls.iter_mut() {
                f.cancelled = true;
            }
        } else if f.early.len() == 1 {
            // 21 note: the side that kept to the rules has its otetsuki lifted.
            let off = f.early[0].0;
            for f in fouls.iter_mut().filter(|f| f.player != off) {
                f.cancelled = true;
            }
            draft.why.push(format!("{off} is charged an otetsuki for early entry and {}'s otetsuki, if any, are lifted (21 note).", off.other()));
        }
        for f in fouls
            .iter()
            .filter(|f| !f.cancelled && f.kind != FoulKind::EarlyEntry)
        {
            draft.why.push(match f.kind {
                FoulKind::WrongTerritory => format!(
                    "{} touched a territory without the read card (23-1).",
                    f.player
                ),
                FoulKind::DeadCard => {
                    format!("{} touched a card during a dead card (23-1).", f.player)
                }
                FoulKind::Double => format!(
                    "{} touched both territories during a dead card: a double otetsuki (25-3).",
                    f.player
                ),
                FoulKind::EarlyEntry => String::new(),
            });
        }
        if let Some(t) = f.contact_t {
            if fouls.iter().any(|f| !f.cancelled) {
                draft.articles.insert("24-1");
                draft.flag(ReviewWhat::Contact, format!("the players' hands touched at {t:.3} s; whether an otetsuki is mutual is the judge's call (24)"));
            }
        }
        if let Some((a, b, what)) = f
            .unseen
            .iter()
            .find(|(a, b, _)| *b >= r.kami_start_s && *a <= window_end)
        {
            draft.flag(
                ReviewWhat::Unseen,
                format!("the camera could not see {what} from {a:.3} s to {b:.3} s"),
            );
        }
        draft.fouls = fouls;
    }

    /// Phase 4: sends under 25 (25-1..25-5); the read card leaves the match.
    fn rule_sends(&mut self, r: &Reading, f: &Facts, draft: &mut Draft) -> BTreeMap<Player, u32> {
        let take = draft.take.as_ref();
        let mut owed_raw = [0u32; 2];
        if let (Some(t), Some(owner)) = (take, f.card_owner) {
            if t.player != owner && (f.in_play || f.lost) {
                owed_raw[t.player.index()] += 1; // 25-1
                draft.articles.insert("25-1");
            }
        }
        let take_send = owed_raw;
        for foul in draft.fouls.iter().filter(|f| !f.cancelled) {
            owed_raw[foul.player.other().index()] += foul.count;
        }
        if take_send.iter().sum::<u32>() > 0
            && draft.fouls.iter().any(|foul| {
                !foul.cancelled && take.is_some_and(|t| foul.player == t.player.other())
            })
        {
            draft.articles.insert("25-2");
        }
        let common = owed_raw[0].min(owed_raw[1]);
        if common > 0 {
            // 25-4: what both must send cancels; only the difference is sent.
            draft.articles.insert("25-4");
            for p in Player::BOTH {
                // p's fouls are what the opponent may send for; they are cancelled first.
                let mut left = common;
                for foul in draft
                    .fouls
                    .iter_mut()
                    .filter(|f| f.player == p && !f.cancelled)
                {
                    if foul.count <= left {
                        left -= foul.count;
                        foul.cancelled = true;
                    }
                }
            }
            draft.why.push(format!(
                "Both sides owed cards: {common} cancel on each side (25-4)."
            ));
        }
        // The read card leaves the match once the reading is ruled on.
        if !r.void && (f.in_play || f.lost) {
            self.cards.insert(r.poem, Location::Gone);
        }
        // A player cannot send more cards than they hold: whoever took their last card has won.
        let mut owed: BTreeMap<Player, u32> = BTreeMap::new();
        for p in Player::BOTH {
            let sent = |q: Player| f.sends_done.iter().filter(|s| s.from == q).count() as u32;
            let held_before_sends = (self.cards_of(p) + sent(p)).saturating_sub(sent(p.other()));
            let net = (owed_raw[p.index()] - common).min(held_before_sends);
            if net > 0 {
                owed.insert(p, net);
            }
        }
        for (p, n) in &owed {
            let done = f.sends_done.iter().filter(|s| s.from == *p).count() as u32;
            if done < *n {
                draft.why.push(format!(
                    "{p} owes {n} card(s) and sent {done} before the shimo-no-ku began."
                ));
            } else {
                draft.why.push(format!("{p} sends {n} card(s) (25)."));
            }
        }
        if !f.late_sends.is_empty() {
            draft.articles.insert("25-5");
            draft.why.push(format!(
                "{} card(s) sent after the shimo-no-ku began do not count (25-5).",
                f.late_sends.len()
            ));
        }
        owed
    }

    /// The cards after the reading, the winner (1), and the ruling as written.
    fn close(
        &mut self,
        r: &Reading,
        f: Facts,
        mut draft: Draft,
        owed: BTreeMap<Player, u32>,
    ) -> Ruling {
        if draft.take.is_none()
            && draft.fouls.iter().all(|f| f.cancelled)
            && !f.in_play
            && !f.lost
            && !r.void
        {
            draft
                .why
                .push("Nobody touched a card: nothing to rule.".into());
        }
        if matches!(
            draft.review,
            Some(Review {
                what: ReviewWhat::CloseCall,
                ..
            })
        ) {
            draft.confidence *= 0.6;
        }

        let cards_after = self.counts();
        if self.winner.is_none() {
            for p in Player::BOTH {
                if cards_after[&p] == 0 {
                    self.winner = Some(p);
                    draft.articles.insert("1-2");
                    draft
                        .why
                        .push(format!("{p} has no cards left and wins (1)."));
                }
            }
        }

        Ruling {
            kind: "reading".into(),
            seq: r.seq,
            poem: r.poem,
            card: CardStatus {
                owner: f.card_owner,
                in_play: f.in_play,
            },
            kimariji: f.kimariji.0,
            decided_s: f.decided_s,
            decided_estimated: f.decided_estimated,
            take: draft.take,
            fouls: draft.fouls,
            sends: Sends {
                owed,
                done: f.sends_done,
            },
            cards_after,
            articles: draft.articles.into_iter().map(String::from).collect(),
            why: draft.why.join(" "),
            confidence: draft.confidence,
            needs_review: draft.review,
        }
    }
}

/// The read card leaving the playing area during its reading (17-2).
#[derive(Debug, Clone, Copy)]
struct ReadCardOut {
    t_s: f64,
    by: By,
    hand: Option<Hand>,
    conf: f64,
}

/// What the window of one reading holds, gathered once and read by every phase.
#[derive(Debug)]
struct Facts {
    /// The kimari-ji (kana, length) as the reading began (15-1).
    kimariji: (String, usize),
    decided_s: f64,
    decided_estimated: bool,
    /// Players whose lead hand was inside the area at `kami_start_s`, and since when (21-1).
    early: Vec<(Player, f64)>,
    card_owner: Option<Player>,
    in_play: bool,
    /// The read poem names no card of the layout while some cards are unnamed: it may be
    /// one of them.
    read_maybe_unnamed: bool,
    /// Out of the playing area and not put back (19).
    lost: bool,
    /// Cards each player sends during the window: touching them is not an otetsuki
    /// (25-1), for the sender nor, once the sender has touched it, for the receiver
    /// taking it in (the camera dates a send when the card settles, after that).
    sent_later: BTreeSet<(Player, u8)>,
    touches: Vec<SeenTouch>,
    out_of_read: Option<ReadCardOut>,
    sends_done: Vec<SendDone>,
    late_sends: Vec<SendDone>,
    contact_t: Option<f64>,
    unseen: Vec<(f64, f64, String)>,
}

/// The ruling as the phases build it.
#[derive(Debug)]
struct Draft {
    articles: BTreeSet<&'static str>,
    why: Vec<String>,
    review: Option<Review>,
    take: Option<Take>,
    confidence: f64,
    /// 19, 23-6: the reading's otetsuki do not count.
    fouls_invalid: bool,
    fouls: Vec<Foul>,
}

impl Default for Draft {
    fn default() -> Self {
        Draft {
            articles: BTreeSet::new(),
            why: Vec::new(),
            review: None,
            take: None,
            confidence: 1.0,
            fouls_invalid: false,
            fouls: Vec::new(),
        }
    }
}

impl Draft {
    /// The first reason for review stands; later ones are not added.
    fn flag(&mut self, what: ReviewWhat, reason: String) {
        if self.review.is_none() {
            self.review = Some(Review { reason, what });
        }
    }
}

/// `decided_s` from the reader-tempo model: onset of the `len`-th unit.
pub fn estimate_decided_s(kami_start_s: f64, len: usize) -> f64 {
    match len {
        0 | 1 => kami_start_s,
        n => kami_start_s + FIRST_MORA_S + MORA_S * (n as f64 - 2.0),
    }
}

/// A whole match: rulings for each reading in order, stopping when a player has won,
/// then the result. `on_ruling` is called as each ruling is made (so a caller can write
/// and flush it at once).
pub fn adjudicate_with(
    layout: &Layout,
    readings: &[Reading],
    events: &[Event],
    mut on_ruling: impl FnMut(&Ruling),
) -> (Vec<Ruling>, MatchResult) {
    let mut referee = Referee::new(layout);
    let mut rulings = Vec::with_capacity(readings.len());
    let mut i = 0;
    let first_start = readings.first().map_or(f64::INFINITY, |r| r.kami_start_s);
    while i < events.len() && events[i].t_s < first_start {
        referee.observe(&events[i]);
        i += 1;
    }
    for (k, r) in readings.iter().enumerate() {
        if referee.winner().is_some() {
            break;
        }
        let end = readings
            .get(k + 1)
            .map_or(f64::INFINITY, |n| n.kami_start_s);
        let j = i + events[i..].iter().take_while(|e| e.t_s < end).count();
        let ruling = referee.judge(r, &events[i..j]);
        on_ruling(&ruling);
        rulings.push(ruling);
        i = j;
    }
    (rulings, referee.result())
}

/// A whole match, collected.
pub fn adjudicate(
    layout: &Layout,
    readings: &[Reading],
    events: &[Event],
) -> (Vec<Ruling>, MatchResult) {
    adjudicate_with(layout, readings, events, |_| {})
}
