//! The schedule, identities and finger geometry, tested on made-up hands.

use super::events::{lapsed_leave, still_hidden};
use super::fingers::wrist_and_tips;
use super::*;
use crate::rules::model::{EventKind, Hand};

#[test]
fn polygon_area_of_a_card_face_in_either_winding() {
    let card = rotated_rect(100.0, -50.0, 52.0, 73.0, 30.0);
    assert!((polygon_area_mm2(&card) - 52.0 * 73.0).abs() < 1e-6);
    let mut rev = card.to_vec();
    rev.reverse();
    assert!((polygon_area_mm2(&rev) - 52.0 * 73.0).abs() < 1e-6);
}

#[test]
fn a_hand_gone_from_over_the_area_is_hidden_unless_seen_leaving() {
    let at = |x, y| Pt::new(x, y);
    // Last seen on a card 300 mm into B's side (tuning hard-9305 reading 3).
    let last = [at(-250.0, 300.0), at(-220.0, 320.0)];
    // No region of the player at all: hidden, for HIDDEN_MAX_S.
    assert!(still_hidden(&last, 0.05, &[]));
    assert!(!still_hidden(&last, HIDDEN_MAX_S + 0.01, &[]));
    // Its name moved to a resting hand at the far edge: still hidden.
    assert!(still_hidden(&last, 0.05, &[at(400.0, 480.0)]));
    // Seen just past the line, where it was heading: it left.
    assert!(!still_hidden(&last, 0.0125, &[at(-240.0, 390.0)]));
    // Never seen with fingertips: nothing to contest with.
    assert!(!still_hidden(&[], 0.05, &[]));
}

fn hand(player: Player, hand: Hand, x: f64, y: f64, conf: f64) -> HandObs {
    let outline_px = vec![
        [x, y],
        [x + 100.0, y],
        [x + 100.0, y + 150.0],
        [x, y + 150.0],
    ];
    HandObs {
        player,
        hand,
        lead: None,
        fingertips_px: vec![[x + 50.0, y]],
        outline_px,
        reach_outline_px: Vec::new(),
        body_outline_px: Vec::new(),
        inside: true,
        reach_mm: 10.0,
        contact_p: 0.0,
        contact_px: None,
        contact: None,
        conf,
        // Followed for a few runs already, read as this hand each time.
        hand_votes: match hand {
            Hand::Left => [3, 0],
            Hand::Right => [0, 3],
        },
    }
}

/// A hand as the network reads it in a new run (no history yet).
fn read(player: Player, which: Hand, x: f64, y: f64, conf: f64) -> HandObs {
    HandObs {
        hand_votes: [0; 2],
        ..hand(player, which, x, y, conf)
    }
}

#[test]
fn a_hand_seen_then_unseen_outside_the_area_is_no_change_to_narrow_down() {
    let sample = |hands| Sample {
        frame: 0,
        t_s: 0.0,
        hands,
    };
    let outside = HandObs {
        inside: false,
        ..hand(Player::A, Hand::Right, 300.0, 200.0, 0.95)
    };
    let inside = hand(Player::A, Hand::Right, 300.0, 200.0, 0.95);
    let pressing = HandObs {
        contact: Some(CardRef::of(Some(7), 3, Some(Player::A))),
        ..inside.clone()
    };
    let s = SLOTS
        .iter()
        .position(|&k| k == (Player::A, Hand::Right))
        .unwrap();
    let none = sample(Vec::new());
    assert_eq!(sample(vec![outside]).key(s), none.key(s));
    assert_ne!(sample(vec![inside.clone()]).key(s), none.key(s));
    assert_ne!(
        sample(vec![inside]).key(s),
        sample(vec![pressing.clone()]).key(s)
    );
    assert_eq!(
        sample(vec![pressing.clone()]).key(s),
        sample(vec![pressing]).key(s)
    );
}

#[test]
fn a_hand_that_moved_a_little_keeps_who_it_was() {
    let prev = vec![hand(Player::A, Hand::Right, 300.0, 200.0, 0.95)];
    // The network now reads it as B's left hand (it reached into B's half).
    let now = vec![read(Player::B, Hand::Left, 330.0, 180.0, 0.9)];
    let out = keep_identity(&prev, now, &[None]);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].player, out[0].hand), (Player::A, Hand::Right));
}

#[test]
fn where_a_hand_points_outranks_the_run_before() {
    let prev = vec![hand(Player::A, Hand::Right, 300.0, 200.0, 0.95)];
    let now = vec![read(Player::B, Hand::Left, 310.0, 200.0, 0.9)];
    let out = keep_identity(&prev, now, &[Some(Player::B)]);
    assert_eq!((out[0].player, out[0].hand), (Player::B, Hand::Left));
}

