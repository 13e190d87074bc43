//! The rules engine against the rule book: one test per article, each with the smallest
//! match that exercises it (articles as numbered in the official detailed rules).

use karuta_referee::rules::model::*;
use karuta_referee::rules::{adjudicate, geometry::FieldGeometry, Referee};
use std::collections::BTreeMap;

use Player::{A, B};

/// A layout with A's and B's cards in row 1 of each territory, lead hands right (A) and
/// left (B).
fn layout(a: &[u8], b: &[u8]) -> Layout {
    let g = FieldGeometry::default();
    let mut cards = Vec::new();
    for (owner, list) in [(A, a), (B, b)] {
        for (i, &p) in list.iter().enumerate() {
            cards.push(CardPlacement {
                poem: Some(p),
                owner,
                row: 1,
                x_mm: -400.0 + 60.0 * i as f64,
                y_mm: g.row_center_y_mm(owner, 1),
                angle_deg: 0.0,
                poem_score: None,
                candidates: Vec::new(),
            });
        }
    }
    let mut players = BTreeMap::new();
    players.insert(
        A,
        PlayerInfo {
            name: "A".into(),
            lead_hand: Some(Hand::Right),
        },
    );
    players.insert(
        B,
        PlayerInfo {
            name: "B".into(),
            lead_hand: Some(Hand::Left),
        },
    );
    Layout {
        field: FieldSize::default(),
        players,
        cards,
    }
}

fn lead(p: Player) -> Hand {
    match p {
        A => Hand::Right,
        B => Hand::Left,
    }
}

/// Reading `seq` of `poem` starting at 10 s x seq, every kana onset given.
fn reading(seq: u32, poem: u8) -> Reading {
    let k0 = 10.0 * seq as f64;
    Reading {
        seq,
        poem,
        kami_start_s: k0,
        onsets_s: Some(
            (0..6)
                .map(|i| {
                    if i == 0 {
                        k0
                    } else {
                        k0 + 1.15 + 0.26 * (i - 1) as f64
                    }
                })
                .collect(),
        ),
        kami_end_s: Some(k0 + 4.0),
        shimo_start_s: Some(k0 + 8.0),
        void: false,
    }
}

fn ev(t_s: f64, what: EventKind) -> Event {
    Event::new(t_s, what)
}
fn touch(t_s: f64, player: Player, poem: u8) -> Event {
    ev(
        t_s,
        EventKind::Touch {
            player,
            hand: lead(player),
            poem: Some(poem),
            territory: None,
            direct: true,
        },
    )
}
fn touch_other_hand(t_s: f64, player: Player, poem: u8) -> Event {
    let hand = if lead(player) == Hand::Right {
        Hand::Left
    } else {
        Hand::Right
    };
    ev(
        t_s,
        EventKind::Touch {
            player,
            hand,
            poem: Some(poem),
            territory: None,
            direct: true,
        },
    )
}
fn out(t_s: f64, poem: u8, by: By) -> Event {
    ev(
        t_s,
        EventKind::Out {
            poem,
            by,
            hand: None,
        },
    )
}
fn send(t_s: f64, from: Player, poem: u8) -> Event {
    ev(t_s, EventKind::Send { from, poem })
}

/// Rules on one reading (seq 1) of `poem`, with events at 10 s + offset.
fn judge_one(l: &Layout, poem: u8, events: &[Event]) -> Ruling {
    let (rulings, _) = adjudicate(l, &[reading(1, poem)], events);
    rulings.into_iter().next().expect("one ruling")
}

fn owed(r: &Ruling, p: Player) -> u32 {
    r.sends.owed.get(&p).copied().unwrap_or(0)
}
fn live_fouls(r: &Ruling, p: Player) -> u32 {
    r.fouls
        .iter()
        .filter(|f| f.player == p && !f.cancelled)
        .map(|f| f.count)
        .sum()
}
fn take(r: &Ruling) -> (Player, TakeHow) {
    let t = r.take.as_ref().expect("a take");
    (t.player, t.how)
}

#[test]
fn art_15_1_decided_at_the_last_kana_of_the_dynamic_kimariji() {
    // 44 あふこ needs three kana while 60 and 95 are unread, two once they are read.
    let l = layout(&[44, 1], &[2, 3]);
    let r = judge_one(&l, 44, &[]);
    assert_eq!(r.kimariji, "あふこ");
    assert!((r.decided_s - (10.0 + 1.15 + 0.26)).abs() < 1e-9);
    let rs = vec![reading(1, 60), reading(2, 95), reading(3, 44)];
    let (rulings, _) = adjudicate(&l, &rs, &[]);
    assert_eq!(rulings[2].kimariji, "あふ");
    assert!((rulings[2].decided_s - (30.0 + 1.15)).abs() < 1e-9);
    assert!(!rulings[2].decided_estimated);
}

