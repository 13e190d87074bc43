//! Reading the contract's files from text (no file access here: the caller reads the
//! bytes and names the source). Every problem names the source, the line or field, and
//! what is wrong, in words an official understands.

use crate::rules::model::{Event, EventKind, Layout, Player, PlayerInfo, Reading};
use crate::rules::poems::POEM_COUNT;
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashMap};
use thiserror::Error;

/// Input that cannot be used: `source: place: problem`.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{source_name}: {place}: {problem}")]
pub struct InputError {
    pub source_name: String,
    pub place: String,
    pub problem: String,
}

impl InputError {
    pub fn new(source_name: &str, place: impl Into<String>, problem: impl Into<String>) -> Self {
        InputError {
            source_name: source_name.to_string(),
            place: place.into(),
            problem: problem.into(),
        }
    }
}

fn check_poem(src: &str, place: &str, poem: u8) -> Result<(), InputError> {
    if (1..=POEM_COUNT).contains(&poem) {
        Ok(())
    } else {
        Err(InputError::new(
            src,
            place,
            format!("poem {poem} does not exist (poems are 1..100)"),
        ))
    }
}

fn json_problem(e: &serde_json::Error) -> String {
    // serde's message carries "at line 1 column N" for a single JSONL line; keep the column.
    let msg = e.to_string();
    match msg.rfind(" at line ") {
        Some(i) => {
            let col = msg[i..]
                .split("column")
                .nth(1)
                .map(|c| c.trim().to_string())
                .unwrap_or_default();
            format!("{} (column {col})", &msg[..i])
        }
        None => msg,
    }
}

/// Parses JSON Lines: one object per non-empty line.
pub fn parse_jsonl<T: DeserializeOwned>(
    src: &str,
    text: &str,
) -> Result<Vec<(usize, T)>, InputError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: T = serde_json::from_str(line)
            .map_err(|e| InputError::new(src, format!("line {}", i + 1), json_problem(&e)))?;
        out.push((i + 1, v));
    }
    Ok(out)
}

/// Parses and checks `readings.jsonl`: seq 1, 2, 3 ... without gaps, poems 1..100 never
/// twice (14-1), times in order.
pub fn parse_readings(src: &str, text: &str) -> Result<Vec<Reading>, InputError> {
    let rows: Vec<(usize, Reading)> = parse_jsonl(src, text)?;
    let mut seen: HashMap<u8, u32> = HashMap::new();
    let mut prev_start = f64::NEG_INFINITY;
    let mut out = Vec::with_capacity(rows.len());
    for (i, (line, r)) in rows.into_iter().enumerate() {
        let place = format!("line {line}");
        if r.seq as usize != i + 1 {
            return Err(InputError::new(
                src,
                &place,
                format!("seq {} where {} was expected (no gaps)", r.seq, i + 1),
            ));
        }
        check_poem(src, &place, r.poem)?;
        if let Some(first) = seen.insert(r.poem, r.seq) {
            return Err(InputError::new(
                src,
                &place,
                format!(
                    "poem {} is read twice (seq {first} and {}); a card is read once (14-1)",
                    r.poem, r.seq
                ),
            ));
        }
        if !r.kami_start_s.is_finite() || r.kami_start_s < 0.0 {
            return Err(InputError::new(
                src,
                &place,
                "kami_start_s must be a time of 0 s or later",
            ));
        }
        if r.kami_start_s <= prev_start {
            return Err(InputError::new(
                src,
                &place,
                "kami_start_s is not after the previous reading's",
            ));
        }
        if let Some(sh) = r.shimo_start_s {
            // Also refuses NaN, which compares as neither.
            if sh.partial_cmp(&r.kami_start_s) != Some(std::cmp::Ordering::Greater) {
                return Err(InputError::new(
                    src,
                    &place,
                    "shimo_start_s must come after kami_start_s",
                ));
            }
        }
        if let Some(on) = &r.onsets_s {
            let need = crate::rules::kimariji::static_kimariji(r.poem)
                .map(|k| k.len)
                .unwrap_or(0);
            if on.len() < need {
                return Err(InputError::new(
                    src,
                    &place,
                    format!(
                        "onsets_s has {} onsets; poem {} needs at least {need}",
                        on.len(),
                        r.poem
                    ),
                ));
            }
            if on.windows(2).any(|w| w[1] < w[0]) {
                return Err(InputError::new(src, &place, "onsets_s are not in order"));
            }
        }
        prev_start = r.kami_start_s;
        out.push(r);
    }
    Ok(out)
}

