//! Phase 2 of a ruling: the take under 17-19 (the race for the read card: first direct
//! touches or a push-out), and 21-1/21-3 on who may have it.

use super::*;

impl Referee {
    /// Phase 2: the take under 17-19, and 21-1/21-3 on who may have it.
    pub(super) fn rule_take(&self, r: &Reading, f: &Facts, draft: &mut Draft) {
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
            if let Some(t) = draft.take.as_mut() {
                let off = t.player;
                if early_voids(off, &f.early) != off {
                    t.player = off.other();
                    t.how = TakeHow::Awarded;
                    draft.why.push(format!("{off}'s lead hand was in the playing area before the reading began: the take goes to {} (21-1).", off.other()));
                }
            }
        }
    }

    /// The race for a card in play: first direct touches (17-1, 17-3, 18-1, 21-3) or a
    /// push-out before any (17-2, 18-2).
    pub(super) fn rule_race(&self, r: &Reading, f: &Facts, draft: &mut Draft) {
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
                            let non_lead = hand.is_some_and(|h| !self.counts_as_lead(p, h));
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
                    (Some(x), Some(y)) => self.order_two_touches(owner, &f.early, x, y, draft),
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
                        if self.counts_as_lead(w.player, w.hand) {
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

    /// Who has the card when `w` is the first direct touch: its player, or the opponent
    /// when it was made with the hand that is not the lead hand (21-3) or by the one
    /// player whose lead hand entered early (21-1).
    fn has_card(&self, w: &SeenTouch, early: &[(Player, f64)]) -> Player {
        let p = if self.counts_as_lead(w.player, w.hand) {
            w.player
        } else {
            w.player.other()
        };
        early_voids(p, early)
    }

    /// Two direct touches of the read card, `x` and `y`: the first (`Ok`), or both when
    /// they were the same moment (`Err`, 18-1). Equal times are the same moment. Within
    /// `TIE_SIGMAS` of their combined timing error the camera cannot order them surely:
    /// measured closer than `SAME_MOMENT_S` they are the same moment as far as it can
    /// tell, else the order measured stands (the likelier one, its probability kept as the
    /// close call's confidence). Either is flagged for review unless the order decides
    /// nothing (`order_decides_nothing`): a person decides (contract 5).
    fn order_two_touches(
        &self,
        owner: Player,
        early: &[(Player, f64)],
        x: SeenTouch,
        y: SeenTouch,
        draft: &mut Draft,
    ) -> Result<SeenTouch, (SeenTouch, SeenTouch)> {
        let dt = (x.t_s - y.t_s).abs();
        let sigma = x.t_err_s.hypot(y.t_err_s);
        let first = if x.t_s <= y.t_s { x } else { y };
        if dt <= EXACT_TIE_S {
            return Err((x, y));
        }
        if dt > TIE_SIGMAS * sigma {
            return Ok(first);
        }
        let same = dt <= SAME_MOMENT_S;
        if self.order_decides_nothing(owner, early, &x, &y) {
            if !same {
                // Whoever was first, the same player has the card (21-1, 21-3).
                let has = self.has_card(&first, early);
                draft.why.push(format!("The touches are {:.1} ms apart, within the camera's timing error, but whoever touched first, {has} has the card.", dt * 1e3));
            }
        } else if same {
            draft.flag(
                ReviewWhat::CloseCall,
                format!("the touches are {:.1} ms apart, as near the same moment as the camera can tell ({:.1} ms; timing error {:.1} ms at {TIE_SIGMAS} standard deviations): simultaneous, the card to {owner} (18-1)", dt * 1e3, SAME_MOMENT_S * 1e3, TIE_SIGMAS * sigma * 1e3),
            );
        } else {
            let p_first = order_probability(dt, sigma);
            draft.order_p = Some(p_first);
            draft.flag(
                ReviewWhat::CloseCall,
                format!("the touches are {:.1} ms apart, within the camera's timing error ({:.1} ms at {TIE_SIGMAS} standard deviations): {} first is the likelier order ({:.0}%); touched at the same moment, the card would be {owner}'s (18-1)", dt * 1e3, TIE_SIGMAS * sigma * 1e3, first.player, p_first * 100.0),
            );
        }
        if same {
            Err((x, y))
        } else {
            Ok(first)
        }
    }

    /// Two direct touches of the read card closer than the timing error: whether the
    /// same player has the card when either came first and when they came together
    /// (18-1: the owner's), so that their order decides nothing (`rule_take`'s 21-1 and
    /// 21-3 give the card away alike in each).
    fn order_decides_nothing(
        &self,
        owner: Player,
        early: &[(Player, f64)],
        x: &SeenTouch,
        y: &SeenTouch,
    ) -> bool {
        let together = early_voids(owner, early);
        self.has_card(x, early) == together && self.has_card(y, early) == together
    }
}

/// The probability that the touch measured first was first, for two touches measured
/// `dt_s` apart with a combined timing error of `sigma_s` (one standard deviation, the
/// errors taken as normal): Φ(dt/σ).
pub(super) fn order_probability(dt_s: f64, sigma_s: f64) -> f64 {
    if sigma_s <= 0.0 {
        return 1.0;
    }
    0.5 * (1.0 + libm::erf(dt_s / sigma_s / std::f64::consts::SQRT_2))
}

/// 21-1: the take of the one player whose lead hand entered early goes to the opponent
/// (`rule_take`); with both or neither early, it stands.
fn early_voids(p: Player, early: &[(Player, f64)]) -> Player {
    match early {
        [(off, _)] if *off == p => p.other(),
        _ => p,
    }
}