#[test]
fn art_15_1_without_onsets_decided_is_estimated() {
    let l = layout(&[44], &[30]);
    let mut r = reading(1, 44);
    r.onsets_s = None;
    let (rulings, _) = adjudicate(&l, &[r], &[]);
    assert!(rulings[0].decided_estimated);
    // Three kana: the held first mora and one more at the reader's pace.
    let want =
        10.0 + karuta_referee::rules::engine::FIRST_MORA_S + karuta_referee::rules::engine::MORA_S;
    assert!((rulings[0].decided_s - want).abs() < 1e-9);
}

#[test]
fn art_17_1_first_direct_touch_with_the_lead_hand_takes() {
    let l = layout(&[5], &[30]);
    let r = judge_one(&l, 5, &[touch(11.80, B, 5), touch(11.82, A, 5)]);
    assert_eq!(take(&r), (B, TakeHow::Direct));
    let m = r.take.as_ref().unwrap().margin_ms.unwrap();
    assert!((m - 20.0).abs() < 1e-6, "margin {m}");
    assert!(r.articles.contains(&"17-1".to_string()));
    // 25-1: B took from A's territory and may send one.
    assert_eq!(owed(&r, B), 1);
}

#[test]
fn art_17_1_taking_your_own_card_sends_nothing() {
    let l = layout(&[5], &[30]);
    let r = judge_one(&l, 5, &[touch(11.80, A, 5), touch(11.81, B, 5)]);
    assert_eq!(take(&r), (A, TakeHow::Direct));
    assert!(r.sends.owed.is_empty());
    assert_eq!(r.cards_after[&A], 0);
}

#[test]
fn art_17_2_push_out_takes_when_the_card_is_wholly_out() {
    let l = layout(&[5, 6], &[30]);
    let r = judge_one(&l, 5, &[out(11.80, 5, By::B), touch(11.90, A, 5)]);
    assert_eq!(take(&r), (B, TakeHow::PushOut));
    assert!(r.articles.contains(&"17-2".to_string()));
}

#[test]
fn art_17_2_note_a_card_that_stays_on_the_field_is_no_push_out() {
    // B shoves the card but it never leaves the area (no `out`): A's touch takes.
    let l = layout(&[5, 6], &[30]);
    let r = judge_one(&l, 5, &[touch(11.90, A, 5)]);
    assert_eq!(take(&r), (A, TakeHow::Direct));
}

#[test]
fn art_17_2_note_disadvantageous_take_cancels_against_own_otetsuki() {
    // B knocks A's card out and touches B's own territory on the way: take and otetsuki.
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 5, &[out(11.80, 5, By::B), touch(11.85, B, 30)]);
    assert_eq!(take(&r), (B, TakeHow::PushOut));
    assert_eq!(r.fouls.len(), 1);
    assert!(
        r.fouls[0].cancelled,
        "25-4 cancels the otetsuki against the send"
    );
    assert!(r.sends.owed.is_empty());
    assert!(r.articles.contains(&"25-4".to_string()));
}

#[test]
fn art_17_3_a_direct_touch_while_the_card_is_still_inside_beats_the_push_out() {
    let l = layout(&[5, 6], &[30]);
    let r = judge_one(&l, 5, &[touch(11.78, A, 5), out(11.80, 5, By::B)]);
    assert_eq!(take(&r), (A, TakeHow::Direct));
    assert!(r.articles.contains(&"17-3".to_string()));
}

#[test]
fn art_18_1_simultaneous_direct_touches_go_to_the_owner() {
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 30, &[touch(11.80, A, 30), touch(11.80, B, 30)]);
    assert_eq!(take(&r), (B, TakeHow::Simultaneous));
    assert!(r.needs_review.is_none());
}