/// Parses and checks `events.jsonl`: ordered by `t_s`, poems 1..100.
pub fn parse_events(src: &str, text: &str) -> Result<Vec<Event>, InputError> {
    let rows: Vec<(usize, Event)> = parse_jsonl(src, text)?;
    let mut prev = f64::NEG_INFINITY;
    let mut out = Vec::with_capacity(rows.len());
    for (line, e) in rows {
        let place = format!("line {line}");
        if !e.t_s.is_finite() {
            return Err(InputError::new(src, &place, "t_s is not a number"));
        }
        if e.t_s < prev {
            return Err(InputError::new(
                src,
                &place,
                format!("events out of order: t_s {} comes after {}", e.t_s, prev),
            ));
        }
        if let Some(p) = e.poem() {
            check_poem(src, &place, p)?;
        }
        if let EventKind::Touch {
            poem: None,
            territory: None,
            ..
        } = e.what
        {
            return Err(InputError::new(
                src,
                &place,
                "a touch names neither a poem nor the territory of the card touched",
            ));
        }
        if let EventKind::Place { row, .. } = e.what {
            if !(1..=3).contains(&row) {
                return Err(InputError::new(
                    src,
                    &place,
                    format!("row {row} does not exist (rows are 1..3)"),
                ));
            }
        }
        if !(0.0..=1.0).contains(&e.conf) {
            return Err(InputError::new(src, &place, "conf must be between 0 and 1"));
        }
        prev = e.t_s;
        out.push(e);
    }
    Ok(out)
}

/// Parses only the `players` block of a `layout.json` (names and declared lead hands),
/// for a run that measures the cards themselves from the video.
pub fn parse_players(src: &str, text: &str) -> Result<BTreeMap<Player, PlayerInfo>, InputError> {
    #[derive(serde::Deserialize)]
    struct Players {
        #[serde(default)]
        players: BTreeMap<Player, PlayerInfo>,
    }
    let p: Players = serde_json::from_str(text).map_err(|e| {
        let place = format!("line {}", e.line());
        InputError::new(src, place, json_problem(&e))
    })?;
    Ok(p.players)
}