#[test]
fn a_new_hand_takes_the_free_hand_or_is_dropped() {
    let prev = vec![hand(Player::A, Hand::Right, 300.0, 200.0, 0.95)];
    let now = vec![
        // The hand that moved, read as A's left: it stays A's right.
        read(Player::A, Hand::Left, 305.0, 200.0, 0.95),
        // New to the view, read as A's right, which is taken: A's left is free.
        read(Player::A, Hand::Right, 900.0, 500.0, 0.8),
        // A third hand of A: both taken, dropped.
        read(Player::A, Hand::Right, 50.0, 50.0, 0.7),
    ];
    let out = keep_identity(&prev, now, &[None, None, None]);
    let ids: Vec<(Player, Hand)> = out.iter().map(|h| (h.player, h.hand)).collect();
    assert_eq!(ids, vec![(Player::A, Hand::Right), (Player::A, Hand::Left)]);
    assert_eq!(out[1].outline_px[0], [900.0, 500.0]);
}

#[test]
fn the_fingertips_farthest_from_the_wrist_over_the_cards_are_looked_at() {
    // Two cards side by side (x -60..60, y 0..73); a hand whose wrist lies at (0, -150),
    // its five fingertips over the cards at different reaches, and one far off them.
    let card = |x0: f64| {
        [
            Pt::new(x0, 0.0),
            Pt::new(x0 + 52.0, 0.0),
            Pt::new(x0 + 52.0, 73.0),
            Pt::new(x0, 73.0),
        ]
    };
    let cards = [card(-60.0), card(8.0)];
    let outline = vec![
        Pt::new(0.0, -150.0),
        Pt::new(50.0, -60.0),
        Pt::new(50.0, 60.0),
        Pt::new(-50.0, 60.0),
        Pt::new(-50.0, -60.0),
    ];
    // By heat (the order given): thumb, little, ring, middle, index; then one off
    // the cards, 30 mm beyond the nearest card's edge.
    let tips = vec![
        Pt::new(-45.0, 5.0),
        Pt::new(40.0, 20.0),
        Pt::new(20.0, 45.0),
        Pt::new(0.5, 55.0),
        Pt::new(-20.0, 50.0),
        Pt::new(0.0, 103.0 + 30.0),
    ];
    let wrist = wrist_and_tips(&outline, &tips).map(|(w, _)| w);
    assert_eq!(wrist, Some(Pt::new(0.0, -150.0)));
    let seen = tips_to_look_at(cards.iter(), wrist, &tips);
    assert_eq!(seen, vec![3, 4, 2], "middle, index, ring");
    // With no wrist to go by, the nearest to a card go first.
    let seen = tips_to_look_at(cards.iter(), None, &tips[..2]);
    assert_eq!(seen.len(), 2);
}

#[test]
fn a_finger_ends_half_its_width_beyond_its_tip_away_from_the_wrist() {
    // A hand of player A reaching along +y: the wrist at y = 0, fingertips at y = 150
    // (the middle finger) and, for the thumb, beside and behind it.
    let outline = [
        Pt::new(-40.0, 0.0),
        Pt::new(40.0, 0.0),
        Pt::new(45.0, 120.0),
        Pt::new(-45.0, 120.0),
    ];
    let tips = [Pt::new(0.0, 150.0), Pt::new(60.0, 90.0)];
    let ends = finger_ends(&outline, &tips);
    assert_eq!(ends.len(), 2);
    // The wrist is the outline's point farthest from the tips' mean (30, 120):
    // (-40, 0). Each end lies 8 mm beyond its tip, on the line from the wrist.
    for (t, e) in tips.iter().zip(&ends) {
        let d = ((e.x_mm - t.x_mm).powi(2) + (e.y_mm - t.y_mm).powi(2)).sqrt();
        assert!((d - FINGER_HALF_WIDTH_MM).abs() < 1e-9, "{d}");
        let (wx, wy) = (t.x_mm + 40.0, t.y_mm);
        let cross = wx * (e.y_mm - t.y_mm) - wy * (e.x_mm - t.x_mm);
        assert!(cross.abs() < 1e-6, "on the wrist's line: {cross}");
        assert!(e.y_mm > t.y_mm, "further from the wrist");
    }
    assert!(finger_ends(&outline, &[]).is_empty());
    assert_eq!(pointing_player(&outline, &tips), Some(Player::A));
}

#[test]
fn a_region_wholly_past_a_players_edge_of_the_area_is_that_players() {
    let geom = FieldGeometry::new(crate::rules::model::FieldSize::default());
    let area = geom.playing_area();
    let (y0, y1) = (area.y0_mm, area.y1_mm);
    let square = |x: f64, y: f64| {
        vec![
            Pt::new(x, y),
            Pt::new(x + 90.0, y),
            Pt::new(x + 90.0, y + 90.0),
            Pt::new(x, y + 90.0),
        ]
    };
    // Resting beyond A's edge (A sits at negative y), cut by the frame's edge: A's.
    assert_eq!(
        side_player(&square(100.0, y0 - 200.0), y0, y1),
        Some(Player::A)
    );
    assert_eq!(
        side_player(&square(-300.0, y1 + 20.0), y0, y1),
        Some(Player::B)
    );
    // Reaching over the line, or over the field: the side does not tell.
    assert_eq!(side_player(&square(100.0, y0 - 45.0), y0, y1), None);
    assert_eq!(side_player(&square(0.0, 0.0), y0, y1), None);
    assert_eq!(side_player(&[], y0, y1), None);
}