#[test]
fn art_18_1_touches_closer_than_the_timing_error_keep_their_measured_order_and_are_flagged() {
    // 18-1 is for touches at the same moment. 3 ms apart with 2 ms errors, the camera
    // cannot order them surely: the ruling holds the likelier order, A's (the earlier
    // touch), with its probability as the confidence, and a person decides.
    let l = layout(&[5, 6], &[30, 31]);
    let mut a = touch(11.800, A, 30);
    let mut b = touch(11.803, B, 30);
    a.t_err_s = 0.002;
    b.t_err_s = 0.002;
    let r = judge_one(&l, 30, &[a.clone(), b.clone()]);
    assert_eq!(take(&r), (A, TakeHow::Direct));
    let review = r.needs_review.as_ref().expect("flagged");
    assert_eq!(review.what, ReviewWhat::CloseCall);
    assert!(review.reason.contains("18-1"), "{}", review.reason);
    // Φ(3 / (2·√2)) = 0.856.
    assert!((r.confidence - 0.856).abs() < 0.005, "{}", r.confidence);
    // B measured first instead: B's take, as likely.
    a.t_s = 11.806;
    let r = judge_one(&l, 30, &[a, b]);
    assert_eq!(take(&r), (B, TakeHow::Direct));
    assert!((r.confidence - 0.856).abs() < 0.005, "{}", r.confidence);
    // Timed 1 ms apart with those errors, they are the same moment as far as the camera
    // can tell: simultaneous, to the owner (B), and flagged.
    let mut a = touch(11.800, A, 30);
    let mut b = touch(11.801, B, 30);
    a.t_err_s = 0.002;
    b.t_err_s = 0.002;
    let r = judge_one(&l, 30, &[a, b]);
    assert_eq!(take(&r), (B, TakeHow::Simultaneous));
    assert_eq!(r.needs_review.as_ref().unwrap().what, ReviewWhat::CloseCall);
    // Exact times 1 ms or 3 ms apart are not simultaneous, nor in doubt.
    let r = judge_one(&l, 30, &[touch(11.800, A, 30), touch(11.801, B, 30)]);
    assert_eq!(take(&r), (A, TakeHow::Direct));
    assert!(r.needs_review.is_none());
    let r = judge_one(&l, 30, &[touch(11.800, A, 30), touch(11.803, B, 30)]);
    assert_eq!(take(&r), (A, TakeHow::Direct));
    assert!(r.needs_review.is_none());
}

#[test]
fn art_21_touches_closer_than_the_timing_error_need_no_order_when_either_first_gives_one_taker() {
    // B's lead hand entered early: B's take goes to A (21-1) and a tie to the owner A
    // (18-1), so whichever of the two close touches came first, A has the card.
    let l = layout(&[5, 6], &[30, 31]);
    let early = ev(
        9.90,
        EventKind::Enter {
            player: B,
            hand: Hand::Left,
        },
    );
    let mut a = touch(11.810, A, 5);
    let mut b = touch(11.800, B, 5);
    a.t_err_s = 0.01;
    b.t_err_s = 0.01;
    let r = judge_one(&l, 5, &[early, a, b]);
    assert_eq!(take(&r), (A, TakeHow::Awarded));
    assert!(r.needs_review.is_none(), "{:?}", r.needs_review);
    assert!(r.articles.contains(&"21-1".to_string()));
    // A touched with the hand that is not the lead hand: A first gives the card to B
    // (21-3), B first too, and touches at the same moment give it to the owner (18-1).
    // On B's card that is B again, unflagged.
    let close = |poem: u8| {
        let mut a = touch_other_hand(11.800, A, poem);
        let mut b = touch(11.810, B, poem);
        a.t_err_s = 0.01;
        b.t_err_s = 0.01;
        judge_one(&l, poem, &[a, b])
    };
    let r = close(30);
    assert_eq!(take(&r).0, B);
    assert!(r.articles.contains(&"21-3".to_string()));
    assert_ne!(
        r.needs_review.as_ref().map(|v| v.what),
        Some(ReviewWhat::CloseCall)
    );
    // On A's card, A first (as measured) still gives it to B (21-3), but had they
    // touched at the same moment it would be A's: the call is flagged.
    let r = close(5);
    assert_eq!(take(&r), (B, TakeHow::Awarded));
    assert_eq!(r.needs_review.as_ref().unwrap().what, ReviewWhat::CloseCall);
}

#[test]
fn art_18_2_a_push_out_by_both_goes_to_the_owner() {
    let l = layout(&[5, 6], &[30]);
    let r = judge_one(&l, 5, &[out(11.80, 5, By::Both)]);
    assert_eq!(take(&r), (A, TakeHow::Simultaneous));
}

