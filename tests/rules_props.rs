//! Properties of the engine over random matches: it never panics, no card is created or
//! lost (on the field + out of play + gone = the cards at the start), and a winner has
//! no cards.

use karuta_referee::rules::model::*;
use karuta_referee::rules::{geometry::FieldGeometry, Referee};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn arb_player() -> impl Strategy<Value = Player> {
    prop_oneof![Just(Player::A), Just(Player::B)]
}
fn arb_hand() -> impl Strategy<Value = Hand> {
    prop_oneof![Just(Hand::Left), Just(Hand::Right)]
}

fn arb_kind() -> impl Strategy<Value = EventKind> {
    prop_oneof![
        6 => (arb_player(), arb_hand(), 1u8..=100, any::<bool>())
            .prop_map(|(player, hand, poem, direct)| EventKind::Touch { player, hand, poem: Some(poem), territory: None, direct }),
        // A card the layout could not name, known by its territory alone.
        1 => (arb_player(), arb_hand(), arb_player(), any::<bool>())
            .prop_map(|(player, hand, t, direct)| EventKind::Touch { player, hand, poem: None, territory: Some(t), direct }),
        2 => (1u8..=100, prop_oneof![Just(By::A), Just(By::B), Just(By::Both)], proptest::option::of(arb_hand()))
            .prop_map(|(poem, by, hand)| EventKind::Out { poem, by, hand }),
        1 => (arb_player(), arb_hand()).prop_map(|(player, hand)| EventKind::Enter { player, hand }),
        1 => (arb_player(), arb_hand()).prop_map(|(player, hand)| EventKind::Leave { player, hand }),
        2 => (arb_player(), 1u8..=100).prop_map(|(from, poem)| EventKind::Send { from, poem }),
        1 => (1u8..=100, arb_player(), 1u8..=3).prop_map(|(poem, owner, row)| EventKind::Place { poem, owner, row, x_mm: 0.0, y_mm: 0.0 }),
        1 => Just(EventKind::Contact { players: vec![Player::A, Player::B] }),
    ]
}

fn layout_from(perm: &[u8]) -> Layout {
    let g = FieldGeometry::default();
    let cards = perm[..50]
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let owner = if i < 25 { Player::A } else { Player::B };
            let row = 1 + (i % 25 / 9).min(2) as u8;
            CardPlacement {
                poem: Some(p),
                owner,
                row,
                x_mm: -400.0 + 60.0 * (i % 9) as f64,
                y_mm: g.row_center_y_mm(owner, row),
                angle_deg: 0.0,
                poem_score: None,
                candidates: Vec::new(),
            }
        })
        .collect();
    Layout {
        field: FieldSize::default(),
        players: BTreeMap::new(),
        cards,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn never_panics_conserves_cards_and_the_winner_has_none(
        perm in Just((1u8..=100).collect::<Vec<u8>>()).prop_shuffle(),
        order in Just((1u8..=100).collect::<Vec<u8>>()).prop_shuffle(),
        n_readings in 1usize..100,
        raw in proptest::collection::vec((0.0f64..12.0, arb_kind(), 0.0f64..0.01), 0..400),
        void_every in 0usize..7,
    ) {
        let layout = layout_from(&perm);
        let readings: Vec<Reading> = order[..n_readings].iter().enumerate().map(|(i, &poem)| {
            let k0 = 10.0 + 12.0 * i as f64;
            Reading { seq: i as u32 + 1, poem, kami_start_s: k0, onsets_s: None, kami_end_s: None,
                      shimo_start_s: Some(k0 + 8.0), void: void_every > 0 && i % 7 == void_every }
        }).collect();
        // Spread the events over the readings, in time order.
        let mut events: Vec<Event> = raw.into_iter().enumerate().map(|(i, (dt, what, err))| {
            let slot = i % n_readings;
            let mut e = Event::new(10.0 + 12.0 * slot as f64 + dt - 0.5, what);
            e.t_err_s = err;
            e
        }).collect();
        events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));

        let mut referee = Referee::new(&layout);
        let total = referee.initial_cards() as u32;
        let mut i = 0;
        while i < events.len() && events[i].t_s < readings[0].kami_start_s {
            referee.observe(&events[i]);
            i += 1;
        }
        for (k, r) in readings.iter().enumerate() {
            if referee.winner().is_some() { break; }
            let end = readings.get(k + 1).map_or(f64::INFINITY, |n| n.kami_start_s);
            let j = i + events[i..].iter().take_while(|e| e.t_s < end).count();
            let ruling = referee.judge(r, &events[i..j]);
            i = j;
            let on_field: u32 = ruling.cards_after.values().sum();
            prop_assert_eq!(on_field + referee.cards_gone(), total);
            for f in &ruling.fouls { prop_assert!(f.count >= 1 && f.count <= 2); }
            for (p, n) in &ruling.sends.owed { prop_assert!(*n <= 2, "{} owes {}", p, n); }
            prop_assert!(ruling.confidence >= 0.0 && ruling.confidence <= 1.0);
        }
        let result = referee.result();
        if let Some(w) = result.winner {
            prop_assert_eq!(result.cards[&w], 0);
        }
    }
}
