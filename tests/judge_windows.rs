//! The pipeline's judge (`judge::Windows`) rules each reading as its window closes, on
//! events that arrive in pieces as perception makes them final. It must rule exactly as
//! `adjudicate` does on the whole file: the example match, fed a few events at a time.

use karuta_referee::judge::{Windows, CLOSE_MARGIN_S, NO_HAND_MODEL};
use karuta_referee::rules::parse::{parse_events, parse_layout, parse_readings};
use karuta_referee::rules::{adjudicate, Ruling};

fn example() -> (
    karuta_referee::rules::Layout,
    Vec<karuta_referee::rules::Reading>,
    Vec<karuta_referee::rules::Event>,
) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/recordings/example");
    let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).unwrap();
    (
        parse_layout("layout.json", &read("layout.json")).unwrap(),
        parse_readings("readings.jsonl", &read("readings.jsonl")).unwrap(),
        parse_events("events.jsonl", &read("events.jsonl")).unwrap(),
    )
}

#[test]
fn windows_fed_piecemeal_rule_as_adjudicate_does() {
    let (layout, readings, events) = example();
    let (want, want_result) = adjudicate(&layout, &readings, &events);
    let mut w = Windows::new(&layout, readings.clone(), true);
    let mut got: Vec<Ruling> = Vec::new();
    // A clock that runs in 0.25 s steps; events are handed over when the clock passes them.
    let end = events.last().map_or(0.0, |e| e.t_s) + 10.0;
    let mut i = 0;
    let mut now = 0.0;
    while now < end {
        let j = i + events[i..].iter().take_while(|e| e.t_s <= now).count();
        w.add(events[i..j].iter().cloned());
        i = j;
        for r in w.advance(now) {
            // Nothing is ruled before its window has closed and the margin passed.
            let next = readings.iter().find(|n| n.seq == r.ruling.seq + 1);
            if let Some(n) = next {
                assert!(now >= n.kami_start_s + CLOSE_MARGIN_S);
            }
            got.push(r.ruling);
        }
        now += 0.25;
    }
    got.extend(w.finish().into_iter().map(|r| r.ruling));
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    assert_eq!(w.result(), want_result);
}

#[test]
fn without_hands_every_ruling_says_why_it_needs_review() {
    let (layout, readings, events) = example();
    let mut w = Windows::new(&layout, readings, false);
    w.add(events);
    let rulings = w.finish();
    assert!(!rulings.is_empty());
    for r in &rulings {
        let review = r.ruling.needs_review.as_ref().expect("flagged");
        assert!(
            review.reason.contains(NO_HAND_MODEL) || review.reason.contains("unnamed"),
            "seq {}: {}",
            r.ruling.seq,
            review.reason
        );
    }
}

#[test]
fn a_resumed_judge_rules_the_rest_as_an_uninterrupted_one() {
    let (layout, readings, events) = example();
    let mut full = Windows::new(&layout, readings.clone(), true);
    full.add(events.clone());
    let all: Vec<Ruling> = full.finish().into_iter().map(|r| r.ruling).collect();
    // Stop after 40 readings; replay their events in a fresh judge, then go on.
    let cut = readings[40].kami_start_s;
    let (before, after): (Vec<_>, Vec<_>) = events.into_iter().partition(|e| e.t_s < cut);
    let mut resumed = Windows::new(&layout, readings, true);
    resumed.replay(before, 40);
    resumed.add(after);
    let rest: Vec<Ruling> = resumed.finish().into_iter().map(|r| r.ruling).collect();
    assert_eq!(rest, all[40..].to_vec());
}

/// The judge's rulings and the match's result when reading `seq`'s poem was heard only
/// as the closest match.
fn judged_with_unsure_poem(
    layout: &karuta_referee::rules::Layout,
    readings: Vec<karuta_referee::rules::Reading>,
    events: Vec<karuta_referee::rules::Event>,
    seq: u32,
) -> (Vec<Ruling>, karuta_referee::rules::MatchResult) {
    let mut w = Windows::new(layout, readings, true);
    w.unsure_poems([(seq, "poem heard only as the closest match".to_string())].into());
    w.add(events);
    let rulings = w.finish().into_iter().map(|r| r.ruling).collect();
    (rulings, w.result())
}

#[test]
fn a_poem_heard_only_as_the_closest_match_is_the_card_taken_and_reviewed() {
    let (layout, readings, events) = example();
    let (want, want_result) = adjudicate(&layout, &readings, &events);
    // The first reading with a take that the rules alone do not send to review.
    let taken = want
        .iter()
        .find(|r| r.needs_review.is_none() && r.take.is_some())
        .unwrap();
    // The sound heard the wrong poem, and not surely.
    let mut heard = readings.clone();
    let k = heard.iter().position(|r| r.seq == taken.seq).unwrap();
    // The closest match among the poems not yet read: one read later in the match.
    heard[k].poem = readings[k + 1].poem;
    let (got, result) = judged_with_unsure_poem(&layout, heard, events, taken.seq);
    assert_eq!(got.len(), want.len());
    for (g, r) in got.iter().zip(&want) {
        if g.seq == taken.seq {
            // The card taken names the poem; the ruling is the one on the true reading.
            assert_eq!(g.poem, r.poem);
            assert_eq!(g.take, r.take);
            assert_eq!(g.fouls, r.fouls);
            assert_eq!(g.sends, r.sends);
            assert_eq!(g.cards_after, r.cards_after);
            // The sound's closest match was another poem: a foul on a dead card would look
            // the same, so the ruling still asks for a look.
            let review = g.needs_review.as_ref().expect("marked for review");
            assert!(review.reason.contains("card taken"), "{}", review.reason);
            assert!(g.why.contains("card taken"), "{}", g.why);
        } else {
            assert_eq!(g, r);
        }
    }
    assert_eq!(result, want_result);
}

