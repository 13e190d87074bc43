//! A whole match: the example in recordings/example (100 readings) replayed to its winner
//! and checked against card counts computed by hand, scenario by scenario, in
//! tests/data/match100_expected.csv (made with tests/data/make_match100.py).

use karuta_referee::rules::{adjudicate, parse, Player};

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn hundred_reading_match_replays_to_its_winner_with_the_hand_computed_counts() {
    let layout =
        parse::parse_layout("layout.json", &read("recordings/example/layout.json")).unwrap();
    let readings =
        parse::parse_readings("readings.jsonl", &read("recordings/example/readings.jsonl"))
            .unwrap();
    let events =
        parse::parse_events("events.jsonl", &read("recordings/example/events.jsonl")).unwrap();
    assert_eq!(readings.len(), 100);
    assert_eq!(layout.cards.len(), 50);

    let expected = read("tests/data/match100_expected.csv");
    let mut rows = Vec::new();
    let mut winner = None;
    for line in expected.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f[0] == "winner" {
            winner = Some(if f[1] == "A" { Player::A } else { Player::B });
            continue;
        }
        let n = |i: usize| f[i].parse::<u32>().unwrap();
        rows.push((n(0), n(1), n(2), n(3), f[4..].join(",")));
    }

    let (rulings, result) = adjudicate(&layout, &readings, &events);
    assert_eq!(
        rulings.len(),
        rows.len(),
        "the match ends at the same reading"
    );
    for (r, (seq, poem, a, b, scenario)) in rulings.iter().zip(&rows) {
        assert_eq!((r.seq, r.poem as u32), (*seq, *poem));
        assert_eq!(
            (r.cards_after[&Player::A], r.cards_after[&Player::B]),
            (*a, *b),
            "after reading {seq} ({scenario}): {}",
            r.why
        );
    }
    assert_eq!(result.winner, winner);
    assert_eq!(result.cards[&winner.unwrap()], 0);
}
