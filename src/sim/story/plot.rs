//! What happens in one reading: the plot chosen for the preset (a direct take, a close
//! race, a push-out, the fouls) and the reading acted out with the planner's gestures,
//! sends and straightened cards included.

use super::gestures::Planner;
use super::motion::{CardMotion, Pose};
use super::{hand_index, round_t, Moment, EVENT_TIME_EPS_S, LAUNCH_DELAY_S, REACTION_S};
use crate::rules::geometry::Pt;
use crate::rules::model::*;
use crate::sim::Preset;
use rand::seq::SliceRandom;
use rand::Rng;

/// What happens in one reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Plot {
    Direct,
    NearTie,
    PushOut,
    WrongTerritory,
    OtherHand,
    EarlyEntry,
    DeadQuiet,
    DeadTouch,
    DeadDouble,
    DeadBoth,
}

impl Plot {
    pub(super) fn name(self) -> &'static str {
        match self {
            Plot::Direct => "direct take",
            Plot::NearTie => "near-simultaneous touches",
            Plot::PushOut => "push-out",
            Plot::WrongTerritory => "take and wrong-territory touch",
            Plot::OtherHand => "take and other-hand touch",
            Plot::EarlyEntry => "early entry",
            Plot::DeadQuiet => "dead card, feint",
            Plot::DeadTouch => "dead-card touch",
            Plot::DeadDouble => "double otetsuki",
            Plot::DeadBoth => "both touch a dead card",
        }
    }
}

/// A sent card arrives still facing the sender; the receiver turns it.
pub(super) fn slot_for_send(slot: &Pose) -> Pose {
    Pose {
        angle_deg: slot.angle_deg + 180.0 + 8.0,
        ..*slot
    }
}

pub(super) fn choose_plot(pl: &mut Planner, dead: bool) -> Plot {
    let table: &[(Plot, u32)] = match (pl.preset, dead) {
        (Preset::Clean, false) => &[
            (Plot::Direct, 5),
            (Plot::PushOut, 2),
            (Plot::WrongTerritory, 2),
        ],
        (Preset::Clean, true) => &[
            (Plot::DeadQuiet, 4),
            (Plot::DeadTouch, 2),
            (Plot::DeadDouble, 1),
        ],
        (Preset::Realistic, false) => &[
            (Plot::Direct, 4),
            (Plot::NearTie, 2),
            (Plot::PushOut, 2),
            (Plot::WrongTerritory, 1),
            (Plot::OtherHand, 1),
            (Plot::EarlyEntry, 1),
        ],
        (Preset::Realistic, true) => &[
            (Plot::DeadQuiet, 4),
            (Plot::DeadTouch, 2),
            (Plot::DeadDouble, 1),
            (Plot::DeadBoth, 1),
        ],
        (Preset::Hard, false) => &[
            (Plot::Direct, 2),
            (Plot::NearTie, 4),
            (Plot::PushOut, 2),
            (Plot::WrongTerritory, 1),
            (Plot::OtherHand, 1),
            (Plot::EarlyEntry, 1),
        ],
        (Preset::Hard, true) => &[
            (Plot::DeadQuiet, 2),
            (Plot::DeadTouch, 2),
            (Plot::DeadDouble, 2),
            (Plot::DeadBoth, 2),
        ],
    };
    let total: u32 = table.iter().map(|(_, w)| w).sum();
    let mut r = pl.rng.gen_range(0..total);
    for (p, w) in table {
        if r < *w {
            return *p;
        }
        r -= w;
    }
    table[0].0
}