#[test]
fn art_19_1_a_lost_card_read_goes_to_the_opponent_and_otetsuki_are_invalid() {
    // Card 6 is knocked out during reading 1 and never put back; reading 2 reads it.
    let l = layout(&[5, 6, 7], &[30, 31]);
    let ev = vec![touch(11.80, A, 5), out(11.81, 6, By::A), touch(21.80, B, 7)];
    let (rulings, _) = adjudicate(&l, &[reading(1, 5), reading(2, 6)], &ev);
    let r = &rulings[1];
    assert!(!r.card.in_play);
    assert_eq!(r.card.owner, Some(A));
    assert_eq!(take(r), (B, TakeHow::Awarded));
    assert!(r.fouls.iter().all(|f| f.cancelled));
    assert!(r.articles.contains(&"19-1".to_string()));
}

#[test]
fn art_21_1_early_entry_voids_the_take_charges_an_otetsuki_and_lifts_the_others() {
    let l = layout(&[5, 6], &[30, 31]);
    let ev = vec![
        ev(
            9.90,
            EventKind::Enter {
                player: A,
                hand: Hand::Right,
            },
        ),
        touch(11.80, A, 5),
        touch(11.85, B, 30), // B's own otetsuki, lifted by the note to 21
    ];
    let r = judge_one(&l, 5, &ev);
    assert_eq!(take(&r), (B, TakeHow::Awarded));
    let early: Vec<_> = r
        .fouls
        .iter()
        .filter(|f| f.kind == FoulKind::EarlyEntry)
        .collect();
    assert_eq!(early.len(), 1);
    assert_eq!(early[0].player, A);
    assert_eq!(live_fouls(&r, B), 0);
    // B was awarded A's card (1) and A's early-entry otetsuki (1): B sends two.
    assert_eq!(owed(&r, B), 2);
}

#[test]
fn art_21_1_a_hand_that_left_before_the_reading_is_no_early_entry() {
    let l = layout(&[5, 6], &[30, 31]);
    let ev = vec![
        ev(
            9.0,
            EventKind::Enter {
                player: A,
                hand: Hand::Right,
            },
        ),
        ev(
            9.5,
            EventKind::Leave {
                player: A,
                hand: Hand::Right,
            },
        ),
        touch(11.80, A, 5),
    ];
    let r = judge_one(&l, 5, &ev);
    assert_eq!(take(&r), (A, TakeHow::Direct));
    assert!(r.fouls.is_empty());
}

#[test]
fn art_21_3_a_direct_touch_with_the_other_hand_gives_the_card_to_the_opponent() {
    let l = layout(&[5, 6], &[30]);
    let r = judge_one(&l, 5, &[touch_other_hand(11.80, A, 5), touch(11.90, B, 5)]);
    assert_eq!(take(&r), (B, TakeHow::Awarded));
    assert!(r.articles.contains(&"21-3".to_string()));
}

#[test]
fn art_21_3_note_a_push_out_with_the_other_hand_does_not_count() {
    let l = layout(&[5, 6], &[30]);
    let e = ev(
        11.80,
        EventKind::Out {
            poem: 5,
            by: By::B,
            hand: Some(Hand::Right),
        },
    );
    let r = judge_one(&l, 5, &[e]);
    assert_eq!(take(&r), (A, TakeHow::Awarded));
}

#[test]
fn art_23_1_touching_a_territory_without_the_read_card_is_otetsuki() {
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 5, &[touch(11.70, B, 31), touch(11.80, A, 5)]);
    assert_eq!(take(&r), (A, TakeHow::Direct));
    assert_eq!(live_fouls(&r, B), 1);
    assert_eq!(r.fouls[0].kind, FoulKind::WrongTerritory);
    // A took its own card and B fouled: A sends one (25-1).
    assert_eq!(owed(&r, A), 1);
}

#[test]
fn art_23_1_note_touching_other_cards_in_the_read_cards_territory_is_no_otetsuki() {
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 5, &[touch(11.70, B, 6), touch(11.80, A, 5)]);
    assert!(r.fouls.is_empty());
}

#[test]
fn art_23_1_any_touch_during_a_dead_card_is_otetsuki() {
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 77, &[touch(11.80, A, 6)]);
    assert_eq!(r.card.owner, None);
    assert!(r.take.is_none());
    assert_eq!(r.fouls[0].kind, FoulKind::DeadCard);
    assert_eq!(owed(&r, B), 1);
}