/// Parses and checks `layout.json`: poems 1..100, rows 1..3, no card in two places.
pub fn parse_layout(src: &str, text: &str) -> Result<Layout, InputError> {
    let layout: Layout = serde_json::from_str(text).map_err(|e| {
        let place = format!("line {}", e.line());
        InputError::new(src, place, json_problem(&e))
    })?;
    let mut seen: HashMap<u8, usize> = HashMap::new();
    for (i, c) in layout.cards.iter().enumerate() {
        let place = format!("cards[{i}]");
        for &p in &c.candidates {
            check_poem(src, &format!("{place}.candidates"), p)?;
        }
        if let Some(p) = c.poem {
            check_poem(src, &place, p)?;
            if let Some(j) = seen.insert(p, i) {
                return Err(InputError::new(
                    src,
                    &place,
                    format!("poem {p} is in two places (also cards[{j}])"),
                ));
            }
        }
        if !(1..=3).contains(&c.row) {
            return Err(InputError::new(
                src,
                &place,
                format!("row {} does not exist (rows are 1..3)", c.row),
            ));
        }
        if !c.x_mm.is_finite() || !c.y_mm.is_finite() {
            return Err(InputError::new(
                src,
                &place,
                "x_mm and y_mm must be numbers",
            ));
        }
    }
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_json_names_the_line() {
        let e = parse_events(
            "events.jsonl",
            "{\"t_s\": 1.0, \"kind\": \"enter\", \"player\": \"A\", \"hand\": \"left\"}\n{oops\n",
        )
        .unwrap_err();
        assert_eq!(e.place, "line 2");
        assert!(e.to_string().starts_with("events.jsonl: line 2: "));
    }

    #[test]
    fn poem_0_and_101_are_refused() {
        let r = "{\"seq\":1,\"poem\":0,\"kami_start_s\":1.0}";
        assert!(parse_readings("r", r)
            .unwrap_err()
            .problem
            .contains("poem 0"));
        let e = "{\"t_s\":1.0,\"kind\":\"touch\",\"player\":\"A\",\"hand\":\"left\",\"poem\":101}";
        assert!(parse_events("e", e)
            .unwrap_err()
            .problem
            .contains("poem 101"));
    }

    #[test]
    fn art_14_1_a_poem_read_twice_is_refused() {
        let r = "{\"seq\":1,\"poem\":5,\"kami_start_s\":1.0}\n{\"seq\":2,\"poem\":5,\"kami_start_s\":9.0}";
        let e = parse_readings("readings.jsonl", r).unwrap_err();
        assert_eq!(e.place, "line 2");
        assert!(e.problem.contains("read twice"));
    }

    #[test]
    fn events_out_of_order_are_refused() {
        let t = "{\"t_s\":2.0,\"kind\":\"enter\",\"player\":\"A\",\"hand\":\"left\"}\n{\"t_s\":1.0,\"kind\":\"leave\",\"player\":\"A\",\"hand\":\"left\"}";
        assert!(parse_events("e", t)
            .unwrap_err()
            .problem
            .contains("out of order"));
    }

    #[test]
    fn unknown_player_and_card_in_two_places_are_refused() {
        let t = "{\"t_s\":2.0,\"kind\":\"enter\",\"player\":\"C\",\"hand\":\"left\"}";
        assert!(parse_events("e", t)
            .unwrap_err()
            .problem
            .contains("unknown variant"));
        let l = r#"{"cards":[{"poem":3,"owner":"A","row":1,"x_mm":0,"y_mm":-51.5},{"poem":3,"owner":"B","row":1,"x_mm":0,"y_mm":51.5}]}"#;
        let e = parse_layout("layout.json", l).unwrap_err();
        assert_eq!(e.place, "cards[1]");
        assert!(e.problem.contains("two places"));
    }

    #[test]
    fn an_unnamed_cards_candidate_that_is_no_poem_is_refused() {
        let l = r#"{"cards":[{"poem":null,"candidates":[12,101],"owner":"A","row":1,"x_mm":0,"y_mm":-51.5}]}"#;
        let e = parse_layout("layout.json", l).unwrap_err();
        assert_eq!(e.place, "cards[0].candidates");
        assert!(e.problem.contains("poem 101"), "{e}");
        let ok = r#"{"cards":[{"poem":null,"candidates":[12,13],"owner":"A","row":1,"x_mm":0,"y_mm":-51.5}]}"#;
        assert_eq!(
            parse_layout("layout.json", ok).unwrap().cards[0].candidates,
            vec![12, 13]
        );
    }
    #[test]
    fn the_players_block_is_read_alone_and_a_bad_hand_is_refused() {
        let l = r#"{"players":{"A":{"name":"x","lead_hand":"left"},"B":{}},"cards":[{"poem":3}]}"#;
        let p = parse_players("layout.json", l).unwrap();
        assert_eq!(
            p[&Player::A].lead_hand,
            Some(crate::rules::model::Hand::Left)
        );
        assert_eq!(p[&Player::B].lead_hand, None);
        assert!(parse_players("layout.json", "{}").unwrap().is_empty());
        let bad = "{\"players\":\n{\"A\":{\"lead_hand\":\"middle\"}}}";
        let e = parse_players("layout.json", bad).unwrap_err();
        assert_eq!(e.place, "line 2");
        assert!(e.problem.contains("unknown variant"), "{e}");
    }
}
