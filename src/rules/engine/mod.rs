//! The judge: match state and the ruling on each reading, from events (contract
//! section 4) under articles 15-26. Pure: it never reads files, clocks or pixels.
//!
//! A reading's window is `[kami_start_s, next kami_start_s)`. Events are applied in
//! time order; the ruling is made when the window closes.
//!
//! The files: this one (the match state, events observed, phase 1: the reading's facts
//! gathered), `take` (phase 2), `fouls` (phase 3), `sends` (phase 4 and the ruling
//! closed).

mod fouls;
mod sends;
mod take;

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
/// Two touches the camera timed (with a timing error) and measured closer than this, and
/// within their error, are the same moment as far as it can tell: simultaneous (18-1),
/// flagged for review. Chosen on the eleven tuning recordings of docs/analyze.md, where
/// the simulator's same-moment takes were measured 0.4-1.7 ms apart and the takes a few
/// ms apart 0.0-1.9 ms when read under 2 ms: any bound from 1.3 to 2.2 ms rules 7 of the
/// 11 close takes right (5 with none).
pub const SAME_MOMENT_S: f64 = 0.0015;
/// Two touches within this many standard deviations of their combined timing error
/// cannot be ordered surely by the camera: the ruling holds the order measured (the
/// likelier one, with its probability as the confidence), flagged for review.
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

    /// Whether hand `h` counts as `p`'s lead hand: it is, or their lead hand is not known
    /// yet (13-2), so either hand counts. The hand the rules name for an early entry
    /// (21-1), a take (21-3) and an otetsuki (23-5).
    pub(super) fn counts_as_lead(&self, p: Player, h: Hand) -> bool {
        self.lead[p.index()].is_none_or(|l| l == h)
    }

    /// Rules on one reading. `events` are those of its window, in time order.
    ///
    /// Four phases over one set of facts: `gather` walks the window (15-1, 21-1, the
    /// card's place, touches, outs, sends), then `rule_take` (17-19, 21), `rule_fouls`
    /// (21-23, 24, 25-3) and `rule_sends` (25-26); `close` counts the cards (1).
    pub fn judge(&mut self, r: &Reading, events: &[Event]) -> Ruling {
        self.rule(r, events, false)
    }

    /// Rules a reading whose poem is only a guess (the sound's closest match, with no card
    /// taken to confirm it) as a reading of that poem, except that when nobody takes it,
    /// its card stays where it lies: a wrong guess then takes no card out of the count,
    /// and the guessed poem, read later, is ruled on its card as if the guess had not been
    /// made. (The poem is marked read, as the guess is most often right.)
    pub fn judge_guess(&mut self, r: &Reading, events: &[Event]) -> Ruling {
        self.rule(r, events, true)
    }

    fn rule(&mut self, r: &Reading, events: &[Event], guess: bool) -> Ruling {
        let mut draft = Draft::default();
        let mut facts = self.gather(r, events, &mut draft);
        facts.guess = guess;
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
            if self.counts_as_lead(p, h) && !early.iter().any(|(q, _)| *q == p) {
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
            guess: false,
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
    /// The poem is only a guess (`judge_guess`).
    guess: bool,
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
    /// Two touches the camera could not order surely: the probability that the order
    /// measured is right, the confidence of the close call it flags.
    order_p: Option<f64>,
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
            order_p: None,
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