/// Plays one reading; returns when the take (and its aftermath) is over.
pub(super) fn act(
    pl: &mut Planner,
    plot: Plot,
    read: u8,
    seq: u32,
    kami: f64,
    decided: f64,
    leads: &[Hand; 2],
) -> f64 {
    let players = Player::BOTH;
    let mut end = decided;
    let rt = |pl: &mut Planner| pl.u(REACTION_S);
    // 21-1: a lead hand already over the field when the reading begins.
    let mut early_from: Option<Player> = None;
    if plot == Plot::EarlyEntry {
        let p = *players.choose(pl.rng).unwrap_or(&Player::A);
        let hi = pl.lead(p, leads);
        let arrive = kami - pl.u((0.03, 0.3));
        let start = (arrive - 0.35).max(pl.hands[hi].free_at());
        let over = Pt::new(
            pl.hands[hi].ready.x_mm + pl.u((-60.0, 60.0)),
            pl.geom.row_center_y_mm(p, 2),
        );
        let z = pl.u((50.0, 90.0));
        pl.hands[hi].move_to(start, arrive.max(start + 0.05), over, z);
        early_from = Some(p);
        pl.moments.push(Moment {
            what: "early entry".into(),
            seq,
            t_s: kami,
        });
    }
    if let Some(owner) = pl.owner.get(&read).copied() {
        // The read card is in play.
        let mut winner = if pl.rng.gen_bool(0.55) {
            owner
        } else {
            owner.other()
        };
        if let Some(e) = early_from {
            if pl.rng.gen_bool(0.5) {
                winner = e;
            }
        }
        let loser = winner.other();
        let wi = pl.lead(winner, leads);
        let li = pl.lead(loser, leads);
        if plot == Plot::PushOut {
            if let Some(t) = push_out(pl, read, owner, winner, wi, decided, seq, leads) {
                return t;
            }
        }
        // A feint by the loser on some other card before the take.
        if pl.preset != Preset::Clean && plot != Plot::NearTie && pl.rng.gen_bool(0.35) {
            let who = pl.rng_player();
            if let Some(c) = pl.some_card(who, decided, &[read]) {
                let target = pl.pose(c, decided);
                let t0 = decided + pl.u((0.05, 0.15));
                let p = Pt::new(target.x_mm, target.y_mm);
                end = end.max(pl.feint(li, t0, p));
            }
        }
        let w_target = pl.touch_point(read, decided, winner);
        let r = rt(pl);
        let t_w = pl.landing(wi, decided + r, w_target);
        let rival_tie = plot == Plot::NearTie
            || (pl.preset == Preset::Hard && pl.rng.gen_bool(0.3) && plot != Plot::EarlyEntry);
        let mut last_touch = t_w;
        let sweep = |pl: &mut Planner, at: Pt| {
            let sx = if at.x_mm.abs() < 1.0 {
                1.0
            } else {
                at.x_mm.signum()
            };
            Pt::new(at.x_mm + sx * pl.u((60.0, 140.0)), at.y_mm)
        };
        let lift = sweep(pl, w_target);
        let up_w = pl.tap(wi, t_w, w_target, lift);
        let pause = pl.u((0.2, 0.4));
        end = end.max(pl.return_ready(wi, up_w + pause));
        let li_busy = pl.hands[li].free_at() > t_w - 0.1;
        if rival_tie && !li_busy {
            // 18-1: touches 0-20 ms apart; sometimes exactly together.
            let dt = if pl.rng.gen_bool(0.2) {
                0.0
            } else {
                pl.u((0.0005, 0.020))
            };
            let l_target = pl.touch_point(read, decided, loser);
            let lift = sweep(pl, l_target);
            let t_l = t_w + dt;
            let up = pl.tap(li, t_l, l_target, lift);
            let pause = pl.u((0.2, 0.4));
            end = end.max(pl.return_ready(li, up + pause));
            last_touch = last_touch.max(t_l);
            pl.moments.push(Moment {
                what: format!("touches {:.1} ms apart", dt * 1e3),
                seq,
                t_s: t_w,
            });
        } else if pl.preset != Preset::Clean && !li_busy && pl.rng.gen_bool(0.6) {
            // The loser arrives late, where the card was.
            let l_target = pl.touch_point(read, decided, loser);
            let lift = sweep(pl, l_target);
            let t_l = t_w + pl.u((0.06, 0.3));
            let up = pl.tap(li, t_l, l_target, lift);
            let pause = pl.u((0.1, 0.3));
            end = end.max(pl.return_ready(li, up + pause));
        } else {
            pl.moments.push(Moment {
                what: "direct touch".into(),
                seq,
                t_s: t_w,
            });
        }
        let out = pl.fling_out(
            read,
            last_touch + LAUNCH_DELAY_S,
            winner,
            leads[winner.index()],
            None,
        );
        end = end.max(out + 0.3);
        match plot {
            Plot::WrongTerritory => {
                let terr = owner.other();
                if let Some(c) = pl.some_card(terr, t_w, &[read]) {
                    let hi = pl.lead(loser, leads);
                    let tgt = pl.touch_point(c, t_w, loser);
                    let t = pl.landing(hi, t_w + 0.05, tgt);
                    end = end.max(pl.foul_tap(hi, loser, t, tgt, seq, "wrong-territory touch"));
                }
            }
            Plot::OtherHand => {
                let other = if leads[loser.index()] == Hand::Right {
                    Hand::Left
                } else {
                    Hand::Right
                };
                let hi = hand_index(loser, other);
                let terr = if pl.rng.gen_bool(0.5) {
                    owner
                } else {
                    owner.other()
                };
                // 13-2 note: the hand that first touches a card in the match is the
                // lead hand, so a touch is one with the other hand only after the lead
                // hand has touched one.
                let lead_first = pl.first_tap_s[pl.lead(loser, leads)];
                if let Some(c) = pl.some_card(terr, t_w, &[read]) {
                    let tgt = pl.touch_point(c, t_w, loser);
                    let react = pl.u(REACTION_S);
                    let t = pl.landing(hi, decided + react, tgt);
                    if lead_first.is_some_and(|f| f < t) {
                        end = end.max(pl.foul_tap(hi, loser, t, tgt, seq, "other-hand touch"));
                    }
                }
            }
            _ => {}
        }
        if let Some(e) = early_from {
            let hi = pl.lead(e, leads);
            end = end.max(pl.return_ready(hi, pl.hands[hi].free_at().max(decided)));
        }
        return end;
    }
    // A dead card: 23-1 if anyone touches.
    let toucher = *players.choose(pl.rng).unwrap_or(&Player::A);
    let tap_card = |pl: &mut Planner, p: Player, terr: Player, t0: f64| -> f64 {
        let hi = pl.lead(p, leads);
        if let Some(c) = pl.some_card(terr, t0, &[]) {
            let tgt = pl.touch_point(c, t0, p);
            let t = pl.landing(hi, t0, tgt);
            let lift = Pt::new(tgt.x_mm, tgt.y_mm + p.toward_own_y() * 50.0);
            let up = pl.tap(hi, t, tgt, lift);
            pl.moments.push(Moment {
                what: "dead-card touch".into(),
                seq,
                t_s: t,
            });
            up
        } else {
            t0
        }
    };
    match plot {
        Plot::DeadTouch => {
            let terr = if pl.rng.gen_bool(0.5) {
                toucher
            } else {
                toucher.other()
            };
            let t0 = decided + pl.u(REACTION_S);
            let up = tap_card(pl, toucher, terr, t0);
            let hi = pl.lead(toucher, leads);
            end = end.max(pl.return_ready(hi, up + 0.1));
        }
        Plot::DeadDouble => {
            // 25-3: both territories touched.
            let t0 = decided + pl.u(REACTION_S);
            let up = tap_card(pl, toucher, toucher, t0);
            let up = tap_card(pl, toucher, toucher.other(), up + 0.02);
            let hi = pl.lead(toucher, leads);
            end = end.max(pl.return_ready(hi, up + 0.1));
        }
        Plot::DeadBoth => {
            for p in players {
                let t0 = decided + pl.u(REACTION_S);
                let terr = if pl.rng.gen_bool(0.5) { p } else { p.other() };
                let up = tap_card(pl, p, terr, t0);
                let hi = pl.lead(p, leads);
                end = end.max(pl.return_ready(hi, up + 0.1));
            }
        }
        _ => {
            // Hovering: a reach that stops in the air.
            let hi = pl.lead(toucher, leads);
            if let Some(c) = pl.some_card(toucher.other(), decided, &[]) {
                let q = pl.pose(c, decided);
                let t0 = decided + pl.u(REACTION_S);
                end = end.max(pl.feint(hi, t0, Pt::new(q.x_mm, q.y_mm)));
                pl.moments.push(Moment {
                    what: "hover over a dead card".into(),
                    seq,
                    t_s: t0 + 0.25,
                });
            }
        }
    }
    if let Some(e) = early_from {
        let hi = pl.lead(e, leads);
        end = end.max(pl.return_ready(hi, decided));
    }
    end
}