#[test]
fn a_poem_heard_only_as_the_closest_match_with_nothing_taken_goes_to_review() {
    let (layout, readings, events) = example();
    let (want, _) = adjudicate(&layout, &readings, &events);
    // A reading with no take, no foul and no review: nothing on the field was taken.
    let idle = want
        .iter()
        .find(|r| r.needs_review.is_none() && r.take.is_none() && r.fouls.is_empty())
        .unwrap();
    let (got, _) = judged_with_unsure_poem(&layout, readings, events, idle.seq);
    for (g, r) in got.iter().zip(&want) {
        if g.seq == idle.seq {
            let review = g.needs_review.as_ref().expect("marked for review");
            assert!(review.reason.contains("closest match"));
            // Only the review changes: the ruling itself is the rules'.
            assert_eq!(g.take, r.take);
            assert_eq!(g.fouls, r.fouls);
            assert_eq!(g.poem, r.poem);
        } else {
            assert_eq!(g, r);
        }
    }
}

#[test]
fn a_wrong_guess_nobody_took_leaves_the_count_and_later_readings_as_they_were() {
    let (layout, readings, events) = example();
    let (want, want_result) = adjudicate(&layout, &readings, &events);
    // A reading where nothing was taken nor fouled, whose card was not in play (a dead
    // card): the sound guessed instead a card in play that is taken in a later reading.
    let k = want
        .iter()
        .position(|r| {
            r.needs_review.is_none() && r.take.is_none() && r.fouls.is_empty() && !r.card.in_play
        })
        .unwrap();
    let later = want[k + 1..]
        .iter()
        .find(|r| r.take.is_some() && r.card.in_play)
        .unwrap();
    let mut heard = readings.clone();
    heard[k].poem = later.poem;
    let (got, result) = judged_with_unsure_poem(&layout, heard, events, readings[k].seq);
    assert_eq!(got.len(), want.len());
    for (g, r) in got.iter().zip(&want) {
        if g.seq == readings[k].seq {
            assert_eq!(g.poem, later.poem);
            assert_eq!(g.take, None);
            // The guessed card stays in the count.
            assert_eq!(g.cards_after, r.cards_after);
            // The guess is what the ruling is sent to review for, before anything else
            // (here: nobody touched the guessed card, which was in play).
            let review = g.needs_review.as_ref().expect("marked for review");
            assert!(
                review
                    .reason
                    .starts_with("poem heard only as the closest match"),
                "{}",
                review.reason
            );
            assert!(
                review.reason.contains("nobody touched"),
                "{}",
                review.reason
            );
        } else {
            // The guessed poem, read later, is ruled as on the true readings. (The
            // kimari-ji may be longer: the dead card truly read was never heard.)
            assert_eq!((g.poem, &g.card, &g.take), (r.poem, &r.card, &r.take));
            assert_eq!((&g.fouls, &g.sends), (&r.fouls, &r.sends));
            assert_eq!(g.cards_after, r.cards_after, "seq {}", g.seq);
            assert_eq!(g.needs_review, r.needs_review, "seq {}", g.seq);
        }
    }
    assert_eq!(result, want_result);
}

#[test]
fn a_poem_heard_only_as_the_closest_match_with_a_stray_first_touch_goes_to_review() {
    use karuta_referee::rules::{Event, EventKind, Hand, Player};
    let (layout, readings, mut events) = example();
    let (want, _) = adjudicate(&layout, &readings, &events);
    // A reading whose take is a direct touch that drove the card out.
    let taken = want
        .iter()
        .find(|r| {
            r.needs_review.is_none()
                && r.take.is_some()
                && events.iter().any(|e| {
                    matches!(e.what, EventKind::Out { poem, .. } if poem == r.poem)
                        && readings
                            .iter()
                            .any(|x| x.seq == r.seq && e.t_s > x.kami_start_s)
                })
        })
        .unwrap();
    let k = readings.iter().position(|r| r.seq == taken.seq).unwrap();
    // Just after the reading begins, a hand brushes a card the layout does not hold.
    let stray = (1..=100u8)
        .find(|p| layout.cards.iter().all(|c| c.poem != Some(*p)))
        .unwrap();
    let at = readings[k].kami_start_s + 0.01;
    events.push(Event::new(
        at,
        EventKind::Touch {
            player: Player::A,
            hand: Hand::Right,
            poem: Some(stray),
            territory: None,
            direct: true,
        },
    ));
    events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    let mut heard = readings.clone();
    heard[k].poem = readings[k + 1].poem;
    let (got, _) = judged_with_unsure_poem(&layout, heard, events, taken.seq);
    let g = got.iter().find(|r| r.seq == taken.seq).unwrap();
    // The first touch and the card driven out disagree, and the sound names neither:
    // no poem is guessed from the cards.
    let review = g.needs_review.as_ref().expect("marked for review");
    assert!(review.reason.contains("closest match"), "{}", review.reason);
    assert!(!g.why.contains("card taken"), "{}", g.why);
}

