//! The binary as an official uses it: outputs against the contract's schema, and bad
//! input answered with one line naming the file, the place and the problem, exit 2.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
}

fn tmp(name: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karuta-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

fn adjudicate(layout: &str, readings: &str, events: &str) -> Output {
    bin()
        .args([
            "adjudicate",
            "--layout",
            layout,
            "--readings",
            readings,
            "--events",
            events,
        ])
        .output()
        .unwrap()
}

const EX: &str = "recordings/example";

fn one_line_error(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(2),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"));
    err
}

#[test]
fn adjudicate_writes_one_ruling_per_reading_then_the_result() {
    let o = adjudicate(
        &format!("{EX}/layout.json"),
        &format!("{EX}/readings.jsonl"),
        &format!("{EX}/events.jsonl"),
    );
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (last, rulings) = lines.split_last().unwrap();
    assert_eq!(last["kind"], "result");
    assert!(last["winner"] == "A" || last["winner"] == "B");
    for (i, r) in rulings.iter().enumerate() {
        assert_eq!(r["kind"], "reading");
        assert_eq!(r["seq"], i as u64 + 1);
        assert!(r["poem"].as_u64().is_some_and(|p| (1..=100).contains(&p)));
        assert!(r["articles"].as_array().is_some_and(|a| !a.is_empty()));
        assert!(r["why"].as_str().is_some_and(|w| !w.is_empty()));
        assert!(r["cards_after"]["A"].is_u64() && r["cards_after"]["B"].is_u64());
        if let Some(t) = r["take"].as_object() {
            assert!(["direct", "push_out", "simultaneous", "awarded"]
                .contains(&t["how"].as_str().unwrap()));
        }
    }
}

#[test]
fn kimariji_lists_every_unread_poem() {
    let o = bin().args(["kimariji"]).output().unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), 100);
    assert!(text.lines().any(|l| l == "87\tむ\t1"));
    let o = bin()
        .args(["kimariji", "--read", "60,95"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), 98);
    assert!(text.lines().any(|l| l == "44\tあふ\t2"));
    let e = one_line_error(
        &bin()
            .args(["kimariji", "--read", "5,101"])
            .output()
            .unwrap(),
    );
    assert!(e.contains("poem 101"));
}

#[test]
fn malformed_json_names_the_file_and_line() {
    let ev = tmp("bad.jsonl", "{\"t_s\": 1.0, \"kind\": \"enter\", \"player\": \"A\", \"hand\": \"left\"}\n{\"t_s\": 2.0,\n");
    let e = one_line_error(&adjudicate(
        &format!("{EX}/layout.json"),
        &format!("{EX}/readings.jsonl"),
        ev.to_str().unwrap(),
    ));
    assert!(e.contains("bad.jsonl: line 2:"), "{e}");
}

#[test]
fn poem_101_a_poem_read_twice_and_events_out_of_order_exit_2() {
    let r = tmp(
        "r101.jsonl",
        "{\"seq\":1,\"poem\":101,\"kami_start_s\":1.0}\n",
    );
    let e = one_line_error(&adjudicate(
        &format!("{EX}/layout.json"),
        r.to_str().unwrap(),
        &format!("{EX}/events.jsonl"),
    ));
    assert!(e.contains("r101.jsonl: line 1: poem 101"), "{e}");
    let r = tmp("twice.jsonl", "{\"seq\":1,\"poem\":7,\"kami_start_s\":1.0}\n{\"seq\":2,\"poem\":7,\"kami_start_s\":5.0}\n");
    let e = one_line_error(&adjudicate(
        &format!("{EX}/layout.json"),
        r.to_str().unwrap(),
        &format!("{EX}/events.jsonl"),
    ));
    assert!(e.contains("line 2") && e.contains("read twice"), "{e}");
    let ev = tmp("order.jsonl", "{\"t_s\":3.0,\"kind\":\"enter\",\"player\":\"B\",\"hand\":\"left\"}\n{\"t_s\":2.0,\"kind\":\"leave\",\"player\":\"B\",\"hand\":\"left\"}\n");
    let e = one_line_error(&adjudicate(
        &format!("{EX}/layout.json"),
        &format!("{EX}/readings.jsonl"),
        ev.to_str().unwrap(),
    ));
    assert!(
        e.contains("order.jsonl: line 2") && e.contains("out of order"),
        "{e}"
    );
}

#[test]
fn a_missing_file_and_a_card_in_two_places_exit_2() {
    let e = one_line_error(&adjudicate(
        "no/such/layout.json",
        &format!("{EX}/readings.jsonl"),
        &format!("{EX}/events.jsonl"),
    ));
    assert!(e.contains("no/such/layout.json"), "{e}");
    let l = tmp(
        "two.json",
        r#"{"cards":[{"poem":3,"owner":"A","row":1,"x_mm":0,"y_mm":-51.5},{"poem":3,"owner":"B","row":1,"x_mm":0,"y_mm":51.5}]}"#,
    );
    let e = one_line_error(&adjudicate(
        l.to_str().unwrap(),
        &format!("{EX}/readings.jsonl"),
        &format!("{EX}/events.jsonl"),
    ));
    assert!(e.contains("cards[1]") && e.contains("two places"), "{e}");
    let ev = tmp(
        "who.jsonl",
        "{\"t_s\":3.0,\"kind\":\"enter\",\"player\":\"C\",\"hand\":\"left\"}\n",
    );
    let e = one_line_error(&adjudicate(
        &format!("{EX}/layout.json"),
        &format!("{EX}/readings.jsonl"),
        ev.to_str().unwrap(),
    ));
    assert!(
        e.contains("who.jsonl: line 1") && e.contains("unknown variant"),
        "{e}"
    );
}