/// The resting cards of `owner`'s row holding the card, other than the card itself.
fn row_mates(pl: &Planner, read: u8, t: f64) -> Vec<(u8, Pose)> {
    let Some(owner) = pl.owner.get(&read).copied() else {
        return Vec::new();
    };
    let r = pl.pose(read, t);
    pl.owner
        .iter()
        .filter(|(p, o)| **o == owner && **p != read)
        .map(|(p, _)| (*p, pl.pose(*p, t)))
        .filter(|(_, q)| (q.y_mm - r.y_mm).abs() < 20.0)
        .collect()
}

/// The neighbour that can push `read` out: `read` is the outermost card of its row and
/// the neighbour lies just inside it.
fn push_partner(pl: &Planner, read: u8, t: f64) -> Option<(u8, Pose, f64)> {
    let r = pl.pose(read, t);
    let sgn = if r.x_mm >= 0.0 { 1.0 } else { -1.0 };
    let cw = pl.geom.size.card_w_mm;
    let mates = row_mates(pl, read, t);
    if mates.iter().any(|(_, q)| sgn * (q.x_mm - r.x_mm) > 0.0) {
        return None;
    }
    mates
        .into_iter()
        .find(|(_, q)| (0.0..14.0).contains(&(sgn * (r.x_mm - q.x_mm) - cw)))
        .map(|(n, q)| (n, q, sgn))
}