#[test]
fn a_poem_heard_only_as_the_closest_match_and_taken_needs_no_review() {
    let (layout, readings, events) = example();
    let (want, _) = adjudicate(&layout, &readings, &events);
    let taken = want
        .iter()
        .find(|r| r.needs_review.is_none() && r.take.is_some())
        .unwrap();
    // The sound's closest match was right but did not stand out; the card taken agrees.
    let (got, _) = judged_with_unsure_poem(&layout, readings, events, taken.seq);
    let g = got.iter().find(|r| r.seq == taken.seq).unwrap();
    assert_eq!(g.take, taken.take);
    assert_eq!(g.fouls, taken.fouls);
    assert_eq!(g.needs_review, None);
    assert!(g.why.contains("card taken"), "{}", g.why);
}

#[test]
fn early_takes_call_each_take_once_as_soon_as_its_deciding_event_is_in() {
    let (layout, readings, events) = example();
    let (want, _) = adjudicate(&layout, &readings, &events);
    let mut w = Windows::new(&layout, readings.clone(), true);
    // A clock in frame steps of 1/240 s; each event is handed over on the frame after it.
    let step = 1.0 / 240.0;
    let end = readings.get(40).map_or(0.0, |r| r.kami_start_s);
    let mut i = 0;
    let mut now = 0.0;
    let mut called: Vec<(Ruling, f64)> = Vec::new();
    let mut closed: Vec<Ruling> = Vec::new();
    while now < end {
        let j = i + events[i..].iter().take_while(|e| e.t_s < now).count();
        w.add(events[i..j].iter().cloned());
        i = j;
        closed.extend(w.advance(now).into_iter().map(|r| r.ruling));
        if let Some(r) = w.early_take(now, &[]) {
            called.push((r, now));
        }
        now += step;
    }
    assert!(called.len() >= 5, "only {} takes called", called.len());
    let mut seqs: Vec<u32> = called.iter().map(|(r, _)| r.seq).collect();
    seqs.dedup();
    assert_eq!(seqs.len(), called.len(), "a reading's take called twice");
    for (r, at) in &called {
        let take = r.take.as_ref().expect("a call has a take");
        // Called on the first frame after the deciding event, long before the window
        // closes; and the call names the taker the final ruling names.
        assert!(
            *at > take.t_s && *at <= take.t_s + 2.0 * step + 1e-9,
            "seq {}",
            r.seq
        );
        let fin = want.iter().find(|f| f.seq == r.seq).expect("ruled");
        assert_eq!(
            fin.take.as_ref().map(|t| t.player),
            Some(take.player),
            "seq {}",
            r.seq
        );
    }
    // Every reading with a take among those closed was called early.
    for f in closed.iter().filter(|f| f.take.is_some()) {
        assert!(
            called.iter().any(|(r, _)| r.seq == f.seq),
            "seq {} not called",
            f.seq
        );
    }
}

/// Reading `seq` as the judge rules it on `seen` (sorted here), with hands seen, and
/// touches of unmoved cards from fingertips when `fingertips`.
fn rule_one(
    layout: &karuta_referee::rules::Layout,
    readings: &[karuta_referee::rules::Reading],
    mut seen: Vec<karuta_referee::rules::Event>,
    seq: u32,
    fingertips: bool,
) -> Ruling {
    seen.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    let mut w = Windows::new(layout, readings.to_vec(), true);
    w.fingertip_touches(fingertips);
    w.add(seen);
    w.finish()
        .into_iter()
        .find(|r| r.ruling.seq == seq)
        .unwrap()
        .ruling
}

/// The first hand any touch of `events` names.
fn first_hand(events: &[karuta_referee::rules::Event]) -> karuta_referee::rules::Hand {
    use karuta_referee::rules::EventKind;
    events
        .iter()
        .find_map(|e| match e.what {
            EventKind::Touch { hand, .. } => Some(hand),
            _ => None,
        })
        .unwrap()
}

/// The example's first reading taken directly, with no foul and no review, as
/// `adjudicate` rules it, and its window `[from, to)`.
fn clean_direct_take(
    layout: &karuta_referee::rules::Layout,
    readings: &[karuta_referee::rules::Reading],
    events: &[karuta_referee::rules::Event],
) -> (Ruling, f64, f64) {
    use karuta_referee::rules::TakeHow;
    let (want, _) = adjudicate(layout, readings, events);
    let taken = want
        .iter()
        .find(|r| {
            r.needs_review.is_none()
                && r.fouls.is_empty()
                && r.take.as_ref().is_some_and(|t| t.how == TakeHow::Direct)
        })
        .expect("a clean direct take");
    let k = readings.iter().position(|r| r.seq == taken.seq).unwrap();
    let from = readings[k].kami_start_s;
    let to = readings
        .get(k + 1)
        .map_or(f64::INFINITY, |n| n.kami_start_s);
    (taken.clone(), from, to)
}

