//! `report.html`: one static page that opens from disk with no network. The match
//! timeline, each player's card count, one panel per ruling with its evidence (strip
//! and a clip stepped with the arrow keys), and post-match analytics. Every string that
//! comes from input is escaped here (`esc`); the page's only script is the clip stepper.

use super::evidence::Evidence;
use super::facts;
use super::plots::{self, Mark, MarkKind, Series, COLOUR_A, COLOUR_B};
use super::ReportInput;
use crate::rules::model::{Player, Ruling, TakeHow};
use std::collections::BTreeMap;
use std::fmt::Write;

/// HTML-escapes text for element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn player_name(input: &ReportInput, p: Player) -> String {
    match input.layout.players.get(&p).map(|i| i.name.trim()) {
        Some(n) if !n.is_empty() && n != format!("Player {p}") => format!("{p} · {n}"),
        _ => format!("Player {p}"),
    }
}

/// A name cut to fit the timeline's lane labels.
fn short(name: &str) -> String {
    const LANE_LABEL_CHARS: usize = 14;
    if name.chars().count() <= LANE_LABEL_CHARS {
        name.to_string()
    } else {
        format!(
            "{}…",
            name.chars().take(LANE_LABEL_CHARS - 1).collect::<String>()
        )
    }
}

fn how(h: TakeHow) -> &'static str {
    match h {
        TakeHow::Direct => "direct touch (17-1)",
        TakeHow::PushOut => "push-out (17-2)",
        TakeHow::Simultaneous => "simultaneous, to the owner (18)",
        TakeHow::Awarded => "awarded",
    }
}

fn how_short(h: TakeHow) -> &'static str {
    match h {
        TakeHow::Direct => "direct",
        TakeHow::PushOut => "push-out",
        TakeHow::Simultaneous => "simultaneous",
        TakeHow::Awarded => "awarded",
    }
}

fn card_where(r: &Ruling) -> String {
    match (r.card.owner, r.card.in_play) {
        (Some(o), true) => format!("in {o}'s territory"),
        (Some(o), false) => format!("{o}'s, not in play"),
        (None, _) => "dead card (karafuda)".to_string(),
    }
}

/// The kami-no-ku with its kimari-ji in bold.
fn poem_line(r: &Ruling) -> String {
    let Some(p) = crate::rules::poems::poem(r.poem) else {
        return String::new();
    };
    let mut left = r.kimariji.chars().filter(|c| !c.is_whitespace()).count();
    let (mut bold, mut rest) = (String::new(), String::new());
    for c in p.kami_kana.chars() {
        if left > 0 {
            bold.push(c);
            if !c.is_whitespace() {
                left -= 1;
            }
        } else {
            rest.push(c);
        }
    }
    format!(
        r#"<p class="poem"><b>{}</b>{} <span class="poet">— {}</span></p>"#,
        esc(&bold),
        esc(&rest),
        esc(&p.poet)
    )
}

