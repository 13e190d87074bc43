//! Rules engine cost: the 100-reading example match adjudicated repeatedly.
//! `cargo bench --bench rules`. Under `cargo test` (no `--bench` flag) it only checks it runs.

use karuta_referee::rules::{adjudicate, parse};
use std::time::Instant;

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let read = |p: &str| std::fs::read_to_string(p).expect("example match");
    let layout =
        parse::parse_layout("layout", &read("recordings/example/layout.json")).expect("layout");
    let readings = parse::parse_readings("readings", &read("recordings/example/readings.jsonl"))
        .expect("readings");
    let events =
        parse::parse_events("events", &read("recordings/example/events.jsonl")).expect("events");
    let rounds = if benching { 200 } else { 1 };
    let mut per_reading_us = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t0 = Instant::now();
        let (rulings, _) = adjudicate(&layout, &readings, &events);
        per_reading_us.push(t0.elapsed().as_secs_f64() * 1e6 / rulings.len().max(1) as f64);
    }
    per_reading_us.sort_by(f64::total_cmp);
    if benching {
        println!(
            "rules: adjudicate one reading: median {:.1} us, p95 {:.1} us ({} readings x {rounds} rounds)",
            per_reading_us[rounds / 2],
            per_reading_us[rounds * 95 / 100],
            readings.len()
        );
    }
}