#[test]
fn a_take_driven_out_by_both_hands_goes_to_the_owner_and_to_review() {
    use karuta_referee::rules::{By, Event, EventKind, ReviewWhat, TakeHow};
    let (layout, readings, events) = example();
    // A reading taken directly, with no foul and no review.
    let (taken, from, to) = clean_direct_take(&layout, &readings, &events);
    let take_s = taken.take.as_ref().unwrap().t_s;
    let in_window = |e: &Event| e.t_s >= from && e.t_s < to;
    // The camera saw no touch on the card, only the card going out with both players'
    // hands equally near it.
    let mut seen: Vec<Event> = events
        .iter()
        .filter(|e| {
            !(in_window(e)
                && matches!(e.what, EventKind::Touch { poem, .. } if poem == Some(taken.poem)))
        })
        .cloned()
        .collect();
    seen.push(Event::new(
        take_s + 0.1,
        EventKind::Out {
            poem: taken.poem,
            by: By::Both,
            hand: None,
        },
    ));
    seen.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    let mut w = Windows::new(&layout, readings.clone(), true);
    w.add(seen);
    let got = w.finish();
    let g = &got
        .iter()
        .find(|r| r.ruling.seq == taken.seq)
        .unwrap()
        .ruling;
    // 18-2: a card both drove out goes to its owner; the camera says it could not tell.
    let owner = taken.card.owner.expect("the card lay in a territory");
    let take = g.take.as_ref().expect("a take");
    assert_eq!(take.how, TakeHow::Simultaneous);
    assert_eq!(take.player, owner);
    let review = g.needs_review.as_ref().expect("sent to review");
    assert_eq!(review.what, ReviewWhat::CloseCall);
    assert!(review.reason.contains(&format!("card {}", taken.poem)));
}

#[test]
fn a_direct_take_of_a_card_both_hands_drove_goes_to_review_unless_both_touches_were_seen() {
    use karuta_referee::rules::{By, Event, EventKind, ReviewWhat, TakeHow};
    let (layout, readings, events) = example();
    let (taken, from, to) = clean_direct_take(&layout, &readings, &events);
    let take = taken.take.clone().unwrap();
    // The taker's touch stays, the other player's touches of the card are not seen, and
    // the card goes out with both players' hands equally near it, 100 ms after the take.
    // `other_touch`: the other player's touch of it seen this long after the taker's.
    let judged = |other_touch: Option<f64>| {
        let mut seen: Vec<Event> = events
            .iter()
            .filter(|e| {
                !(e.t_s >= from
                    && e.t_s < to
                    && match e.what {
                        EventKind::Out { poem, .. } => poem == taken.poem,
                        EventKind::Touch { player, poem, .. } => {
                            poem == Some(taken.poem) && player != take.player
                        }
                        _ => false,
                    })
            })
            .cloned()
            .collect();
        seen.push(Event::new(
            take.t_s + 0.1,
            EventKind::Out {
                poem: taken.poem,
                by: By::Both,
                hand: None,
            },
        ));
        if let Some(after_s) = other_touch {
            let hand = first_hand(&events);
            seen.push(Event::new(
                take.t_s + after_s,
                EventKind::Touch {
                    player: take.player.other(),
                    hand,
                    poem: Some(taken.poem),
                    territory: None,
                    direct: true,
                },
            ));
        }
        rule_one(&layout, &readings, seen, taken.seq, false)
    };
    let alone = judged(None);
    let t = alone.take.as_ref().expect("a take");
    assert_eq!((t.player, t.how), (take.player, TakeHow::Direct));
    let review = alone.needs_review.as_ref().expect("sent to review");
    assert_eq!(review.what, ReviewWhat::CloseCall);
    assert!(review
        .reason
        .contains(&format!("only {:?}'s touch", take.player)));
    // Both touches seen, 80 ms apart: the camera ordered them, nothing to review.
    let both = judged(Some(0.08));
    let t = both.take.as_ref().expect("a take");
    assert_eq!((t.player, t.how), (take.player, TakeHow::Direct));
    assert!(both.needs_review.is_none(), "{:?}", both.needs_review);
    // The other's touch seen only once the card was out (a hand following it, the demo's
    // seed 4242 reading 1): it says nothing of the race, so the take goes to review.
    let late = judged(Some(0.15));
    let t = late.take.as_ref().expect("a take");
    assert_eq!((t.player, t.how), (take.player, TakeHow::Direct));
    let review = late.needs_review.as_ref().expect("sent to review");
    assert_eq!(review.what, ReviewWhat::CloseCall);
}

/// Reading 1 of the example (poem 56, a dead card) with A's fingertip on card 10 (A's)
/// at 11.5 s, and `more` after it; fouls resting on fingertips go to review or not.
/// Card 10 driven out by A's right hand at 11.8 s, just after `dead_card_touch_at`'s touch.
fn card_10_driven_out_by_a() -> karuta_referee::rules::Event {
    use karuta_referee::rules::{By, Event, EventKind, Hand};
    Event::new(
        11.8,
        EventKind::Out {
            poem: 10,
            by: By::A,
            hand: Some(Hand::Right),
        },
    )
}

fn dead_card_touch(fingertips: bool, more: Vec<karuta_referee::rules::Event>) -> Ruling {
    dead_card_touch_at(fingertips, None, more).ruling
}

/// A's touch of card 10 at 11.5 s during the example's first reading (a dead card), its
/// hand moving at `sweep_mm_s`, and `more`: the reading ruled, with its events.
fn dead_card_touch_at(
    fingertips: bool,
    sweep_mm_s: Option<f64>,
    more: Vec<karuta_referee::rules::Event>,
) -> karuta_referee::judge::Ruled {
    dead_card_touch_as(fingertips, &|t| t.sweep_mm_s = sweep_mm_s, more)
}