#[test]
fn art_23_2_a_card_struck_by_a_knocked_card_is_no_otetsuki() {
    let l = layout(&[5, 6], &[30, 31]);
    let e = ev(
        11.85,
        EventKind::Touch {
            player: A,
            hand: Hand::Right,
            poem: Some(31),
            territory: None,
            direct: false,
        },
    );
    let r = judge_one(&l, 5, &[touch(11.80, A, 5), e]);
    assert!(r.fouls.is_empty());
}

#[test]
fn art_23_5_the_other_hand_commits_no_otetsuki() {
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 77, &[touch_other_hand(11.80, A, 6)]);
    assert!(r.fouls.is_empty());
}

#[test]
fn art_23_6_a_void_reading_counts_no_take_and_no_otetsuki() {
    let l = layout(&[5, 6], &[30, 31]);
    let mut rd = reading(1, 5);
    rd.void = true;
    let (rulings, _) = adjudicate(&l, &[rd], &[touch(11.70, B, 31), touch(11.80, A, 5)]);
    let r = &rulings[0];
    assert!(r.take.is_none());
    assert!(r.fouls.iter().all(|f| f.cancelled));
    assert!(r.sends.owed.is_empty());
}

#[test]
fn art_25_1_taking_in_the_card_the_opponent_sends_is_no_otetsuki() {
    let l = layout(&[5, 6], &[30, 31]);
    // A fouls on a dead card; B picks up 30 to send it, A takes it in, and the send is
    // dated when the card has settled on A's side: one foul, A's own (all within the
    // window for otetsuki, 2 s after the dead card's decisive kana).
    let r = judge_one(
        &l,
        77,
        &[
            touch(10.80, A, 6),
            touch(11.20, B, 30),
            touch(11.50, A, 30),
            send(11.70, B, 30),
        ],
    );
    assert_eq!(r.fouls.len(), 1, "{:?}", r.fouls);
    assert_eq!(r.fouls[0].kind, FoulKind::DeadCard);
    assert_eq!(r.fouls[0].player, A);
    // Touching it before the sender did is still an otetsuki: both territories.
    let r = judge_one(
        &l,
        77,
        &[
            touch(10.80, A, 6),
            touch(11.00, A, 30),
            touch(11.20, B, 30),
            send(11.70, B, 30),
        ],
    );
    assert_eq!(r.fouls[0].kind, FoulKind::Double);
}

#[test]
fn art_25_2_take_from_opponent_plus_opponents_otetsuki_sends_two() {
    let l = layout(&[5], &[30, 31]);
    let r = judge_one(&l, 5, &[touch(11.70, A, 31), touch(11.80, B, 5)]);
    assert_eq!(take(&r), (B, TakeHow::Direct));
    assert_eq!(owed(&r, B), 2);
    assert!(r.articles.contains(&"25-2".to_string()));
}

#[test]
fn art_25_3_both_territories_during_a_dead_card_is_a_double() {
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 77, &[touch(11.80, B, 5), touch(11.85, B, 30)]);
    assert_eq!(r.fouls.len(), 1);
    assert_eq!(r.fouls[0].kind, FoulKind::Double);
    assert_eq!(r.fouls[0].count, 2);
    assert_eq!(owed(&r, A), 2);
}

#[test]
fn art_25_4_otetsuki_of_both_sides_cancel_before_sends() {
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 77, &[touch(11.80, A, 31), touch(11.82, B, 6)]);
    assert_eq!(r.fouls.len(), 2);
    assert!(r.fouls.iter().all(|f| f.cancelled));
    assert!(r.sends.owed.is_empty());
}

#[test]
fn art_25_5_a_send_after_the_shimo_no_ku_began_does_not_count() {
    let l = layout(&[5, 6], &[30, 31]);
    // B takes A's card and sends 30, but only after shimo_start (18.0 s).
    let r = judge_one(&l, 5, &[touch(11.80, B, 5), send(18.5, B, 30)]);
    assert_eq!(owed(&r, B), 1);
    assert!(r.sends.done.is_empty());
    assert_eq!(r.cards_after[&B], 2);
    assert!(r.articles.contains(&"25-5".to_string()));
    // The same send in time counts.
    let r = judge_one(&l, 5, &[touch(11.80, B, 5), send(13.0, B, 30)]);
    assert_eq!(r.sends.done.len(), 1);
    assert_eq!(r.cards_after[&B], 1);
    assert_eq!(r.cards_after[&A], 2);
}

