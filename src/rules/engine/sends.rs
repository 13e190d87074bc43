//! Phase 4 of a ruling: sends under 25 (25-1..25-5), and the close: the cards after the
//! reading, the winner (1), and the ruling as written.

use super::*;

impl Referee {
    /// Phase 4: sends under 25 (25-1..25-5); the read card leaves the match.
    pub(super) fn rule_sends(
        &mut self,
        r: &Reading,
        f: &Facts,
        draft: &mut Draft,
    ) -> BTreeMap<Player, u32> {
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
        // The read card leaves the match once the reading is ruled on; the card of a
        // guessed poem nobody took stays where it lies.
        if f.guess && take.is_none() {
            if f.in_play || f.lost {
                draft.why.push(format!(
                    "Poem {} is only a guess and nobody took it: its card stays in the count.",
                    r.poem
                ));
            }
        } else if !r.void && (f.in_play || f.lost) {
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
    pub(super) fn close(
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
            // A close call of two touches' order is as sure as that order; any other,
            // a guess.
            draft.confidence = match draft.order_p {
                Some(p) => draft.confidence.min(p),
                None => draft.confidence * 0.6,
            };
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