/// `dead_card_touch_at` with the touch shaped by `shape`.
fn dead_card_touch_as(
    fingertips: bool,
    shape: &dyn Fn(&mut karuta_referee::rules::Event),
    more: Vec<karuta_referee::rules::Event>,
) -> karuta_referee::judge::Ruled {
    use karuta_referee::rules::{Event, EventKind, Hand, Player};
    let (layout, readings, _) = example();
    assert_eq!(readings[0].poem, 56);
    assert!(
        layout.cards.iter().all(|c| c.poem != Some(56)),
        "a dead card"
    );
    let mut w = Windows::new(&layout, vec![readings[0].clone()], true);
    w.fingertip_touches(fingertips);
    let mut touch = Event::new(
        11.5,
        EventKind::Touch {
            player: Player::A,
            hand: Hand::Right,
            poem: Some(10),
            territory: None,
            direct: true,
        },
    );
    shape(&mut touch);
    let mut events = vec![touch];
    events.extend(more);
    w.add(events);
    let mut r = w.finish();
    assert_eq!(r.len(), 1);
    r.remove(0)
}

#[test]
fn a_foul_on_a_fingertip_alone_goes_to_review_and_one_that_moved_the_card_does_not() {
    use karuta_referee::rules::{FoulKind, Player};
    let fingertip = |r: &Ruling| {
        r.needs_review
            .as_ref()
            .is_some_and(|v| v.reason.contains("fingertip") && v.reason.contains("card 10"))
    };
    // 23-1: any touch during a dead card is a foul; here it moved nothing.
    let alone = dead_card_touch(true, Vec::new());
    assert!(alone
        .fouls
        .iter()
        .any(|f| f.player == Player::A && f.kind == FoulKind::DeadCard));
    assert!(fingertip(&alone), "{:?}", alone.needs_review);
    // The same touch driving the card out: the foul stands on the card's motion.
    let out = card_10_driven_out_by_a();
    let moved = dead_card_touch(true, vec![out]);
    assert!(moved.fouls.iter().any(|f| f.player == Player::A));
    assert!(!fingertip(&moved), "{:?}", moved.needs_review);
    // Touches not judged from fingertips (typed, or the simulator's labels): no review.
    let typed = dead_card_touch(false, Vec::new());
    assert_eq!(typed.fouls, alone.fouls);
    assert!(!fingertip(&typed), "{:?}", typed.needs_review);
}

#[test]
fn a_direct_take_goes_to_review_when_the_rival_was_seen_pressing_the_card_beside_just_before() {
    use karuta_referee::rules::{Event, EventKind, ReviewWhat, TakeHow};
    let (layout, readings, events) = example();
    let (taken, from, to) = clean_direct_take(&layout, &readings, &events);
    let take = taken.take.clone().unwrap();
    let rival = take.player.other();
    let place = |poem: u8| {
        let c = layout.cards.iter().find(|c| c.poem == Some(poem)).unwrap();
        (c.owner, c.x_mm, c.y_mm)
    };
    let (owner, x0, y0) = place(taken.poem);
    let dist = |p: u8| {
        let (_, x, y) = place(p);
        (x - x0).hypot(y - y0)
    };
    // A card beside the read card, and one of the same territory far from it (touching
    // the read card's territory is no foul, 23-1 note).
    let same: Vec<u8> = layout
        .cards
        .iter()
        .filter(|c| c.owner == owner)
        .filter_map(|c| c.poem)
        .filter(|p| *p != taken.poem && !readings.iter().any(|r| r.poem == *p && r.seq < taken.seq))
        .collect();
    let beside = *same
        .iter()
        .min_by(|a, b| dist(**a).total_cmp(&dist(**b)))
        .unwrap();
    let far = *same
        .iter()
        .max_by(|a, b| dist(**a).total_cmp(&dist(**b)))
        .unwrap();
    assert!(dist(beside) < 80.0 && dist(far) > 300.0);
    let hand = first_hand(&events);
    let judged = |pressed: u8| {
        // The rival's touches of the read card are not seen; its fingertip is seen on
        // `pressed` 100 ms before the take.
        let mut seen: Vec<Event> = events
            .iter()
            .filter(|e| {
                !(e.t_s >= from
                    && e.t_s < to
                    && matches!(e.what, EventKind::Touch { player, .. } if player == rival))
            })
            .cloned()
            .collect();
        seen.push(Event::new(
            take.t_s - 0.1,
            EventKind::Touch {
                player: rival,
                hand,
                poem: Some(pressed),
                territory: None,
                direct: true,
            },
        ));
        rule_one(&layout, &readings, seen, taken.seq, true)
    };
    let near = judged(beside);
    let t = near.take.as_ref().expect("a take");
    assert_eq!((t.player, t.how), (take.player, TakeHow::Direct));
    let review = near.needs_review.as_ref().expect("sent to review");
    assert_eq!(review.what, ReviewWhat::CloseCall);
    assert!(
        review.reason.contains(&format!("card {beside}, beside")),
        "{}",
        review.reason
    );
    // The same press far from the read card: the take stands, nothing to review.
    let away = judged(far);
    assert_eq!(away.take, near.take);
    assert!(away.needs_review.is_none(), "{:?}", away.needs_review);
}