#[test]
fn art_1_note_the_last_card_is_sent_even_at_one_one_and_the_winner_has_none() {
    let l = layout(&[5], &[30]);
    // B takes A's last card, and must still send its own last card to win.
    let (rulings, result) = adjudicate(
        &l,
        &[reading(1, 5)],
        &[touch(11.80, B, 5), send(13.0, B, 30)],
    );
    assert_eq!(rulings[0].cards_after[&B], 0);
    assert_eq!(result.winner, Some(B));
    assert_eq!(result.cards[&B], 0);
    // Without the send, B still holds a card and A has none: A has no cards and wins.
    let (_, result) = adjudicate(&l, &[reading(1, 5)], &[touch(11.80, B, 5)]);
    assert_eq!(result.winner, Some(A));
}

#[test]
fn art_1_a_card_the_layout_could_not_name_still_counts_for_its_territory() {
    // A's second card could not be named: A holds it all the same.
    let mut l = layout(&[5, 6], &[30]);
    l.cards[1].poem = None;
    // B takes A's 5 and sends 30: A is left with the unnamed card, and has not won.
    let (rulings, result) = adjudicate(
        &l,
        &[reading(1, 5)],
        &[touch(11.80, B, 5), send(13.0, B, 30)],
    );
    assert_eq!(
        rulings[0].cards_after[&A], 2,
        "the sent 30 and the unnamed card"
    );
    assert_eq!(rulings[0].cards_after[&B], 0);
    assert_eq!(result.winner, Some(B));
    let (rulings, result) = adjudicate(&l, &[reading(1, 5)], &[touch(11.80, B, 5)]);
    assert_eq!(rulings[0].cards_after[&A], 1);
    assert_eq!(rulings[0].cards_after[&B], 1);
    assert_eq!(result.winner, None);
}

/// A touch of a card the layout could not name, lying in `territory`.
fn touch_unnamed(t_s: f64, player: Player, territory: Player) -> Event {
    ev(
        t_s,
        EventKind::Touch {
            player,
            hand: lead(player),
            poem: None,
            territory: Some(territory),
            direct: true,
        },
    )
}

#[test]
fn art_23_1_a_touch_of_an_unnamed_card_on_the_territory_without_the_read_card_is_an_otetsuki() {
    // B's second card could not be named; 5 is read, on A's side.
    let mut l = layout(&[5, 6], &[30, 31]);
    l.cards[3].poem = None;
    let (rulings, _) = adjudicate(
        &l,
        &[reading(1, 5)],
        &[touch_unnamed(11.70, B, B), touch(11.80, A, 5)],
    );
    let r = &rulings[0];
    assert_eq!(take(r), (A, TakeHow::Direct));
    assert_eq!(r.fouls.len(), 1, "{:?}", r.fouls);
    assert_eq!(r.fouls[0].player, B);
    assert_eq!(r.fouls[0].kind, FoulKind::WrongTerritory);
    assert!(!r.fouls[0].cancelled);
    // The same touch on the read card's own territory is no otetsuki (23-1 note).
    let mut l = layout(&[5, 6], &[30, 31]);
    l.cards[1].poem = None;
    let (rulings, _) = adjudicate(
        &l,
        &[reading(1, 5)],
        &[touch_unnamed(11.70, B, A), touch(11.80, A, 5)],
    );
    assert!(rulings[0].fouls.is_empty(), "{:?}", rulings[0].fouls);
}

#[test]
fn art_23_1_an_unnamed_card_touched_while_the_read_poem_names_no_card_may_be_the_read_card() {
    // 77 is read and no named card is 77: the unnamed card may be it, so touching it is
    // no otetsuki the camera can call, and the ruling goes to review.
    let mut l = layout(&[5, 6], &[30, 31]);
    l.cards[3].poem = None;
    let (rulings, _) = adjudicate(&l, &[reading(1, 77)], &[touch_unnamed(11.70, A, B)]);
    let r = &rulings[0];
    assert!(r.fouls.is_empty(), "{:?}", r.fouls);
    assert_eq!(
        r.needs_review.as_ref().map(|v| v.what),
        Some(ReviewWhat::UnknownCard)
    );
}

