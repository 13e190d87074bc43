//! Phase 3 of a ruling: otetsuki (21-1 note, 23, 25-3), and what a person must look at
//! (2, 24).

use super::*;

impl Referee {
    /// Phase 3: otetsuki (21-1 note, 23, 25-3), and what a person must look at (2, 24).
    pub(super) fn rule_fouls(&self, r: &Reading, f: &Facts, draft: &mut Draft) {
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
            let by_lead = self.counts_as_lead(t.player, t.hand);
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
}