pub(super) fn pushable(pl: &Planner, read: u8, t: f64) -> bool {
    push_partner(pl, read, t).is_some()
}

/// 17-2: the hand drives a neighbouring card into the read card, which leaves the area.
#[allow(clippy::too_many_arguments)]
fn push_out(
    pl: &mut Planner,
    read: u8,
    owner: Player,
    winner: Player,
    wi: usize,
    decided: f64,
    seq: u32,
    leads: &[Hand; 2],
) -> Option<f64> {
    let r = pl.pose(read, decided);
    let (n, np, sgn) = push_partner(pl, read, decided)?;
    if !pl.card(n).still(decided - 1.0, decided + 3.0, &pl.hands) {
        return None;
    }
    let grip = Pt::new(np.x_mm - sgn * 12.0, np.y_mm + winner.toward_own_y() * 12.0);
    let react = pl.u(REACTION_S);
    let t_touch = pl.landing(wi, decided + react, grip);
    let t_touch = pl.tap_hold(wi, t_touch, grip);
    let w = pl.geom.size.width_mm;
    let n_end_x = sgn * (w / 2.0 + pl.u((-12.0, 12.0)));
    let push_dist = (n_end_x - np.x_mm).abs();
    let push_s = (push_dist / 1500.0).clamp(0.12, 0.3);
    let t_push0 = t_touch + 0.015;
    let t_push1 = t_push0 + push_s;
    let end_tip = Pt::new(grip.x_mm + (n_end_x - np.x_mm), grip.y_mm);
    {
        let h = &mut pl.hands[wi];
        h.key(t_push0, grip, 0.0);
        h.key(t_push1, end_tip, 0.0);
    }
    let turn = pl.u((-6.0, 6.0));
    pl.push_seg(
        n,
        t_push0,
        CardMotion::Carried {
            hand: wi,
            t0: t_push0,
            t1: t_push1,
            dx_mm: np.x_mm - grip.x_mm,
            dy_mm: np.y_mm - grip.y_mm,
            angle0: np.angle_deg,
            angle1: np.angle_deg + turn,
        },
    );
    let n_rest = pl.pose(n, t_push1);
    pl.push_seg(n, t_push1, CardMotion::Rest(n_rest));
    // When the pushed card meets the read card.
    let geom = pl.geom.clone();
    let reach = |pl: &Planner, t: f64| -> bool {
        let nc = pl.card(n).corners(t, &pl.hands, &geom);
        let rc = geom.card_corners(r.x_mm, r.y_mm, r.angle_deg);
        let front = nc
            .iter()
            .map(|c| sgn * c.x_mm)
            .fold(f64::NEG_INFINITY, f64::max);
        let back = rc
            .iter()
            .map(|c| sgn * c.x_mm)
            .fold(f64::INFINITY, f64::min);
        front >= back
    };
    if !reach(pl, t_push1) {
        return None;
    }
    let (mut lo, mut hi) = (t_push0, t_push1);
    while hi - lo > EVENT_TIME_EPS_S {
        let mid = 0.5 * (lo + hi);
        if reach(pl, mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let t_hit = hi;
    pl.designed.push(Event::new(
        round_t(t_hit),
        EventKind::Touch {
            player: winner,
            hand: leads[winner.index()],
            poem: Some(read),
            territory: None,
            direct: false,
        },
    ));
    let t_out = pl.fling_out(read, t_hit, winner, leads[winner.index()], Some(sgn));
    pl.moments.push(Moment {
        what: "push-out".into(),
        seq,
        t_s: t_out,
    });
    let up = t_push1 + 0.12;
    let away = Pt::new(end_tip.x_mm, end_tip.y_mm + winner.toward_own_y() * 50.0);
    pl.hands[wi].move_to(t_push1 + 0.02, up, away, 50.0);
    let mut end = pl.return_ready(wi, up + 0.1);
    // The owner puts the displaced card back where it lay.
    let oi = pl.lead(owner, leads);
    let back_at = end.max(t_touch + crate::rules::engine::TAKING_MOTION_S + 0.1);
    let (placed, free) = pl.carry(oi, back_at, n, np);
    let row = pl.geom.row_of(owner, np.y_mm);
    pl.designed.push(Event::new(
        round_t(placed),
        EventKind::Place {
            poem: n,
            owner,
            row,
            x_mm: np.x_mm,
            y_mm: np.y_mm,
        },
    ));
    end = end.max(free);
    Some(end)
}