#[test]
fn art_23_1_a_read_poem_no_unnamed_card_may_be_is_a_dead_card_and_touching_an_unnamed_card_is_an_otetsuki(
) {
    // B's second card could not be named; the layout says it is 12 or 13.
    let mut l = layout(&[5, 6], &[30, 31]);
    l.cards[3].poem = None;
    l.cards[3].candidates = vec![12, 13];
    // 77 is neither: a dead card, and A's touch of the unnamed card is A's otetsuki.
    let (rulings, _) = adjudicate(&l, &[reading(1, 77)], &[touch_unnamed(11.70, A, B)]);
    let r = &rulings[0];
    assert_eq!(r.fouls.len(), 1, "{:?}", r.fouls);
    assert_eq!(
        (r.fouls[0].player, r.fouls[0].kind),
        (A, FoulKind::DeadCard)
    );
    let review = r
        .needs_review
        .as_ref()
        .expect("the layout's word is checked");
    assert_eq!(review.what, ReviewWhat::UnknownCard);
    assert!(
        review.reason.contains("ruled a dead card"),
        "{}",
        review.reason
    );
    // 13 may be the unnamed card itself: no otetsuki the camera can call.
    let (rulings, _) = adjudicate(&l, &[reading(1, 13)], &[touch_unnamed(11.70, A, B)]);
    assert!(rulings[0].fouls.is_empty(), "{:?}", rulings[0].fouls);
    assert!(!rulings[0]
        .needs_review
        .as_ref()
        .unwrap()
        .reason
        .contains("ruled a dead card"));
}

#[test]
fn art_25_1_touches_of_unnamed_cards_well_after_an_otetsuki_may_be_its_send() {
    let mut l = layout(&[5, 6], &[30, 31]);
    l.cards[1].poem = None;
    l.cards[1].candidates = vec![12];
    l.cards[3].poem = None;
    l.cards[3].candidates = vec![13];
    // 77 is dead (decided at 10.0 s: its kimari-ji is one kana, and touches count for
    // 2 s after). A touches B's unnamed card; 0.8 s later B sends A an own card and A
    // takes it in: one otetsuki, A's.
    let sent = [
        touch_unnamed(10.40, A, B),
        touch_unnamed(11.20, B, B),
        touch_unnamed(11.80, A, A),
    ];
    let (rulings, _) = adjudicate(&l, &[reading(1, 77)], &sent);
    let r = &rulings[0];
    assert_eq!(r.fouls.len(), 1, "{:?}", r.fouls);
    assert_eq!(
        (r.fouls[0].player, r.fouls[0].kind),
        (A, FoulKind::DeadCard)
    );
    assert!(!r.fouls[0].cancelled);
    // B reaching for a card at the same kimari-ji is B's own otetsuki: both cancel (25-4).
    let both = [touch_unnamed(11.70, A, B), touch_unnamed(11.90, B, A)];
    let (rulings, _) = adjudicate(&l, &[reading(1, 77)], &both);
    assert_eq!(rulings[0].fouls.len(), 2, "{:?}", rulings[0].fouls);
    assert!(rulings[0].fouls.iter().all(|f| f.cancelled));
    // A's own hand going on into A's territory is no send: a double (25-3).
    let double = [touch_unnamed(10.40, A, B), touch_unnamed(11.10, A, A)];
    let (rulings, _) = adjudicate(&l, &[reading(1, 77)], &double);
    assert_eq!(rulings[0].fouls.len(), 1, "{:?}", rulings[0].fouls);
    assert_eq!(rulings[0].fouls[0].kind, FoulKind::Double);
}

#[test]
fn art_25_1_a_touch_of_an_unnamed_card_after_the_take_may_be_the_send() {
    // B takes A's 5 and reaches for an own card to send it: the camera cannot name the
    // card, so it cannot tell the send from an otetsuki, and charges none.
    let mut l = layout(&[5, 6], &[30, 31]);
    l.cards[3].poem = None;
    let (rulings, _) = adjudicate(
        &l,
        &[reading(1, 5)],
        &[touch(11.70, B, 5), touch_unnamed(12.10, B, B)],
    );
    assert_eq!(take(&rulings[0]), (B, TakeHow::Direct));
    assert!(rulings[0].fouls.is_empty(), "{:?}", rulings[0].fouls);
}

#[test]
fn a_touch_naming_neither_poem_nor_territory_is_bad_input() {
    let e = karuta_referee::rules::parse::parse_events(
        "events.jsonl",
        "{\"t_s\": 1.0, \"kind\": \"touch\", \"player\": \"A\", \"hand\": \"left\", \"poem\": null}\n",
    )
    .unwrap_err();
    assert_eq!(e.place, "line 1");
    assert!(e.problem.contains("territory"), "{e}");
    // With the territory it is a touch of an unnamed card.
    let ok = karuta_referee::rules::parse::parse_events(
        "events.jsonl",
        "{\"t_s\": 1.0, \"kind\": \"touch\", \"player\": \"A\", \"hand\": \"left\", \"poem\": null, \"territory\": \"B\"}\n",
    )
    .unwrap();
    assert_eq!(ok[0].poem(), None);
}