#[test]
fn a_region_cut_by_the_frames_edge_past_a_players_edge_of_the_area_is_that_players_arm() {
    let geom = FieldGeometry::new(crate::rules::model::FieldSize::default());
    let area = geom.playing_area();
    let (y0, y1) = (area.y0_mm, area.y1_mm);
    // A 1280 x 720 frame: an arm cut by its bottom edge, and a hand wholly inside it.
    let arm = [
        [470.0, 560.0],
        [520.0, 600.0],
        [530.0, 720.0],
        [480.0, 719.0],
    ];
    let edge = on_frame_edge(&arm, [1280.0, 720.0], 4.0);
    assert_eq!(edge, vec![[530.0, 720.0], [480.0, 719.0]]);
    let inner = [[470.0, 560.0], [520.0, 600.0], [530.0, 700.0]];
    assert!(on_frame_edge(&inner, [1280.0, 720.0], 4.0).is_empty());
    // The bottom edge projects past A's edge of the area (A sits at negative y): A's,
    // whichever way its fingertips seem to point; the top edge, past B's: B's.
    let at = |y: f64| vec![Pt::new(-170.0, y), Pt::new(-120.0, y)];
    assert_eq!(side_player(&at(y0 - 130.0), y0, y1), Some(Player::A));
    assert_eq!(side_player(&at(y1 + 95.0), y0, y1), Some(Player::B));
    // A frame's side edge beside the area, a frame framing the field tightly (its edge
    // over the area), or an arm cut on both sides: the edge does not tell.
    assert_eq!(side_player(&at(0.0), y0, y1), None);
    assert_eq!(side_player(&at(y0 + 10.0), y0, y1), None);
    let both = [at(y0 - 130.0), at(y1 + 95.0)].concat();
    assert_eq!(side_player(&both, y0, y1), None);
}

#[test]
fn a_hand_pressing_a_card_again_within_half_a_second_is_still_handling_it() {
    use super::events::{PressedCards, CARD_REPRESS_S};
    let (a, b) = ((Player::A, Hand::Right), (Player::B, Hand::Right));
    let a_left = (Player::A, Hand::Left);
    let (c12, c13) = (CardRef::Poem(12), CardRef::Poem(13));
    let mut pressed = PressedCards::default();
    pressed.note(a, c12, 1.0);
    // A's hand on 12, carried with the card and pressing it again: the same touch.
    assert!(pressed.lately(a, c12, 1.3));
    // Another card, the other player, or the other hand: a touch of its own.
    assert!(!pressed.lately(a, c13, 1.3));
    assert!(!pressed.lately(b, c12, 1.3));
    assert!(!pressed.lately(a_left, c12, 1.3));
    // Let go of for longer: a new touch.
    assert!(!pressed.lately(a, c12, 1.0 + CARD_REPRESS_S + 0.01));
    // Held on, or pressed again: counted from the last run that saw it pressed.
    pressed.note(a, c12, 1.4);
    assert!(pressed.lately(a, c12, 1.8));
    pressed.forget_before(2.0);
    assert!(!pressed.lately(a, c12, 2.0));
}

#[test]
fn a_hand_over_the_area_unseen_for_half_a_second_has_left() {
    let over = SlotState {
        inside: true,
        seen: Some((240, 1.0, 12.0, 0.1)),
        ..SlotState::default()
    };
    let who = (Player::B, Hand::Left);
    // Hidden for a moment (under the other player's hand): still over the area.
    assert!(lapsed_leave(&over, who, 1.2, (312, 1.3)).is_none());
    let ev = lapsed_leave(&over, who, 1.45, (384, 1.6)).expect("unseen 0.6 s: it left");
    assert_eq!(
        ev.what,
        EventKind::Leave {
            player: Player::B,
            hand: Hand::Left
        }
    );
    assert!(
        ev.t_s > 1.45 && ev.t_s <= 1.6,
        "after the previous run: {}",
        ev.t_s
    );
    assert!(
        (ev.t_err_s - 0.6 / 12f64.sqrt()).abs() < 1e-9,
        "spans the time unseen"
    );
    assert_eq!(ev.frames, Some([240, 384]));
    assert!(ev.conf < 0.9, "not seen leaving: {}", ev.conf);
    // Outside the area, or a change still waiting: nothing to give.
    let outside = SlotState {
        inside: false,
        ..over.clone()
    };
    assert!(lapsed_leave(&outside, who, 1.45, (384, 1.6)).is_none());
    let never = SlotState {
        seen: None,
        ..over.clone()
    };
    assert!(lapsed_leave(&never, who, 1.45, (384, 1.6)).is_none());
}