#[test]
fn a_fingertip_on_an_unnamed_card_of_the_territory_without_the_read_card_is_a_foul_to_review() {
    use karuta_referee::rules::{Event, EventKind, FoulKind};
    let (mut layout, readings, events) = example();
    let (taken, from, to) = clean_direct_take(&layout, &readings, &events);
    let take = taken.take.clone().unwrap();
    let owner = layout
        .cards
        .iter()
        .find(|c| c.poem == Some(taken.poem))
        .unwrap()
        .owner;
    let rival = take.player.other();
    // A card of the other territory, not read by then: the layout could not name it.
    let other = layout
        .cards
        .iter_mut()
        .find(|c| {
            c.owner != owner
                && !readings
                    .iter()
                    .any(|r| Some(r.poem) == c.poem && r.seq <= taken.seq)
        })
        .unwrap();
    other.poem = None;
    // The rival's lead hand: the hand of its first touch (13-2), else the layout's.
    let rival_hand = events
        .iter()
        .find_map(|e| match e.what {
            EventKind::Touch { player, hand, .. } if player == rival => Some(hand),
            _ => None,
        })
        .or(layout.lead_hand(rival))
        .unwrap();
    let mut seen: Vec<Event> = events.clone();
    seen.push(Event::new(
        take.t_s - 0.1,
        EventKind::Touch {
            player: rival,
            hand: rival_hand,
            poem: None,
            territory: Some(owner.other()),
            direct: true,
        },
    ));
    assert!(take.t_s - 0.1 > from && take.t_s < to);
    let r = rule_one(&layout, &readings, seen.clone(), taken.seq, true);
    assert_eq!(r.take.as_ref().map(|t| t.player), Some(take.player));
    assert!(
        r.fouls
            .iter()
            .any(|f| f.player == rival && f.kind == FoulKind::WrongTerritory && !f.cancelled),
        "{:?}",
        r.fouls
    );
    let review = r
        .needs_review
        .expect("a foul on a fingertip alone is reviewed");
    assert!(
        review
            .reason
            .contains(&format!("an unnamed card in {}'s territory", owner.other())),
        "{}",
        review.reason
    );
}

#[test]
fn a_take_lost_to_the_hand_that_is_not_the_lead_hand_goes_to_review() {
    use karuta_referee::rules::{EventKind, Hand, ReviewWhat, TakeHow};
    let (layout, readings, events) = example();
    let (taken, from, to) = clean_direct_take(&layout, &readings, &events);
    let take = taken.take.clone().unwrap();
    // The taker's touches of the read card in that reading, read as the other hand.
    let flipped: Vec<_> = events
        .iter()
        .cloned()
        .map(|mut e| {
            if e.t_s >= from && e.t_s < to {
                if let EventKind::Touch {
                    player,
                    ref mut hand,
                    poem,
                    ..
                } = e.what
                {
                    if player == take.player && poem == Some(taken.poem) {
                        *hand = match *hand {
                            Hand::Left => Hand::Right,
                            Hand::Right => Hand::Left,
                        };
                    }
                }
            }
            e
        })
        .collect();
    let ruled = rule_one(&layout, &readings, flipped.clone(), taken.seq, false);
    // 21-3: the card goes to the opponent, and the call rests on the camera's left and right.
    assert!(
        ruled.articles.iter().any(|a| a == "21-3"),
        "{:?}",
        ruled.articles
    );
    let t = ruled.take.as_ref().expect("a take");
    assert_eq!(t.player, take.player.other());
    assert_eq!(t.how, TakeHow::Awarded);
    let review = ruled.needs_review.as_ref().expect("sent to review");
    assert_eq!(review.what, ReviewWhat::Rules);
    assert!(review.reason.contains("21-3"), "{}", review.reason);
    // The reason says where the lead hand came from: the layout's declaration, or
    // (with no declaration) the hand read at the player's first touch.
    let declared = layout.lead_hand(take.player.other()).is_some();
    let source = if declared {
        "the layout declares"
    } else {
        "first touch"
    };
    assert!(review.reason.contains(source), "{}", review.reason);
    let mut undeclared = layout.clone();
    undeclared.players.clear();
    let ruled = rule_one(&undeclared, &readings, flipped.clone(), taken.seq, false);
    let review = ruled.needs_review.as_ref().expect("sent to review");
    assert!(review.reason.contains("first touch"), "{}", review.reason);
    // The same touches with the lead hand: the take stands, nothing to review.
    let kept = rule_one(&layout, &readings, events.clone(), taken.seq, false);
    assert_eq!(kept.take, taken.take);
    assert!(kept.needs_review.is_none(), "{:?}", kept.needs_review);
}

#[test]
fn a_hand_sweeping_past_a_card_it_does_not_move_is_not_ruled_as_touching_it_and_goes_to_review() {
    use karuta_referee::judge::windows::PASS_SWEEP_MM_S;
    use karuta_referee::rules::{Event, EventKind, FoulKind, Player};
    let rule = |sweep: Option<f64>, more: Vec<Event>| dead_card_touch_at(true, sweep, more);
    let dead_card_foul = |r: &Ruling| {
        r.fouls
            .iter()
            .any(|f| f.player == Player::A && f.kind == FoulKind::DeadCard)
    };
    // A touch during a dead card (23-1) by a hand at rest on the card, or of unknown speed.
    for sweep in [None, Some(150.0), Some(PASS_SWEEP_MM_S - 1.0)] {
        let r = rule(sweep, Vec::new());
        assert!(dead_card_foul(&r.ruling), "{sweep:?}: {:?}", r.ruling.fouls);
        assert!(!r.ruling.why.contains("Not ruled as touches"));
    }
    // The hand sweeping past at 0.9 m/s, the card unmoved: no touch, no foul, and the
    // ruling says what was left out; the event itself stays in the window's events.
    let passed = rule(Some(900.0), Vec::new());
    assert!(passed.ruling.fouls.is_empty(), "{:?}", passed.ruling.fouls);
    assert!(
        passed
            .ruling
            .why
            .contains("A's hand over 10 at 11.500 s, at 0.90 m/s"),
        "{}",
        passed.ruling.why
    );
    assert!(passed
        .events
        .iter()
        .any(|e| e.sweep_mm_s == Some(900.0) && matches!(e.what, EventKind::Touch { .. })));
    // Touching the card would have been a foul (23-1): the ruling goes to review.
    let review = passed.ruling.needs_review.as_ref().expect("to review");
    assert!(
        review.reason.contains("swept over card 10 at 11.500 s"),
        "{}",
        review.reason
    );
    // A slow touch of the card just before: the foul stands on it, and the pass changes
    // nothing, so the review (for the fingertip alone) does not name the pass.
    let mut tapped = passed.events[0].clone();
    tapped.t_s = 11.4;
    tapped.sweep_mm_s = Some(150.0);
    let both = rule(Some(900.0), vec![tapped]);
    assert!(dead_card_foul(&both.ruling), "{:?}", both.ruling.fouls);
    let review = both.ruling.needs_review.as_ref().expect("to review");
    assert!(!review.reason.contains("swept"), "{}", review.reason);
    // The same hand driving the card out: a touch, whatever its speed.
    let out = card_10_driven_out_by_a();
    let struck = rule(Some(900.0), vec![out]);
    assert!(dead_card_foul(&struck.ruling), "{:?}", struck.ruling.fouls);
}