#[test]
fn a_sent_card_is_judged_on_the_opponents_territory_from_then_on() {
    let l = layout(&[5, 6], &[30, 31]);
    // Reading 1: B takes A's 5 and sends 30 to A. Reading 2 reads 30, now on A's side.
    let ev = vec![
        touch(11.80, B, 5),
        send(13.0, B, 30),
        touch(21.80, B, 30),
        touch(21.85, A, 30),
    ];
    let (rulings, _) = adjudicate(&l, &[reading(1, 5), reading(2, 30)], &ev);
    assert_eq!(rulings[1].card.owner, Some(A));
    assert_eq!(take(&rulings[1]), (B, TakeHow::Direct));
    assert_eq!(owed(&rulings[1], B), 1);
}

#[test]
fn art_13_2_note_the_hand_that_first_touches_a_card_is_the_lead_hand() {
    let mut l = layout(&[5, 6], &[30, 31]);
    l.players.clear();
    // A's first touch is with the left hand: from then on A's right hand is "the other hand".
    let ev = vec![
        ev(
            11.80,
            EventKind::Touch {
                player: A,
                hand: Hand::Left,
                poem: Some(5),
                territory: None,
                direct: true,
            },
        ),
        ev(
            21.80,
            EventKind::Touch {
                player: A,
                hand: Hand::Right,
                poem: Some(6),
                territory: None,
                direct: true,
            },
        ),
        touch(21.90, B, 6),
    ];
    let (rulings, _) = adjudicate(&l, &[reading(1, 5), reading(2, 6)], &ev);
    assert_eq!(take(&rulings[0]), (A, TakeHow::Direct));
    assert_eq!(take(&rulings[1]), (B, TakeHow::Awarded));
}

#[test]
fn art_24_contact_between_the_players_with_an_otetsuki_needs_the_judge() {
    let l = layout(&[5, 6], &[30, 31]);
    let c = ev(
        11.79,
        EventKind::Contact {
            players: vec![A, B],
        },
    );
    let r = judge_one(&l, 5, &[c, touch(11.80, A, 5), touch(11.81, B, 31)]);
    assert_eq!(r.needs_review.as_ref().unwrap().what, ReviewWhat::Contact);
    assert!(r.articles.contains(&"24-1".to_string()));
}

#[test]
fn unseen_stretches_during_a_take_need_review() {
    let l = layout(&[5, 6], &[30, 31]);
    let u = ev(
        11.7,
        EventKind::Unseen {
            from_s: 11.7,
            to_s: 11.9,
            what: "A's hand".into(),
        },
    );
    let r = judge_one(&l, 5, &[u, touch(11.80, A, 5)]);
    assert_eq!(r.needs_review.as_ref().unwrap().what, ReviewWhat::Unseen);
}

#[test]
fn every_ruling_carries_articles_and_a_sentence() {
    let l = layout(&[5, 6], &[30, 31]);
    let r = judge_one(&l, 5, &[touch(11.80, B, 5)]);
    assert!(!r.articles.is_empty());
    assert!(r.why.contains("B touched 5"), "{}", r.why);
    let json = serde_json::to_value(&r).unwrap();
    for key in [
        "kind",
        "seq",
        "poem",
        "card",
        "kimariji",
        "decided_s",
        "take",
        "fouls",
        "sends",
        "cards_after",
        "articles",
        "why",
        "confidence",
        "needs_review",
    ] {
        assert!(json.get(key).is_some(), "decisions.jsonl field {key}");
    }
}

#[test]
fn the_match_stops_at_its_winner() {
    let l = layout(&[5], &[30, 31]);
    let (rulings, result) = adjudicate(&l, &[reading(1, 5), reading(2, 30)], &[touch(11.8, A, 5)]);
    assert_eq!(rulings.len(), 1);
    assert_eq!(result.winner, Some(A));
    let mut referee = Referee::new(&l);
    assert_eq!(referee.cards_of(B), 2);
    referee.judge(&reading(1, 31), &[touch(11.8, B, 31)]);
    assert_eq!(referee.cards_of(B), 1);
}