const STYLE: &str = r#"
:root{--a:#1f5fbf;--b:#d2691e;--foul:#c62828;--review:#e65100;--ink:#1d232a;--mute:#5f6b76}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans CJK JP","IPAGothic",sans-serif;color:var(--ink);background:#f6f7f9}
header{background:#1d232a;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:22px}
header .sub{color:#c9d1d9;font-size:13px}
.players{display:flex;gap:24px;margin-top:8px;flex-wrap:wrap}
.pl{padding:4px 10px;border-radius:6px;font-weight:600}
.pl.A{background:var(--a)}.pl.B{background:var(--b)}
.result{font-size:16px;margin-top:6px}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid #ddd;padding:6px 24px;z-index:5}
nav a{margin-right:18px;color:var(--ink);text-decoration:none;font-weight:600}
main{padding:12px 24px;max-width:1200px}
section{margin:18px 0}
h2{font-size:18px;border-bottom:2px solid #d0d7de;padding-bottom:4px}
.callout{background:#fff3e0;border-left:5px solid var(--review);padding:8px 14px}
.callout a{color:var(--review);font-weight:600}
.ok{background:#e8f5e9;border-left:5px solid #2e7d32;padding:8px 14px}
figure{margin:8px 0;background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:8px;overflow-x:auto}
figcaption{color:var(--mute);font-size:13px;margin-top:4px}
svg text{font-family:inherit}
svg .tick{font-size:11px;fill:#555}svg .axis{font-size:12px;fill:#333}svg .legend{font-size:12px;fill:#333}
svg .lane{font-size:12px;fill:#333;font-weight:600}svg .bar-label{font-size:10px;fill:#263238}
svg a:hover rect,svg a:hover circle{opacity:.7}
table{border-collapse:collapse;background:#fff;font-size:13px;width:100%}
th,td{border-bottom:1px solid #e1e4e8;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#eef1f4}
tr.rv td{background:#fff3e0}
td a{font-weight:600}
.A{color:var(--a)}.B{color:var(--b)}
.pl.A,.pl.B{color:#fff}
.ruling{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:10px 16px;margin:14px 0}
.ruling.review{border:2px solid var(--review)}
.ruling h3{margin:4px 0;font-size:17px}
.kimariji{font-size:18px;color:#6a1b9a;margin-left:6px}
.badge{background:var(--review);color:#fff;border-radius:4px;padding:1px 6px;font-size:12px;margin-left:8px;vertical-align:middle}
.poem{font-size:16px;margin:2px 0 6px}.poem b{color:#6a1b9a}.poet{color:var(--mute);font-size:13px}
.verdict{font-size:16px;font-weight:600;margin:4px 0}
.why{background:#f6f8fa;border-left:4px solid #6a1b9a;padding:6px 10px;margin:6px 0}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0;font-size:14px}
.facts dt{color:var(--mute)}.facts dd{margin:0}
.needs{color:var(--review);font-weight:600}
.strip img{display:block;max-width:none;height:120px}
.clip{display:inline-block;border:2px solid #d0d7de;border-radius:6px;padding:6px;background:#111;color:#eee;outline:none}
.clip.active{border-color:#6a1b9a}
.clip img{display:block;width:480px;height:360px}
.controls{display:flex;gap:6px;align-items:center;margin-top:4px;font-size:13px}
.controls button{font-size:13px}
.controls input[type=range]{flex:1}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:10px}
.keys{color:var(--mute);font-size:13px}
.missing-note{color:var(--foul);font-weight:600}
"#;

const SCRIPT: &str = r#"
(function(){
  var clips = Array.prototype.slice.call(document.querySelectorAll('.clip'));
  var active = null;
  function activate(c){ if(active) active.classList.remove('active'); active = c; if(c) c.classList.add('active'); }
  clips.forEach(function(c){
    var frames = JSON.parse(c.getAttribute('data-frames'));
    var img = c.querySelector('img'), time = c.querySelector('.clip-time');
    var range = c.querySelector('input[type=range]'), speed = c.querySelector('select');
    var i = 0, timer = null;
    range.max = frames.length - 1;
    function show(k){
      i = Math.max(0, Math.min(frames.length - 1, k));
      img.src = frames[i][0];
      range.value = i;
      var t = frames[i][2];
      time.textContent = 'frame ' + (i + 1) + '/' + frames.length + '  ' + (t >= 0 ? '+' : '') + t.toFixed(1) + ' ms from kimari-ji';
    }
    function stop(){ if(timer){ clearInterval(timer); timer = null; c.querySelector('[data-act=play]').textContent = 'Play'; } }
    function play(){
      if(timer){ stop(); return; }
      if(i >= frames.length - 1) show(0);
      c.querySelector('[data-act=play]').textContent = 'Pause';
      timer = setInterval(function(){ if(i >= frames.length - 1) stop(); else show(i + 1); }, 1000 / Number(speed.value));
    }
    c.step = function(d){ stop(); show(i + d); };
    c.play = play;
    c.addEventListener('click', function(e){
      activate(c);
      var act = e.target.getAttribute('data-act');
      if(act === 'prev') c.step(-1); else if(act === 'next') c.step(1); else if(act === 'play') play();
    });
    c.addEventListener('focus', function(){ activate(c); });
    range.addEventListener('input', function(){ stop(); show(Number(range.value)); });
    speed.addEventListener('change', function(){ if(timer){ stop(); play(); } });
    show(Number(c.getAttribute('data-start')) || 0);
  });
  // Every image must load from beside the page; a missing one is said on the page and
  // in the console (the offline test reads both).
  var imgs = Array.prototype.slice.call(document.querySelectorAll('img'));
  var pending = imgs.length, failed = 0;
  function settle(img, ok){
    if(!ok){
      failed++;
      img.classList.add('missing');
      console.error('failed to load ' + img.getAttribute('src'));
      var n = document.createElement('p');
      n.className = 'missing-note';
      n.textContent = 'Evidence file missing: ' + img.getAttribute('src') + ' (keep the evidence folder beside report.html)';
      img.parentNode.insertBefore(n, img.nextSibling);
    }
    pending--;
    if(pending === 0) document.body.setAttribute('data-images', (imgs.length - failed) + '/' + imgs.length);
  }
  if(pending === 0) document.body.setAttribute('data-images', '0/0');
  imgs.forEach(function(img){
    if(img.complete) settle(img, img.naturalWidth > 0);
    else {
      img.addEventListener('load', function(){ settle(img, true); }, {once: true});
      img.addEventListener('error', function(){ settle(img, false); }, {once: true});
    }
  });
  function fromHash(){
    var el = document.getElementById(location.hash.slice(1));
    if(el){ var c = el.querySelector('.clip'); if(c) activate(c); }
  }
  window.addEventListener('hashchange', fromHash); fromHash();
  document.addEventListener('keydown', function(e){
    if(!active || e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
    if(e.key === 'ArrowLeft'){ active.step(-1); e.preventDefault(); }
    else if(e.key === 'ArrowRight'){ active.step(1); e.preventDefault(); }
    else if(e.key === ' '){ active.play(); e.preventDefault(); }
  });
})();
"#;

fn summary_of_take(r: &Ruling, input: &ReportInput) -> String {
    match &r.take {
        Some(t) => format!(
            "{} takes — {} at {:.3} s ({:+.1} ms after the kimari-ji)",
            player_name(input, t.player),
            how(t.how),
            t.t_s,
            (t.t_s - r.decided_s) * 1000.0
        ),
        None => "Nobody takes the card".to_string(),
    }
}

fn fouls_text(r: &Ruling) -> String {
    if r.fouls.is_empty() {
        return "none".into();
    }
    r.fouls
        .iter()
        .map(|f| {
            format!(
                "{} {}{} at {:.3} s{}",
                f.player,
                facts::foul_name(f.kind),
                if f.count > 1 {
                    format!(" ×{}", f.count)
                } else {
                    String::new()
                },
                f.t_s,
                if f.cancelled {
                    " (cancelled, 25-4)"
                } else {
                    ""
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn sends_text(r: &Ruling) -> String {
    let owed: Vec<String> = r
        .sends
        .owed
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(p, n)| format!("{p} sends {n}"))
        .collect();
    let done: Vec<String> = r
        .sends
        .done
        .iter()
        .map(|d| format!("{} sent {} at {:.3} s", d.from, d.poem, d.t_s))
        .collect();
    match (owed.is_empty(), done.is_empty()) {
        (true, true) => "none".into(),
        _ => format!(
            "{}{}{}",
            owed.join(", "),
            if owed.is_empty() || done.is_empty() {
                ""
            } else {
                "; "
            },
            done.join(", ")
        ),
    }
}

fn ruling_panel(s: &mut String, input: &ReportInput, r: &Ruling, ev: Option<&Evidence>) {
    let review = r.needs_review.is_some();
    let _ = write!(
        s,
        r#"<article class="ruling{}" id="ruling-{}" data-seq="{}"><h3>Reading {} · poem {} <span class="kimariji">{}</span>{}</h3>"#,
        if review { " review" } else { "" },
        r.seq,
        r.seq,
        r.seq,
        r.poem,
        esc(&r.kimariji),
        if review {
            r#"<span class="badge">needs review</span>"#
        } else {
            ""
        }
    );
    s.push_str(&poem_line(r));
    let _ = write!(
        s,
        r#"<div class="verdict">{}</div>"#,
        esc(&summary_of_take(r, input))
    );
    let _ = write!(s, r#"<p class="why">{}</p><dl class="facts">"#, esc(&r.why));
    let mut fact = |k: &str, v: String| {
        let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", esc(k), v);
    };
    fact("Card", esc(&card_where(r)));
    fact(
        "Kimari-ji moment",
        esc(&format!(
            "{:.3} s{}",
            r.decided_s,
            if r.decided_estimated {
                " (estimated from the reader's tempo)"
            } else {
                ""
            }
        )),
    );
    fact("Articles", esc(&r.articles.join(", ")));
    fact(
        "Margin",
        esc(&r.take.as_ref().map_or("—".to_string(), |t| {
            t.margin_ms
                .map_or("— (no rival touch to compare)".to_string(), |m| {
                    format!("{m:.1} ms")
                })
        })),
    );
    fact("Confidence", esc(&format!("{:.0} %", r.confidence * 100.0)));
    fact(
        "Needs review",
        match &r.needs_review {
            Some(n) => format!(
                r#"<span class="needs">{} ({})</span>"#,
                esc(&n.reason),
                esc(&format!("{:?}", n.what).to_lowercase())
            ),
            None => "no".into(),
        },
    );
    fact("Fouls", esc(&fouls_text(r)));
    fact("Sends", esc(&sends_text(r)));
    fact(
        "Cards after",
        esc(&r
            .cards_after
            .iter()
            .map(|(p, n)| format!("{p} {n}"))
            .collect::<Vec<_>>()
            .join(" · ")),
    );
    s.push_str("</dl>");
    match ev {
        Some(e) => {
            let _ = write!(
                s,
                r#"<figure class="strip evidence-strip" data-seq="{}"><img src="{}" alt="{}"><figcaption>Every second frame around the deciding moment ({}, red frame {}), times in ms from the kimari-ji moment: {}. Green: playing-area lines; yellow: card {}; white: other cards where they lay; hands in the player's colour, red rings: contact.</figcaption></figure>"#,
                r.seq,
                esc(&e.strip),
                esc(&format!("Evidence strip of reading {}", r.seq)),
                esc(&e.focus),
                e.deciding_frame,
                esc(&e
                    .strip_frames
                    .iter()
                    .map(|(_, t)| format!("{t:+.1}"))
                    .collect::<Vec<_>>()
                    .join(", ")),
                e.focus_poem.map_or("?".into(), |p| p.to_string())
            );
            if !e.clip.is_empty() {
                let frames: Vec<(String, u64, f64)> = e
                    .clip
                    .iter()
                    .map(|c| (c.file.clone(), c.frame, (c.t_ms * 10.0).round() / 10.0))
                    .collect();
                let start = e
                    .clip
                    .iter()
                    .position(|c| c.frame >= e.deciding_frame)
                    .unwrap_or(0);
                let json = serde_json::to_string(&frames).unwrap_or_else(|_| "[]".into());
                let _ = write!(
                    s,
                    r#"<div class="clip" tabindex="0" data-seq="{}" data-start="{}" data-frames="{}"><img src="{}" alt="{}"><div class="controls"><button data-act="prev">◀ frame</button><button data-act="play">Play</button><button data-act="next">frame ▶</button><select title="playback frames per second"><option value="4">4 fps</option><option value="10" selected>10 fps</option><option value="24">24 fps</option></select><input type="range" min="0" value="0"><span class="clip-time"></span></div></div><p class="keys">Click the clip, then ← / → step one frame, space plays; frames are from the video at its own rate, played slowly.</p>"#,
                    r.seq,
                    start,
                    esc(&json),
                    esc(&e.clip[start].file),
                    esc(&format!("Slow-motion clip of reading {}", r.seq))
                );
            }
        }
        None => s.push_str(r#"<p class="keys">No video evidence (no video given).</p>"#),
    }
    s.push_str("</article>");
}

fn mean(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// The whole page.
pub fn render(input: &ReportInput, evidence: &[Evidence]) -> String {
    let ev: BTreeMap<u32, &Evidence> = evidence.iter().map(|e| (e.seq, e)).collect();
    let names = [player_name(input, Player::A), player_name(input, Player::B)];
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>{}</title><style>{STYLE}</style></head><body>"#,
        esc(&format!("Match review — {}", input.title))
    );
    let video_name = input
        .video
        .as_ref()
        .and_then(|v| v.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "no video".into());
    let _ = write!(
        s,
        r#"<header><h1>Match review — {}</h1><div class="sub">video: <span id="video-name">{}</span> · {} readings · {} rulings</div><div class="players"><span class="pl A" id="player-A">{}</span><span class="pl B" id="player-B">{}</span></div><div class="result">{}</div></header>"#,
        esc(&input.title),
        esc(&video_name),
        input.readings.len(),
        input.rulings.len(),
        esc(&names[0]),
        esc(&names[1]),
        esc(&match &input.result {
            Some(r) => format!(
                "Result: {} · cards left A {} · B {}",
                r.winner.map_or(
                    "no winner yet (the recording ends first)".to_string(),
                    |w| format!("{} wins", names[w.index()])
                ),
                r.cards.get(&Player::A).copied().unwrap_or(0),
                r.cards.get(&Player::B).copied().unwrap_or(0)
            ),
            None => "Result: not given".into(),
        })
    );
    s.push_str(r##"<nav><a href="#review">To review</a><a href="#timeline">Timeline</a><a href="#rulings-table">Rulings</a><a href="#analytics">Analytics</a></nav><main>"##);

    // What an official needs first: the rulings the camera could not settle.
    let review: Vec<&Ruling> = input
        .rulings
        .iter()
        .filter(|r| r.needs_review.is_some())
        .collect();
    s.push_str(r#"<section id="review"><h2>To review</h2>"#);
    if review.is_empty() {
        s.push_str(r#"<div class="ok">Every ruling was made with confidence; none is flagged for review.</div>"#);
    } else {
        s.push_str(r#"<div class="callout"><ul>"#);
        for r in &review {
            let _ = write!(
                s,
                r##"<li><a href="#ruling-{}">Reading {} (poem {})</a>: {}</li>"##,
                r.seq,
                r.seq,
                r.poem,
                esc(r.needs_review.as_ref().map_or("", |n| n.reason.as_str()))
            );
        }
        s.push_str("</ul></div>");
    }
    s.push_str("</section>");

    // Timeline.
    let mut marks = Vec::new();
    let mut end_s: f64 = 0.0;
    for (i, rd) in input.readings.iter().enumerate() {
        let Some(r) = input.rulings.iter().find(|r| r.seq == rd.seq) else {
            continue;
        };
        let next = input.readings.get(i + 1).map(|n| n.kami_start_s);
        let end = rd
            .shimo_start_s
            .or(rd.kami_end_s)
            .or(next)
            .unwrap_or(r.decided_s + 1.0);
        end_s = end_s.max(end);
        marks.push(Mark {
            t_s: rd.kami_start_s,
            lane: 0,
            kind: MarkKind::Reading {
                end_s: end,
                decided_s: r.decided_s,
                review: r.needs_review.is_some(),
                label: format!("{}", r.poem),
            },
            title: format!(
                "Reading {}: poem {} {} — kimari-ji complete at {:.3} s",
                r.seq, r.poem, r.kimariji, r.decided_s
            ),
            seq: r.seq,
        });
        if let Some(t) = &r.take {
            marks.push(Mark {
                t_s: t.t_s,
                lane: 1 + t.player.index(),
                kind: MarkKind::Take,
                title: format!(
                    "Reading {}: {} takes {} ({})",
                    r.seq,
                    t.player,
                    r.poem,
                    how(t.how)
                ),
                seq: r.seq,
            });
            end_s = end_s.max(t.t_s);
        }
        for f in &r.fouls {
            marks.push(Mark {
                t_s: f.t_s,
                lane: 1 + f.player.index(),
                kind: MarkKind::Foul,
                title: format!(
                    "Reading {}: foul by {}: {}",
                    r.seq,
                    f.player,
                    facts::foul_name(f.kind)
                ),
                seq: r.seq,
            });
        }
        for d in &r.sends.done {
            marks.push(Mark {
                t_s: d.t_s,
                lane: 1 + d.from.index(),
                kind: MarkKind::Send,
                title: format!("Reading {}: {} sends {}", r.seq, d.from, d.poem),
                seq: r.seq,
            });
            end_s = end_s.max(d.t_s);
        }
    }
    let _ = write!(
        s,
        r#"<section id="timeline"><h2>Match timeline</h2><figure id="fig-timeline">{}<figcaption>Grey bars: each reading from the start of the kami-no-ku to the shimo-no-ku (orange: needs review), labelled with the poem; purple line: the kimari-ji moment. Dots: takes; red crosses: fouls; triangles: cards sent. Click any mark to open its ruling.</figcaption></figure>"#,
        plots::timeline(
            "plot-timeline",
            &marks,
            end_s + 0.5,
            ["Readings", &short(&names[0]), &short(&names[1])]
        )
    );
    let counts = facts::card_counts(&input.layout, &input.rulings);
    let xs: Vec<u32> = counts.iter().map(|c| c.0).collect();
    let _ = write!(
        s,
        r#"<figure id="fig-card-count">{}<figcaption>Cards each player still has on the field after every reading (0: before the first). The first to reach 0 wins.</figcaption></figure></section>"#,
        plots::step_chart(
            "plot-card-count",
            &xs,
            &[
                Series {
                    name: names[0].clone(),
                    colour: COLOUR_A,
                    values: counts.iter().map(|c| Some(c.1[0] as f64)).collect()
                },
                Series {
                    name: names[1].clone(),
                    colour: COLOUR_B,
                    values: counts.iter().map(|c| Some(c.1[1] as f64)).collect()
                },
            ],
            "reading",
            "cards on the field"
        )
    );

    // The table of rulings.
    s.push_str(r#"<section id="rulings-table"><h2>Rulings</h2><table><thead><tr><th>#</th><th>Poem</th><th>Kimari-ji</th><th>Card</th><th>Take</th><th>Margin</th><th>Fouls</th><th>Sends owed</th><th>Cards A–B</th><th>Conf.</th><th>Review</th></tr></thead><tbody>"#);
    for r in &input.rulings {
        let _ = write!(
            s,
            r##"<tr{}><td><a href="#ruling-{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0} %</td><td>{}</td></tr>"##,
            if r.needs_review.is_some() {
                r#" class="rv""#
            } else {
                ""
            },
            r.seq,
            r.seq,
            r.poem,
            esc(&r.kimariji),
            esc(&card_where(r)),
            esc(&r.take.as_ref().map_or("—".into(), |t| format!(
                "{} · {}",
                t.player,
                how_short(t.how)
            ))),
            esc(&r
                .take
                .as_ref()
                .and_then(|t| t.margin_ms)
                .map_or("—".into(), |m| format!("{m:.1} ms"))),
            esc(&if r.fouls.is_empty() {
                "—".to_string()
            } else {
                r.fouls
                    .iter()
                    .map(|f| {
                        format!(
                            "{} {}{}",
                            f.player,
                            facts::foul_name(f.kind),
                            if f.cancelled { " (cancelled)" } else { "" }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
            esc(&{
                let o: Vec<String> = r
                    .sends
                    .owed
                    .iter()
                    .filter(|(_, n)| **n > 0)
                    .map(|(p, n)| format!("{p}: {n}"))
                    .collect();
                if o.is_empty() {
                    "—".into()
                } else {
                    o.join(", ")
                }
            }),
            esc(&format!(
                "{}–{}",
                r.cards_after.get(&Player::A).copied().unwrap_or(0),
                r.cards_after.get(&Player::B).copied().unwrap_or(0)
            )),
            r.confidence * 100.0,
            esc(r.needs_review.as_ref().map_or("", |n| n.reason.as_str()))
        );
    }
    s.push_str("</tbody></table></section>");

    s.push_str(r#"<section id="rulings"><h2>Each ruling with its evidence</h2>"#);
    for r in &input.rulings {
        ruling_panel(&mut s, input, r, ev.get(&r.seq).copied());
    }
    s.push_str("</section>");

    // Post-match analytics.
    let reactions = facts::reactions(
        &input.layout,
        &input.readings,
        &input.events,
        &input.rulings,
    );
    let seqs: Vec<u32> = {
        let mut v: Vec<u32> = reactions.iter().map(|r| r.seq).collect();
        v.dedup();
        v
    };
    let per_card = |p: Player| -> Vec<Option<f64>> {
        seqs.iter()
            .map(|q| {
                reactions
                    .iter()
                    .find(|r| r.seq == *q && r.player == p)
                    .map(|r| r.reaction_ms)
            })
            .collect()
    };
    let groups: Vec<String> = seqs
        .iter()
        .map(|q| {
            let poem = reactions.iter().find(|r| r.seq == *q).map_or(0, |r| r.poem);
            format!("#{q} ({poem})")
        })
        .collect();
    let lens: Vec<usize> = {
        let mut v: Vec<usize> = reactions.iter().map(|r| r.kimariji_len).collect();
        v.sort();
        v.dedup();
        v
    };
    let per_len = |p: Player| -> Vec<Option<f64>> {
        lens.iter()
            .map(|l| {
                let v: Vec<f64> = reactions
                    .iter()
                    .filter(|r| r.player == p && r.kimariji_len == *l)
                    .map(|r| r.reaction_ms)
                    .collect();
                mean(&v)
            })
            .collect()
    };
    let len_groups: Vec<String> = lens
        .iter()
        .map(|l| {
            let n = reactions
                .iter()
                .filter(|r| r.kimariji_len == *l)
                .map(|r| r.seq)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            format!("{l} kana (n={n})")
        })
        .collect();
    let takes = facts::takes_by_territory(&input.rulings);
    let (fouls, cancelled) = facts::fouls_by_kind(&input.rulings);
    let foul_groups: Vec<String> = facts::FOUL_KINDS
        .iter()
        .map(|k| facts::foul_name(*k).to_string())
        .collect();
    let foul_series = |p: Player| -> Vec<Option<f64>> {
        (0..facts::FOUL_KINDS.len())
            .map(|k| Some(fouls.get(&(p, k)).copied().unwrap_or(0) as f64))
            .collect()
    };
    let two = |f: &dyn Fn(Player) -> Vec<Option<f64>>| {
        vec![
            Series {
                name: names[0].clone(),
                colour: COLOUR_A,
                values: f(Player::A),
            },
            Series {
                name: names[1].clone(),
                colour: COLOUR_B,
                values: f(Player::B),
            },
        ]
    };
    let _ = write!(
        s,
        r#"<section id="analytics"><h2>Post-match analytics</h2><figure id="fig-reaction-card">{}<figcaption>Reaction time per reading: from the kimari-ji moment to the player's first touch of the read card (or of a card beside it in its territory, as a push-out starts). Negative: the hand was down before the kimari-ji was complete. Dead cards are left out.</figcaption></figure><div class="grid2"><figure id="fig-reaction-length">{}<figcaption>Mean reaction time by the kimari-ji's length in kana (n: readings).</figcaption></figure><figure id="fig-territory">{}<figcaption>Takes of a card in the player's own territory and in the opponent's.</figcaption></figure><figure id="fig-fouls">{}<figcaption>Fouls by kind ({} of them cancelled against the opponent's under 25-4).</figcaption></figure></div></section>"#,
        plots::bar_chart(
            "plot-reaction-card",
            &groups,
            &two(&per_card),
            "reaction, ms"
        ),
        plots::bar_chart(
            "plot-reaction-length",
            &len_groups,
            &two(&per_len),
            "mean reaction, ms"
        ),
        plots::bar_chart(
            "plot-territory",
            &[
                "own territory".to_string(),
                "opponent's territory".to_string()
            ],
            &two(&|p| {
                let (o, t) = takes.get(&p).copied().unwrap_or((0, 0));
                vec![Some(o as f64), Some(t as f64)]
            }),
            "takes"
        ),
        plots::bar_chart("plot-fouls", &foul_groups, &two(&foul_series), "fouls"),
        cancelled
    );
    let _ = write!(s, "</main><script>{SCRIPT}</script></body></html>");
    s
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<script>alert("1")</script>&'"#),
            "&lt;script&gt;alert(&quot;1&quot;)&lt;/script&gt;&amp;&#39;"
        );
    }
}