#[test]
fn a_hand_held_over_a_card_it_does_not_move_is_not_ruled_as_touching_it_and_goes_to_review() {
    use karuta_referee::judge::windows::HELD_OVER_S;
    use karuta_referee::rules::{FoulKind, Player};
    let rule =
        |pressed: Option<f64>, more| dead_card_touch_as(true, &|t| t.pressed_s = pressed, more);
    let dead_card_foul = |r: &Ruling| {
        r.fouls
            .iter()
            .any(|f| f.player == Player::A && f.kind == FoulKind::DeadCard)
    };
    // A tap during a dead card (23-1), or a touch not timed: a foul.
    for pressed in [None, Some(0.04), Some(HELD_OVER_S - 0.01)] {
        let r = rule(pressed, Vec::new());
        assert!(
            dead_card_foul(&r.ruling),
            "{pressed:?}: {:?}",
            r.ruling.fouls
        );
        assert!(!r.ruling.why.contains("Not ruled as touches"));
    }
    // "Pressing" the unmoved card for the whole span: a hand held over it. No foul; the
    // ruling names it, and goes to review, since pressing would have been a foul.
    let held = rule(Some(HELD_OVER_S), Vec::new());
    assert!(held.ruling.fouls.is_empty(), "{:?}", held.ruling.fouls);
    assert!(
        held.ruling
            .why
            .contains("a hand held over a card it did not move): A's hand over 10 at 11.500 s"),
        "{}",
        held.ruling.why
    );
    let review = held.ruling.needs_review.expect("to review");
    assert!(
        review.reason.contains("held over card 10"),
        "{}",
        review.reason
    );
    assert!(held.events.iter().any(|e| e.pressed_s == Some(HELD_OVER_S)));
    // The same hand driving the card out: a touch, however long it pressed.
    let struck = rule(Some(HELD_OVER_S), vec![card_10_driven_out_by_a()]);
    assert!(dead_card_foul(&struck.ruling), "{:?}", struck.ruling.fouls);
}

#[test]
fn a_foul_dismissed_for_a_touch_read_as_the_other_hand_goes_to_review() {
    use karuta_referee::rules::{Event, EventKind, FoulKind, Hand, Player, ReviewWhat};
    let (layout, _, _) = example();
    let ten = layout.cards.iter().find(|c| c.poem == Some(10)).unwrap();
    let across = layout
        .cards
        .iter()
        .find(|c| c.owner != ten.owner && c.poem.is_some())
        .unwrap();
    // After A's first touch (card 10, right hand: the lead hand, 13-2), a touch of a card
    // in the other territory read as A's left hand.
    let second = |hand| {
        Event::new(
            11.8,
            EventKind::Touch {
                player: Player::A,
                hand,
                poem: across.poem,
                territory: None,
                direct: true,
            },
        )
    };
    let read_left = dead_card_touch_as(true, &|_| {}, vec![second(Hand::Left)]).ruling;
    assert!(
        read_left.articles.iter().any(|a| a == "23-5"),
        "{:?}",
        read_left.articles
    );
    let review = read_left.needs_review.as_ref().expect("sent to review");
    assert_eq!(review.what, ReviewWhat::Rules);
    assert!(
        review.reason.contains("23-5") && review.reason.contains("left hand"),
        "{}",
        review.reason
    );
    // Read as the lead hand, both territories were touched during a dead card (25-3): the
    // fouls differ, which is why the reading above goes to review.
    let read_right = dead_card_touch_as(true, &|_| {}, vec![second(Hand::Right)]).ruling;
    assert_ne!(read_right.fouls, read_left.fouls);
    assert!(read_right
        .fouls
        .iter()
        .any(|f| f.player == Player::A && f.kind == FoulKind::Double));
    assert!(
        read_right
            .needs_review
            .as_ref()
            .is_none_or(|v| !v.reason.contains("23-5")),
        "{:?}",
        read_right.needs_review
    );
    // Hands known exactly (typed, or the simulator's labels): left is left, no review.
    let typed = dead_card_touch_as(false, &|_| {}, vec![second(Hand::Left)]).ruling;
    assert_eq!(typed.fouls, read_left.fouls);
    assert!(typed.needs_review.is_none(), "{:?}", typed.needs_review);
}

#[test]
fn a_take_whose_touch_was_pressed_again_after_the_rivals_goes_to_review() {
    use karuta_referee::rules::{Event, EventKind, ReviewWhat, TakeHow};
    let (layout, readings, events) = example();
    let (taken, from, to) = clean_direct_take(&layout, &readings, &events);
    let take = taken.take.clone().unwrap();
    let rival = take.player.other();
    let hand = first_hand(&events);
    let touch = |player, t_s: f64, pressed_s: f64| {
        let mut e = Event::new(
            t_s,
            EventKind::Touch {
                player,
                hand,
                poem: Some(taken.poem),
                territory: None,
                direct: true,
            },
        );
        e.t_err_s = 0.005;
        e.pressed_s = Some(pressed_s);
        e
    };
    // The taker's first press lasts 20 ms; the rival's touch of the read card comes 50 ms
    // after it (well past the timing error: the order measured is sure), and the taker
    // presses again `again_s` after the first.
    let judged = |again_s: Option<f64>, rival_s: f64| {
        let mut seen: Vec<Event> = events
            .iter()
            .filter(|e| {
                !(e.t_s >= from
                    && e.t_s < to
                    && matches!(&e.what, EventKind::Touch { poem: Some(p), direct: true, .. } if *p == taken.poem))
            })
            .cloned()
            .collect();
        seen.push(touch(take.player, take.t_s, 0.02));
        seen.extend(again_s.map(|a| touch(take.player, take.t_s + a, 0.02)));
        seen.push(touch(rival, take.t_s + rival_s, 0.02));
        rule_one(&layout, &readings, seen, taken.seq, true)
    };
    // Pressed again 60 ms after the first, the rival's touch between: if the first press
    // was a finger held just over the card, the rival touched first.
    let between = judged(Some(0.06), 0.05);
    let t = between.take.as_ref().expect("a take");
    assert_eq!((t.player, t.how), (take.player, TakeHow::Direct));
    let review = between.needs_review.as_ref().expect("sent to review");
    assert_eq!(review.what, ReviewWhat::CloseCall);
    assert!(
        review.reason.contains("pressed it again") && review.reason.contains("came between"),
        "{}",
        review.reason
    );
    // No second press, or the rival's touch well after the second (past its timing
    // error): the take stands, nothing to review.
    for (again, rival_s) in [(None, 0.05), (Some(0.06), 0.1)] {
        let clear = judged(again, rival_s);
        let c = clear.take.as_ref().expect("a take");
        assert_eq!((c.player, c.how, c.t_s), (t.player, t.how, t.t_s));
        assert!(clear.needs_review.is_none(), "{:?}", clear.needs_review);
    }
}

#[test]
fn a_take_on_a_sweeping_touch_of_a_card_the_rival_drove_out_goes_to_review() {
    use karuta_referee::judge::windows::PASS_SWEEP_MM_S;
    use karuta_referee::rules::{By, Event, EventKind, Hand, ReviewWhat, TakeHow};
    let (layout, readings, events) = example();
    let (taken, from, to) = clean_direct_take(&layout, &readings, &events);
    let take = taken.take.clone().unwrap();
    let rival = take.player.other();
    // The read card's touches and outs replaced: the taker's touch at `sweep_mm_s`, and
    // the card driven out 0.2 s later by `by`.
    let judged = |sweep_mm_s: f64, by: By| {
        let mut seen: Vec<Event> = events
            .iter()
            .filter(|e| {
                !(e.t_s >= from
                    && e.t_s < to
                    && match &e.what {
                        EventKind::Touch { poem, .. } => *poem == Some(taken.poem),
                        EventKind::Out { poem, .. } => *poem == taken.poem,
                        _ => false,
                    })
            })
            .cloned()
            .collect();
        let mut touch = Event::new(
            take.t_s,
            EventKind::Touch {
                player: take.player,
                hand: first_hand(&events),
                poem: Some(taken.poem),
                territory: None,
                direct: true,
            },
        );
        touch.sweep_mm_s = Some(sweep_mm_s);
        seen.push(touch);
        seen.push(Event::new(
            take.t_s + 0.2,
            EventKind::Out {
                poem: taken.poem,
                by,
                hand: Some(Hand::Right),
            },
        ));
        rule_one(&layout, &readings, seen, taken.seq, true)
    };
    let by = |p: karuta_referee::rules::Player| By::from(p);
    // A hand sweeping at passing speed, the card then driven out by the rival alone.
    let swept = judged(PASS_SWEEP_MM_S + 250.0, by(rival));
    let t = swept.take.as_ref().expect("a take");
    assert_eq!((t.player, t.how), (take.player, TakeHow::Direct));
    let review = swept.needs_review.as_ref().expect("sent to review");
    assert_eq!(review.what, ReviewWhat::CloseCall);
    assert!(
        review.reason.contains("sweeping at 0.90 m/s")
            && review
                .reason
                .contains(&format!("driven by {rival:?}'s hand")),
        "{}",
        review.reason
    );
    // The taker's own hand drove it out, or the touch was slow: the take stands.
    for (sweep, driver) in [
        (PASS_SWEEP_MM_S + 250.0, by(take.player)),
        (PASS_SWEEP_MM_S - 250.0, by(rival)),
    ] {
        let clear = judged(sweep, driver);
        let c = clear.take.as_ref().expect("a take");
        assert_eq!((c.player, c.how), (take.player, TakeHow::Direct));
        assert!(clear.needs_review.is_none(), "{:?}", clear.needs_review);
    }
}
